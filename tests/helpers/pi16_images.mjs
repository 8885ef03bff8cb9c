// Sends each case through pi 1.6's own pi-ai image generation (`generateImages` of the
// `openrouter-images` api, as `Models.generateImages()` reaches it), all in this one process, to the
// base URL given: the image parity tests compare what the fake server recorded, and what pi read
// from its answer, with tau's.
//
// stdin: {"piAi": "<pi-ai package dir>", "baseUrl": "...", "apiKey": "...",
//         "cases": [{"case": "...", "provider": "openrouter", "id": "...", "input": [blocks]}]}
// A case may carry its own "apiKey" ("" for none). Each request carries "x-parity-case".
// stdout: {"<case>": {api, provider, model, output, stopReason, errorMessage, usage, responseId}}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const input = JSON.parse(readFileSync(0, "utf8"));
const dist = (path) => pathToFileURL(`${input.piAi}/dist/${path}`).href;
const { IMAGE_MODELS } = await import(dist("models.generated.js"));
const { generateImages } = await import(dist("images.js"));

const results = {};
for (const item of input.cases) {
	const model = { ...IMAGE_MODELS[item.provider][item.id], baseUrl: input.baseUrl };
	const apiKey = item.apiKey ?? input.apiKey;
	const options = { apiKey: apiKey || undefined, headers: { "x-parity-case": item.case }, maxRetries: 0 };
	const { timestamp, ...result } = await generateImages(model, { input: item.input }, options);
	results[item.case] = result;
}
process.stdout.write(JSON.stringify(results));

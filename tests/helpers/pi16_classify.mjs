// Sends each case through pi 1.6's own pi-ai System One classification (the `classify` of the
// `typesafe-system-one`, `cloudflare-workers-ai-system-one` and `openai-decisions` api modules, which `Models.classify()`
// reaches), all in this one process, to the base URL given: the classifier parity tests compare what
// the fake server recorded, and what pi read from its answer, with tau's.
//
// stdin: {"piAi": "<pi-ai package dir>", "baseUrl": "...", "apiKey": "...",
//         "cases": [{"case": "...", "provider": "...", "id": "...", "context": {...}}]}
// A case may carry its own "apiKey" ("" for none), its own "model" (a whole classifier model, as a
// custom provider's, instead of the catalogue's "provider"/"id"), and a "temperature".
// Each request carries "x-parity-case".
// stdout: {"<case>": {api, provider, model, answers, usage, stopReason, errorMessage}}
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const input = JSON.parse(readFileSync(0, "utf8"));
const dist = (path) => pathToFileURL(`${input.piAi}/dist/${path}`).href;
const { CLASSIFIER_MODELS } = await import(dist("models.generated.js"));
const apis = {
	"typesafe-system-one": (await import(dist("api/typesafe-system-one.js"))).classify,
	"cloudflare-workers-ai-system-one": (await import(dist("api/cloudflare-workers-ai-system-one.js"))).classify,
	"openai-decisions": (await import(dist("api/openai-decisions.js"))).classify,
	"llama-cpp-classify": (await import(dist("api/llama-cpp-classify.js"))).classify,
};

const results = {};
for (const item of input.cases) {
	const model = { ...(item.model ?? CLASSIFIER_MODELS[item.provider][item.id]), baseUrl: input.baseUrl };
	const apiKey = item.apiKey ?? input.apiKey;
	const options = { apiKey: apiKey || undefined, headers: { "x-parity-case": item.case }, maxRetries: 0 };
	if (item.temperature !== undefined) options.temperature = item.temperature;
	const { timestamp, ...result } = await apis[model.api](model, item.context, options);
	results[item.case] = result;
}
process.stdout.write(JSON.stringify(results));

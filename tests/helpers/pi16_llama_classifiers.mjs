// Lists a llama.cpp router's catalogue as pi 1.6's own built-in llama.cpp provider does (its
// `createLlamaProvider().setCatalog`): the classifier models, for the llama.cpp classifier tests.
//
// stdin: {"piCodingAgent": "<pi-coding-agent package dir>", "serverUrl": "...", "catalog": [<GET /models data>]}
// stdout: [<classifier model JSON>, ...]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const input = JSON.parse(readFileSync(0, "utf8"));
const module = pathToFileURL(`${input.piCodingAgent}/dist/extensions/llama/provider.js`).href;
const { createLlamaProvider } = await import(module);
const { provider, setCatalog } = createLlamaProvider();
setCatalog(input.catalog, input.serverUrl);
process.stdout.write(JSON.stringify(provider.getAllModels().filter((model) => model.type === "classifier")));

// Sends one request per case through pi 1.6's own pi-ai (`streamSimple` of the case's API), all in
// this one process, to the base URL given: the parity tests compare what the fake server recorded
// with the requests tau builds for the same models, levels and context.
//
// stdin: {"piAi": "<pi-ai package dir>", "baseUrl": "...", "apiKey": "...", "context": {...},
//         "options": {...}, "cases": [{"case": "...", "provider": "...", "id": "...", "reasoning": "high" | null}]}
// A case may also carry its own "baseUrl", "apiKey", "context" (instead of the shared one; pi
// transcript messages, system messages included), "options" (merged over the shared ones) and
// "compat" (merged over the model's, as a models.json override would), and "then" (later contexts
// of the same session, sent in order after the first).
// stdout: {"levels": {"<provider>/<id>": [...]}, "errors": {"<case>": "message"}, "results": {...}}
// "results" holds each case's answer as pi read it ({stopReason, errorMessage, content, usage,
// responseId, responseModel, providerThinkingLevel}), with "withResults": true only.
// With "levelsOnly": true no request is sent; only each model's supported levels are listed.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const input = JSON.parse(readFileSync(0, "utf8"));
const dist = (path) => pathToFileURL(`${input.piAi}/dist/${path}`).href;
const { MODELS } = await import(dist("models.generated.js"));
const { getSupportedThinkingLevels } = await import(dist("models.js"));
const { normalizeContext } = await import(dist("utils/transcript.js"));

const apis = new Map();
async function streamSimpleOf(api) {
	if (!apis.has(api)) apis.set(api, (await import(dist(`api/${api}.js`))).streamSimple);
	return apis.get(api);
}

const levels = {};
for (const request of input.models ?? []) {
	const model = MODELS[request.provider]?.[request.id];
	levels[`${request.provider}/${request.id}`] = model ? getSupportedThinkingLevels(model) : null;
}

const errors = {};
const results = {};
async function run(item) {
	const model = MODELS[item.provider]?.[item.id];
	if (!model) {
		errors[item.case] = "not in pi's catalogue";
		return;
	}
	const streamSimple = await streamSimpleOf(model.api);
	const shared = { ...input.options, ...(item.options ?? {}) };
	const options = {
		...shared,
		apiKey: item.apiKey ?? input.apiKey,
		headers: { ...(shared.headers ?? {}), "x-parity-case": item.case },
		maxRetries: 0,
	};
	if (item.reasoning) options.reasoning = item.reasoning;
	// As pi's agent does: the system prompt and tools become the transcript's leading system message.
	const given = item.context ?? input.context;
	const context = normalizeContext({ ...given, messages: given.messages.map((m) => ({ ...m })) });
	const compat = item.compat ? { ...(model.compat ?? {}), ...item.compat } : model.compat;
	const routed = { ...model, baseUrl: item.baseUrl ?? input.baseUrl, compat };
	const result = await streamSimple(routed, context, options).result();
	if (result.stopReason === "error") errors[item.case] = result.errorMessage;
	if (input.withResults) {
		const { stopReason, errorMessage, content, usage, responseId, responseModel, providerThinkingLevel } = result;
		const read = { usage, responseId: responseId ?? null, responseModel: responseModel ?? null };
		const level = providerThinkingLevel ?? null;
		results[item.case] = { stopReason, errorMessage: errorMessage ?? null, content, ...read, providerThinkingLevel: level };
	}
	// "then": later contexts of the same session, sent one after another (each request carries
	// "x-parity-step": 1, 2, ...), for what a session's earlier requests change (message threads).
	for (const [index, later] of (item.then ?? []).entries()) {
		const next = normalizeContext({ ...later, messages: later.messages.map((m) => ({ ...m })) });
		const stepOptions = { ...options, headers: { ...options.headers, "x-parity-step": String(index + 1) } };
		const stepResult = await streamSimple(routed, next, stepOptions).result();
		if (stepResult.stopReason === "error") errors[`${item.case} step ${index + 1}`] = stepResult.errorMessage;
	}
}

const queue = [...(input.levelsOnly ? [] : input.cases)];
const workers = Array.from({ length: 16 }, async () => {
	while (queue.length > 0) {
		const item = queue.shift();
		try {
			await run(item);
		} catch (error) {
			errors[item.case] = String(error?.stack ?? error);
		}
	}
});
await Promise.all(workers);
process.stdout.write(JSON.stringify({ levels, errors, results }));

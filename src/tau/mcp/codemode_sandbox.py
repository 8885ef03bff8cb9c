"""A codemode script in a QuickJS sandbox (the ``quickjs`` package, ``tau[codemode]``).

The script runs on its own thread. It never calls into Python: QuickJS refuses callables while a
time limit is set, so a host call (``tools.*``, ``searchTools()``, ...) is a promise whose request
the thread collects after the script's pending jobs ran. The thread hands each request to the
agent's event loop (``request`` returns a ``concurrent.futures.Future``), waits for the first one to
finish, settles its promise and runs the jobs again: calls started together run in parallel.
A deadline (``timeout_ms``; none by default, as pi) is wall time (the wait for results) and,
inside QuickJS, CPU time (a busy loop). QuickJS here cannot be interrupted from outside once a
stretch of JavaScript runs, so without a deadline each stretch between host calls still gets
:data:`RUNAWAY_CPU_S` of CPU time: an aborted busy loop does not burn a core for ever.
"""

from __future__ import annotations

import concurrent.futures
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from msgspec import Struct, field

from tau.errors import TauError

__all__ = ["MEMORY_LIMIT", "RUNAWAY_CPU_S", "SandboxScript", "ScriptOutcome"]

MEMORY_LIMIT = 256 * 1024 * 1024
RUNAWAY_CPU_S = 120.0
"""CPU seconds one stretch of JavaScript between host calls may take when the script has no deadline."""

Request = Callable[[str, str, str], "concurrent.futures.Future[str]"]
"""(kind, name, JSON payload) -> a future of the JSON value the promise resolves to."""

_PRELUDE = r"""
(() => {
  const pending = new Map();
  const requests = [];
  const output = [];
  const consoleLines = [];
  let next = 0;
  const show = (value) => typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? String(value));
  const request = (kind, name, payload) => new Promise((resolve, reject) => {
    const id = ++next;
    pending.set(id, { resolve, reject });
    requests.push([id, kind, name, JSON.stringify(payload === undefined ? null : payload)]);
  });
  const EXIT = {};
  // pi's output limits: past them the script has failed (catching the error changes nothing)
  let outputChars = 0, outputItems = 0;
  const counted = (data) => {
    if (__host.state.done) return false;
    outputChars += data.length; outputItems++;
    if (outputChars > 16777216 || outputItems > 100000) {
      const error = new RangeError(
        "script output exceeded the limit of 16777216 characters or 100000 text(), image(), and console calls. " +
        "Print a summary instead, or write large data to a file with a tool.");
      __host.fail(error);
      throw error;
    }
    return true;
  };
  globalThis.text = (value) => { const shown = show(value); if (counted(shown)) output.push({ type: "text", text: shown }); };
  globalThis.image = (value) => {
    let data, mimeType;
    if (typeof value === "string") value = { image_url: value };
    if (value && typeof value.image_url === "string") {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(value.image_url);
      if (!match) throw new Error("image(): only base64 data: URLs are supported");
      [, mimeType, data] = match;
    } else if (value && value.type === "image" && typeof value.data === "string") {
      data = value.data; mimeType = value.mimeType || "image/png";
    } else {
      throw new Error("image() takes a data: URL, an { image_url } object or an image block");
    }
    if (counted(data)) output.push({ type: "image", data, mimeType });
  };
  const log = (...values) => { const line = values.map(show).join(" "); if (counted(line)) consoleLines.push(line); };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  globalThis.exit = () => { throw EXIT; };
  // store()/load(): JSON values kept across scripts; only a successful script's writes are kept
  const stored = globalThis.__stored ?? {};
  const writes = { set: {}, delete: new Set() };
  globalThis.store = (key, value) => {
    if (typeof key !== "string") throw new TypeError("store() takes a string key");
    if (value === undefined) {
      delete stored[key]; delete writes.set[key]; writes.delete.add(key);
      return;
    }
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError("store() takes a JSON value");
    if (json.length > 262144) throw new RangeError("store(): a value may have at most 262144 characters of JSON");
    const others = Object.entries(stored).filter(([k]) => k !== key);
    const total = others.reduce((sum, [, v]) => sum + JSON.stringify(v).length, json.length);
    if (total > 1048576) throw new RangeError("store(): all values together may have at most 1048576 characters of JSON");
    stored[key] = JSON.parse(json); writes.set[key] = JSON.parse(json); writes.delete.delete(key);
  };
  globalThis.load = (key) => key in stored ? JSON.parse(JSON.stringify(stored[key])) : undefined;
  globalThis.searchTools = (query, options) => request("searchTools", "", { query, ...(options || {}) });
  globalThis.describeTool = (name) => request("describeTool", "", { name });
  globalThis.describeNamespace = (name) => request("describeNamespace", "", { name });
  globalThis.models = {
    getModelsOfType: (type, provider) => request("models", "getModelsOfType", { type, provider }),
    getAvailableOfType: (type, provider) => request("models", "getAvailableOfType", { type, provider }),
    getModelOfType: (type, provider, id) => request("models", "getModelOfType", { type, provider, id }),
    classify: (model, context) => request("models", "classify", { model, context }),
    generateImages: (model, context) => request("models", "generateImages", { model, context }),
  };
  globalThis.tools = new Proxy({}, {
    // neither thenable nor JSON-able: `await tools` or `text(tools)` must not call tools named so
    get: (_, name) => typeof name === "string" && name !== "then" && name !== "toJSON"
      ? (args) => request("call", name, args ?? {})
      : undefined,
  });
  globalThis.__host = {
    state: { done: false },
    take: () => JSON.stringify(requests.splice(0)),
    settle: (id, ok, payload) => {
      const entry = pending.get(id);
      if (!entry) return;
      pending.delete(id);
      if (ok) entry.resolve(payload === "undefined" ? undefined : JSON.parse(payload));
      else entry.reject(new Error(payload));
    },
    finish: (value) => { if (__host.state.done) return; __host.state = { done: true, ok: true, value: value === undefined ? null : show(value) }; },
    fail: (error) => {
      if (__host.state.done) return;
      if (error === EXIT) { __host.state = { done: true, ok: true, value: null }; return; }
      const message = error instanceof Error ? `${error.name}: ${error.message}` : show(error);
      __host.state = { done: true, ok: false, error: message };
    },
    output: () => JSON.stringify({
      output, console: consoleLines, writes: { set: writes.set, delete: [...writes.delete] },
    }),
  };
})();
"""


class ScriptOutcome(Struct):
    ok: bool
    output: list[dict[str, Any]] = field(default_factory=list)
    """Text and image items in the order the script added them (a returned value last)."""
    console: list[str] = field(default_factory=list)
    error: str = ""
    store_writes: dict[str, Any] = field(default_factory=dict)
    """``{set, delete}``: what the script's ``store()`` calls changed."""


class _Stop(TauError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class SandboxScript:
    """One script: ``run`` on a worker thread, ``abort`` from any thread."""

    def __init__(
        self,
        code: str,
        request: Request,
        *,
        timeout_s: float | None,
        globals_json: dict[str, str],
        runaway_cpu_s: float = RUNAWAY_CPU_S,
    ) -> None:
        self.code = code
        self.request = request
        self.timeout_s = timeout_s
        self.runaway_cpu_s = runaway_cpu_s
        self.globals_json = globals_json
        self._finished: queue.Queue[int | None] = queue.Queue()
        self._aborted = threading.Event()
        self._inflight: dict[int, concurrent.futures.Future[str]] = {}

    def abort(self) -> None:
        self._aborted.set()
        self._finished.put(None)

    def run(self) -> ScriptOutcome:
        import quickjs  # type: ignore[import-untyped]

        deadline = None if self.timeout_s is None else time.monotonic() + self.timeout_s
        context = quickjs.Context()
        context.set_memory_limit(MEMORY_LIMIT)
        try:
            try:
                for name, value in self.globals_json.items():
                    self._eval(context, f"globalThis.{name} = {value};", deadline)
                self._eval(context, _PRELUDE, deadline)
                self._eval(
                    context,
                    f"(async () => {{\n{self.code}\n}})().then(__host.finish, __host.fail);",
                    deadline,
                )
                state = self._drive(context, deadline)
            except _Stop as stop:
                state = {"ok": False, "error": stop.message}
            except quickjs.JSException as error:
                state = {"ok": False, "error": self._describe(str(error), deadline)}
            outcome = ScriptOutcome(bool(state.get("ok")), error=str(state.get("error", "")))
            try:
                produced = json.loads(context.eval("__host.output()"))
                outcome.output, outcome.console = produced["output"], produced["console"]
                outcome.store_writes = produced["writes"]
            except quickjs.JSException:
                pass  # out of memory: the partial output is lost with the VM
            if outcome.ok and state.get("value") is not None:
                outcome.output.append({"type": "text", "text": state["value"]})
            return outcome
        finally:
            for future in self._inflight.values():
                future.cancel()  # calls still running when the script ends are cancelled

    def _notifier(self, call_id: int) -> Callable[[concurrent.futures.Future[str]], None]:
        return lambda _future: self._finished.put(call_id)

    def _describe(self, error: str, deadline: float | None) -> str:
        first = error.strip().splitlines()[0] if error.strip() else "unknown error"
        if "interrupted" in first:
            if deadline is None:
                return f"the script computed for {self.runaway_cpu_s:g} s of CPU time without calling a tool"
            if time.monotonic() >= deadline - 0.05:
                return self._timeout_message()
        return first

    def _timeout_message(self) -> str:
        return (
            f"Script timed out: Execution timed out after {(self.timeout_s or 0) * 1000:.0f} ms"  # pi's words
        )

    def _cpu_limit(self, deadline: float | None) -> float:
        """CPU time for the next stretch: never more than the wall time left, or the runaway cap."""
        return self.runaway_cpu_s if deadline is None else max(deadline - time.monotonic(), 0.001)

    def _eval(self, context: Any, source: str, deadline: float | None) -> Any:
        if deadline is not None and deadline - time.monotonic() <= 0:
            raise _Stop(self._timeout_message())
        context.set_time_limit(self._cpu_limit(deadline))
        return context.eval(source)

    def _drive(self, context: Any, deadline: float | None) -> dict[str, Any]:
        while True:
            while True:
                if self._aborted.is_set():
                    raise _Stop("aborted")
                context.set_time_limit(self._cpu_limit(deadline))
                if not context.execute_pending_job():
                    break
            state: dict[str, Any] = json.loads(context.eval("JSON.stringify(__host.state)"))
            if state.get("done"):
                if not state.get("ok"):
                    state["error"] = self._describe(str(state.get("error", "")), deadline)
                return state
            for call_id, kind, name, payload in json.loads(context.eval("__host.take()")):
                future = self.request(kind, name, payload)
                self._inflight[call_id] = future
                future.add_done_callback(self._notifier(call_id))
            if not self._inflight:
                raise _Stop("the script waits on a promise that can never settle (there are no timers)")
            try:
                wait = None if deadline is None else max(deadline - time.monotonic(), 0)
                done = self._finished.get(timeout=wait)
            except queue.Empty:
                raise _Stop(self._timeout_message()) from None
            if done is None:
                raise _Stop("aborted")
            future = self._inflight.pop(done)
            try:
                ok, payload_text = True, future.result()
            except concurrent.futures.CancelledError:
                ok, payload_text = False, "the call was cancelled"
            except Exception as error:
                ok, payload_text = False, str(error) or type(error).__name__
            context.set("__payload", payload_text)
            self._eval(context, f"__host.settle({done}, {'true' if ok else 'false'}, __payload)", deadline)

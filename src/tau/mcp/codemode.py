"""The ``codemode`` tool: the model's JavaScript calls other tools in a QuickJS sandbox.

A script reaches the tools declared to the model (``read``, ``bash``, extension tools; with
``codemode.mode: only`` also those hidden behind codemode) and the MCP tools. The script's host
calls run on the agent's event loop; each tool call is a nested call
(``tau.agent.tool_execution.NestedToolCaller``): id ``<codemode call id>/<n>``, argument validation,
the extensions' ``tool_call``/``tool_result`` handlers (a block rejects the script's promise) and
``tool_execution_*`` events with ``parent_tool_call_id``. MCP tools give scripts their whole
``CallToolResult``, ``bash`` an object, others their text; only what the script outputs reaches the
model. The sandbox itself is ``tau.mcp.codemode_sandbox``; the built-in that registers the tool
without MCP is ``tau.mcp.codemode_builtin``; ``models.*`` (image generation) is
``tau.mcp.codemode_models``, and the files ``image()`` saves ``tau.mcp.codemode_images``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import re
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import GrammarSampling, ImageContent, JsonObject, TextContent
from tau.extensions.types import ToolDefinition, ToolInfo, ToolLoadout, ToolLoadoutChanges, ToolNamespace
from tau.mcp.codemode_images import saved_images
from tau.mcp.codemode_models import ScriptModels
from tau.mcp.tools import SearchDocument, rank_tools

if TYPE_CHECKING:
    from tau.agent.tool_execution import NestedToolCaller
    from tau.mcp.codemode_sandbox import ScriptOutcome
    from tau.mcp.extension import McpServers

__all__ = ["CODEMODE", "codemode_tool", "declaration", "servers_section"]

CODEMODE = "codemode"
STORE_ENTRY = "codemode-store"
"""The custom entry holding one successful script's ``store()`` writes: ``{set, delete}``."""
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_CHARS_PER_TOKEN = 4
_SEARCH_LIMIT = 8
_OPTIONS = re.compile(r"^\s*//\s*@options:(.*)$")
# On models with OpenAI grammar tools the script is written as raw text (a custom tool), not as a
# JSON-escaped string, as pi 1.6's codemode tool asks; any non-empty text, the options line included.
SCRIPT_GRAMMAR = GrammarSampling({"openai_lark": "start: SCRIPT\nSCRIPT: /[\\s\\S]+/\n"})
_MISSING = "codemode needs the quickjs package: pip install 'tau-agent[codemode]'"

_DESCRIPTION = """Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as the body of an async function in a QuickJS sandbox: top-level `await` and `return` work. There is no Node, file system, network or timers.
- `await tools.<name>({ ...args })` calls a tool and rejects with an Error when it fails. `bash` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }` (also for a non-zero exit code), `read` to the file's text (an image file to an image block `image()` shows), MCP tools to their CallToolResult `{ content, structuredContent?, isError? }`, other tools to their text output. Use Promise.allSettled() for independent calls.
- Optional first line: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`

Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` add output; `exit()` ends the script.
- `store(key, value)` and `load(key)` keep small JSON values across codemode calls (a failed script's writes are dropped).
- `ALL_TOOLS` ({ name, description }[]), `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find the tools, such as the MCP tools, which are not listed here.
- `models`: `await models.getModelsOfType(type, provider?)`, `getAvailableOfType(type, provider?)`, `getModelOfType(type, provider, id)` list the model catalogue (type "chat" or "image"). `await models.generateImages(model, { input: [{ type: "text", text }, ...image blocks] })` resolves to `{ output, stopReason, errorMessage?, usage? }` (it does not throw on provider errors); show each image block of `output` with `image(block)`. Generating can take minutes: raise `timeout_ms`."""


def codemode_tool(
    servers: McpServers | None,
    *,
    default_active: bool,
    append_entry: Callable[[str, Any], Any],
    prepare_loadout: Callable[[ToolLoadout], ToolLoadoutChanges | None] | None = None,
    tool_infos: Callable[[], Sequence[ToolInfo]] | None = None,
) -> ToolDefinition:
    """The tool definition, reaching the tools declared to the model and those of ``servers``.
    ``append_entry``: how a script's ``store()`` writes reach the session; ``prepare_loadout``: how
    the other tools are shown while it is active (``tau.mcp.codemode_loadout``); ``tool_infos``: the
    registered tools (``tau.get_all_tools``), whose namespaces scripts look up."""

    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> AgentToolResult:
        from tau.agent.tool_execution import nested_tool_caller

        host = _ScriptHost(servers, tool_call_id, signal, nested_tool_caller(), ctx, on_update)
        host.tool_infos = tool_infos
        host.report()
        return await _run(host, str(params.get("code", "")), signal, _stored(ctx), append_entry)

    return ToolDefinition(
        name=CODEMODE,
        label=CODEMODE,
        description=_DESCRIPTION,
        prompt_snippet="Run JavaScript that calls other tools",
        prompt_guidelines=[
            "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter "
            "large output, instead of many separate calls.",
        ],
        parameters={
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Raw JavaScript source."}},
            "required": ["code"],
        },
        execute=execute,
        default_active=default_active,
        constrained_sampling=SCRIPT_GRAMMAR,
        exposure="model-only",
        reaches_tools=reaches_tools,
        prepare_loadout=prepare_loadout,
    )


def reaches_tools(params: JsonObject) -> Literal["all"] | list[str]:
    """The tools a script may reach (pi's ``reachesTools``): ``"all"`` when it searches or lists
    them, else the words of its source."""
    code = str(params.get("code", ""))
    if any(word in code for word in ("searchTools", "ALL_TOOLS", "describeNamespace")):
        return "all"
    return list(dict.fromkeys(re.findall(r"[A-Za-z_$][\w$-]*", code)))


def servers_section(servers: McpServers, reaches: dict[str, str]) -> str:
    """pi's ``mcp_servers`` section: each server whose tools are not declared, how they are reached
    (``codemode`` or ``tool_search``), and its configured description (from the configuration only,
    so the section does not change when servers connect)."""
    intro = "MCP servers whose tools are not declared to you."
    if "codemode" in reaches.values():
        intro += " Call the tools of `codemode` servers from codemode scripts."
    if "tool_search" in reaches.values():
        intro += " Load the tools of `tool_search` servers with `tool_search`."
    lines = [intro]
    for name in sorted(reaches):
        description = servers.config.servers[name].description.strip()
        head = f"- mcp__{name} ({reaches[name]})"
        lines.append(f"{head}: {description.splitlines()[0][:250]}" if description else head)
    return "\n".join(lines)


def _parse_options(code: str) -> dict[str, Any]:
    first, _, _ = code.partition("\n")
    match = _OPTIONS.match(first)
    for line in code.splitlines()[1:]:
        if _OPTIONS.match(line):
            raise ValueError("a // @options: line must be the script's first line")
    if match is None:
        return {}
    try:
        options = json.loads(match.group(1))
    except json.JSONDecodeError as error:
        raise ValueError(f"the // @options: line is not JSON ({error.msg})") from None
    if not isinstance(options, dict):
        raise ValueError("the // @options: line must hold a JSON object")
    for key in ("timeout_ms", "max_output_tokens"):
        value = options.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
            raise ValueError(f"{key} must be a positive integer")
    return options


def _stored(ctx: Any) -> dict[str, Any]:
    """The ``store()`` values of this branch: its ``codemode-store`` entries, oldest first."""
    from tau.session.entries import CustomEntry

    values: dict[str, Any] = {}
    for entry in ctx.session_manager.get_branch():
        if (
            isinstance(entry, CustomEntry)
            and entry.custom_type == STORE_ENTRY
            and isinstance(entry.data, dict)
        ):
            values.update(entry.data.get("set") or {})
            for key in entry.data.get("delete") or []:
                values.pop(key, None)
    return values


async def _run(
    host: _ScriptHost,
    code: str,
    signal: Any,
    stored: dict[str, Any],
    append_entry: Callable[[str, Any], Any],
) -> AgentToolResult:
    started = time.monotonic()
    if not code.strip():
        raise ValueError("code must not be empty")
    options = _parse_options(code)
    try:
        import quickjs  # type: ignore[import-untyped]  # noqa: F401  (the sandbox's import, checked here for a clear error)
    except ImportError:
        raise RuntimeError(_MISSING) from None
    from tau.mcp.codemode_sandbox import SandboxScript

    if host.servers is not None:
        await host.servers.wait_for_script(code)
    loop = asyncio.get_running_loop()

    def request(kind: str, name: str, payload: str) -> Any:
        return asyncio.run_coroutine_threadsafe(host.handle(kind, name, payload), loop)

    timeout_ms = options.get("timeout_ms")
    timeout_s = None if timeout_ms is None else int(timeout_ms) / 1000  # as pi: no deadline unless asked
    try:
        slot = await _worker_slot(timeout_ms, signal)
    except _NoWorker as refused:
        return AgentToolResult(
            [
                TextContent(f"Script failed\nWall time {time.monotonic() - started:.1f} seconds\nOutput:\n"),
                TextContent(f"Script error:\n{refused}\n\nThe script did not start."),
            ],
            details={"calls": []},
            is_error=True,
        )
    script = SandboxScript(
        code,
        request,
        timeout_s=timeout_s,
        globals_json={"ALL_TOOLS": json.dumps(host.all_tools()), "__stored": json.dumps(stored)},
    )
    running = _in_daemon_thread(script.run, slot.release)

    def stop() -> None:
        script.abort()
        running.cancel()  # a busy stretch runs on until its CPU limit: the call ends now all the same

    remove = signal.add_listener(stop) if signal is not None else None
    try:
        outcome = await running
    except asyncio.CancelledError:
        if signal is not None and signal.aborted:
            raise RuntimeError("aborted") from None
        script.abort()
        raise
    finally:
        if remove is not None:
            remove()
    if signal is not None and signal.aborted:
        raise RuntimeError("aborted")
    for call in host.calls:
        if call.get("status") == "running":  # as pi: cut off by the script's end, a timeout or an abort
            call["status"] = "cancelled"
    note = None
    shown = any(item.get("type") == "image" for item in outcome.output)
    if host.models.generated_images and not shown:
        count = host.models.generated_images
        note = (
            f"Note: models.generateImages() returned {count} image{'' if count == 1 else 's'} that the "
            "script did not show. Show each image block of result.output with image(block)."
        )
    content = _format(
        outcome.output,
        outcome.console,
        f"{outcome.error}\n\n{_call_summary(host.calls, host.running)}" if not outcome.ok else None,
        int(options.get("max_output_tokens") or DEFAULT_MAX_OUTPUT_TOKENS),
        note,
    )
    header = f"{'Script completed' if outcome.ok else 'Script failed'}\nWall time {time.monotonic() - started:.1f} seconds\nOutput:\n"
    if outcome.ok:
        writes = outcome.store_writes
        if writes.get("set") or writes.get("delete"):
            append_entry(STORE_ENTRY, {"set": writes.get("set", {}), "delete": writes.get("delete", [])})
    # As pi: the header is a text block of its own (Chat Completions joins the blocks with a line break)
    return AgentToolResult(
        [TextContent(header), *content],
        details={"calls": host.calls},
        usage=host.models.usage,
        is_error=not outcome.ok,
    )


def _call_summary(calls: list[dict[str, Any]], running: dict[object, str]) -> str:
    """pi's line after a failed script's error: the calls it made, which are not undone (those
    still running when it ended were cancelled)."""
    made = ", ".join(
        [f"{call['name']} ({call['status']})" for call in calls]
        + [f"{name} (cancelled)" for name in running.values()]
    )
    if not made:
        return "No tool calls were made."
    return f"Tool calls made before the failure (they are not undone): {made}"


_RUNNING_CALL: contextvars.ContextVar[object] = contextvars.ContextVar("codemode_running_call")

_WORKER_WAIT_S = 60.0
_workers: threading.BoundedSemaphore | None = None
_workers_lock = threading.Lock()


def _worker_limit() -> int:
    """``TAU_CODEMODE_MAX_WORKERS`` (or pi's ``PI_CODEMODE_MAX_WORKERS``): scripts running at once
    in this process, across its sessions; 2 by default, as pi."""
    from tau._env_twins import env_twin

    value = (env_twin("CODEMODE_MAX_WORKERS") or "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else 2


class _NoWorker(Exception):
    """No worker became free in time (pi's words in the message)."""


async def _worker_slot(timeout_ms: int | None, signal: Any) -> threading.BoundedSemaphore:
    """A place for one script among the process's workers, waited for at most 60 s, or less when
    the script's own deadline is sooner: a script that gets none fails without running.
    The script's thread gives it back when it ends (an aborted busy script keeps it until then)."""
    global _workers
    with _workers_lock:
        if _workers is None:
            _workers = threading.BoundedSemaphore(_worker_limit())
        workers = _workers
    wait_s = _WORKER_WAIT_S if timeout_ms is None else min(timeout_ms / 1000, _WORKER_WAIT_S)
    deadline = time.monotonic() + wait_s
    while not workers.acquire(blocking=False):
        if signal is not None and signal.aborted:
            raise RuntimeError("aborted")
        if time.monotonic() >= deadline:
            if timeout_ms is not None and timeout_ms / 1000 <= _WORKER_WAIT_S:
                raise _NoWorker(
                    f"Script timed out: Execution timed out after {timeout_ms} ms while waiting for a free codemode worker"
                )
            raise _NoWorker(
                f"No codemode worker became free within {_WORKER_WAIT_S:g} seconds. All {_worker_limit()} workers, "
                "shared by every session in this process, are held by other scripts. Retry after they finish."
            )
        await asyncio.sleep(0.02)
    return workers


def _in_daemon_thread(
    work: Callable[[], ScriptOutcome], release: Callable[[], None]
) -> asyncio.Future[ScriptOutcome]:
    """``work()`` on a daemon thread of its own (not the loop's executor, whose threads tau's exit
    waits for: an aborted busy script must not hold the process); ``release()`` when it ends."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ScriptOutcome] = loop.create_future()

    def settle(value: ScriptOutcome | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            assert value is not None
            future.set_result(value)

    def target() -> None:
        try:
            value, error = work(), None
        except BaseException as exc:
            value, error = None, exc
        finally:
            release()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=target, name="tau-codemode", daemon=True).start()
    return future


def _format(
    output: list[dict[str, Any]],
    console: list[str],
    error: str | None,
    max_tokens: int,
    note: str | None = None,
) -> list[TextContent | ImageContent]:
    """The script's items as pi lays them out: numbered text items, the console block, the error,
    then ``note``; text over the budget keeps its start and end, the whole of it saved to a
    temporary file."""
    texts = [item for item in output if item.get("type") == "text"]
    pieces: list[str] = []
    images: list[ImageContent] = []
    number = 0
    for item in output:
        if item.get("type") == "image":
            images.append(ImageContent(str(item.get("data", "")), str(item.get("mimeType", "image/png"))))
        else:
            number += 1
            pieces.append(
                f"==> text {number}/{len(texts)} <==\n{item['text']}" if len(texts) > 1 else item["text"]
            )
    if console:
        pieces.append("<console_output>\n" + "\n".join(console) + "\n</console_output>")
    if error is not None:
        pieces.append(f"Script error:\n{error}")
    if note is not None:
        pieces.append(note)
    combined = "\n".join(pieces)
    budget = max_tokens * _CHARS_PER_TOKEN
    if len(combined) > budget:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", prefix="tau-codemode-", suffix=".txt", delete=False
        ) as f:
            f.write(combined)
        head, tail = combined[: budget // 2], combined[len(combined) - (budget - budget // 2) :]
        removed = len(combined) - len(head) - len(tail)
        combined = (
            f"Warning: truncated output (original token count: {-(-len(combined) // _CHARS_PER_TOKEN)})\n\n"
            f"{head}…{-(-removed // _CHARS_PER_TOKEN)} tokens truncated…{tail}\n\n[Full output: {f.name}]"
        )
    shown = saved_images(images)
    return [TextContent(combined), *shown] if combined else shown


class _ScriptHost:
    """What one script's host calls do, on the event loop. A script reaches the tools declared to
    the model (through ``caller``, so each call is a nested call with its own events) and the MCP
    tools of ``servers``."""

    def __init__(
        self,
        servers: McpServers | None,
        call_id: str,
        signal: Any,
        caller: NestedToolCaller | None,
        ctx: Any,
        on_update: Any = None,
    ) -> None:
        self.on_update = on_update
        self.servers = servers
        self.call_id = call_id
        self.signal = signal
        self.caller = caller
        self.ctx = ctx
        self.tool_infos: Callable[[], Sequence[ToolInfo]] | None = None
        self.calls: list[dict[str, Any]] = []
        self.running: dict[object, str] = {}
        """The tool calls started and not yet recorded (cancelled ones stay), for a failure's summary."""
        self.models = ScriptModels(ctx, call_id, signal, self.calls, self.report)

    async def handle(self, kind: str, name: str, payload: str) -> str:
        args = json.loads(payload)
        handlers: dict[str, Callable[[str, Any], Awaitable[Any]]] = {
            "call": self._call,
            "searchTools": self._search,
            "describeTool": self._describe_tool,
            "describeNamespace": self._describe_namespace,
            "models": self.models.handle,
        }
        value = await handlers[kind](name, args)
        return "undefined" if value is None else json.dumps(value, ensure_ascii=False)

    def report(self) -> None:
        """The script's progress as the codemode call's update: its calls so far (pi's shape)."""
        if self.on_update is not None:
            self.on_update(AgentToolResult([], details={"calls": [dict(c) for c in self.calls]}))

    def _record(self, call_id: str, name: str, args: Any, is_error: bool, started: float) -> None:
        """One finished call in pi's record: id, name, arguments as JSON, ``ok``/``error``, duration."""
        self.running.pop(_RUNNING_CALL.get(None), None)
        self.calls.append(
            {
                "id": call_id,
                "name": name,
                "args": json.dumps(args, ensure_ascii=False, separators=(",", ":")),
                "status": "error" if is_error else "ok",
                "durationMs": round((time.monotonic() - started) * 1000, 3),
            }
        )
        self.report()

    def _declared(self) -> dict[str, AgentTool]:
        """The tools a script calls as nested calls of the agent's tools (not ``codemode`` itself):
        the active ones and those of ``codemode``/``deferred`` exposure, but for the MCP tools not
        declared to the model, which ``_callable`` serves with their whole ``CallToolResult``."""
        if self.caller is None:
            return {}
        mcp = self.servers.tools if self.servers is not None else {}
        return {
            tool.name: tool
            for tool in self.caller.tools
            if tool.name != CODEMODE and not (tool.name in mcp and tool.exposure != "direct")
        }

    def _listed(self) -> dict[str, AgentTool]:
        """The tools of ``_declared`` that ``ALL_TOOLS`` and ``searchTools()`` list: not the
        ``deferred`` ones (``tool_search`` finds those)."""
        return {name: tool for name, tool in self._declared().items() if tool.exposure != "deferred"}

    def _callable(self) -> dict[str, Any]:
        """The MCP tools scripts reach."""
        if self.servers is None:
            return {}
        return {
            name: tool
            for name, tool in self.servers.tools.items()
            if tool.server and self.servers.enabled(tool.server)
        }

    def all_tools(self) -> list[dict[str, str]]:
        declared = [{"name": n, "description": t.description} for n, t in self._listed().items()]
        return declared + [
            {"name": n, "description": t.description}
            for n, t in self._callable().items()
            if n not in self._declared()
        ]

    async def _call(self, name: str, args: Any) -> Any:
        token = object()
        self.running[token] = name
        _RUNNING_CALL.set(token)  # this call's own task: _record finds it
        try:
            return await self._dispatch(name, args)
        except Exception:
            self.running.pop(token, None)
            raise

    async def _dispatch(self, name: str, args: Any) -> Any:
        if not isinstance(args, dict):
            raise RuntimeError(f"tools.{name}() takes one object of arguments")
        if name in self._declared():
            return await self._call_declared(name, args)
        if self.servers is not None and name not in self._callable():
            await self.servers.wait_for_all()
        if self.servers is None or name not in self._callable():
            if self.caller is not None and self.servers is None:
                return await self._call_declared(name, args)  # as pi: a nested call that fails
            raise RuntimeError(f"there is no tool {name!r}: find tools with searchTools() or ALL_TOOLS")
        if self.caller is not None:
            return await self._call_mcp_nested(name, args)
        nested_id = f"{self.call_id}/{len(self.calls) + 1}"
        started = time.monotonic()
        result = await self.servers.call_through_pipeline(name, nested_id, args, self.signal)
        self._record(nested_id, name, args, bool(result.get("isError")), started)
        return result

    async def _call_declared(self, name: str, args: dict[str, Any]) -> Any:
        assert self.caller is not None
        started = time.monotonic()
        outcome = await self.caller.call(name, args, signal=self.signal)
        self._record(outcome.tool_call_id, name, args, outcome.is_error, started)
        return script_value(name, outcome.result, outcome.is_error, time.monotonic() - started)

    async def _call_mcp_nested(self, name: str, args: dict[str, Any]) -> Any:
        """An MCP tool as a nested call: the events and hooks of a nested call, and the script gets
        the server's whole ``CallToolResult`` (content and error flag as the hooks left them)."""
        assert self.caller is not None and self.servers is not None
        servers = self.servers
        registered = servers.tools[name]
        raw: dict[str, Any] = {}
        produced: list[Any] = []

        async def execute(
            tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate | None
        ) -> AgentToolResult:
            from tau.mcp.connection import McpCallError
            from tau.mcp.tools import to_tool_result

            connection = servers.connections[registered.server]
            try:
                result = await connection.call_tool(registered.remote, args)
            except McpCallError as exc:
                raise RuntimeError(str(exc)) from None
            raw.update(result)
            try:
                seen = to_tool_result(registered.server, {**result, "isError": False})
            except RuntimeError:
                seen = AgentToolResult([TextContent("")])
            produced.append(seen.content)
            return seen

        tool = AgentTool(
            name=name,
            description=registered.description,
            parameters=registered.schema or {"type": "object"},
            execute=execute,
        )
        started = time.monotonic()
        outcome = await self.caller.call(name, args, tool=tool, signal=self.signal)
        self._record(outcome.tool_call_id, name, args, outcome.is_error, started)
        if not raw:
            raise RuntimeError(_text_of(outcome.result) or f"the call of {name} failed")
        value = dict(raw)
        if not produced or outcome.result.content is not produced[0]:
            value["content"] = [_block(c) for c in outcome.result.content]
        if outcome.is_error:
            value["isError"] = True
        return value

    async def _search(self, _name: str, args: Any) -> Any:
        if self.servers is not None:
            await self.servers.wait_for_all()
        query = str(args.get("query") or "").strip()
        limit = args.get("limit") or _SEARCH_LIMIT
        namespace = _namespace_id(str(args.get("namespace") or ""))
        namespaces = self._namespaces()
        documents = [
            SearchDocument(
                name,
                name,
                tool.description,
                (namespaces[name].description or "") if name in namespaces else "",
                json.dumps(tool.parameters),
            )
            for name, tool in self._listed().items()
            if not namespace or (name in namespaces and namespace in self._names(namespaces[name]))
        ]
        if self.servers is not None:
            documents += [
                SearchDocument(
                    name,
                    tool.remote,
                    tool.description,
                    self.servers.server_description(tool.server),
                    tool.parameters,
                )
                for name, tool in self._callable().items()
                if not namespace or _namespace_id(tool.server) == namespace
            ]
        if not query:
            return [{"name": d.name, "description": d.description} for d in documents[: int(limit)]]
        return [
            {"name": d.name, "description": d.description} for d in rank_tools(query, documents, int(limit))
        ]

    async def _describe_tool(self, _name: str, args: Any) -> Any:
        name = str(args.get("name") or "")
        declared = self._declared().get(name)
        if declared is not None:
            returns = _RETURNS.get(name, "string")
            return (
                f"{declared.description.strip()}\n\n{declaration(name, dict(declared.parameters), returns)}"
            )
        if self.servers is None:
            return None
        if name not in self._callable():
            await self.servers.wait_for_all()
        tool = self._callable().get(name)
        if tool is None:
            return None
        return f"{tool.description.strip()}\n\n{declaration(name, tool.schema or {})}"

    def _namespaces(self) -> dict[str, ToolNamespace]:
        """The namespaces of the tools scripts reach (not the MCP servers'), by tool name."""
        if self.tool_infos is None:
            return {}
        reachable = self._declared()
        mcp = self.servers.tools if self.servers is not None else {}
        return {
            info.name: info.namespace
            for info in self.tool_infos()
            if info.namespace is not None and info.name in reachable and info.name not in mcp
        }

    @staticmethod
    def _names(namespace: ToolNamespace) -> set[str]:
        return {_namespace_id(namespace.name), *(_namespace_id(alias) for alias in namespace.aliases)}

    async def _describe_namespace(self, _name: str, args: Any) -> Any:
        wanted = _namespace_id(str(args.get("name") or ""))
        grouped = [(name, ns) for name, ns in self._namespaces().items() if wanted in self._names(ns)]
        if grouped:
            namespace = grouped[0][1]
            answer: dict[str, Any] = {"name": namespace.name, "tools": [name for name, _ in grouped]}
            if namespace.description:
                answer["description"] = namespace.description
            if namespace.instructions:
                answer["instructions"] = namespace.instructions
            return answer
        if self.servers is None:
            return None
        await self.servers.wait_for_all()
        for server in self.servers.config.servers:
            if _namespace_id(server) != wanted or not self.servers.enabled(server):
                continue
            connection = self.servers.connections[server]
            description = self.servers.server_description(server)
            answer = {
                "name": f"mcp__{server}",
                "tools": [n for n, t in self._callable().items() if t.server == server],
            }
            if description:
                answer["description"] = description
            if connection.instructions:
                answer["instructions"] = connection.instructions
            return answer
        return None


_RETURNS = {
    "bash": "{ output: string; truncated: boolean; full_output_path?: string; exit_code: number; wall_time_seconds: number }",
    "read": 'string | { type: "image"; data: string; mimeType: string; note: string }',
}
_EXIT = re.compile(r"\n*Command exited with code (-?\d+)$")


def _text_of(result: AgentToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def _block(content: TextContent | ImageContent) -> dict[str, Any]:
    if isinstance(content, TextContent):
        return {"type": "text", "text": content.text}
    return {"type": "image", "data": content.data, "mimeType": content.mime_type}


def script_value(name: str, result: AgentToolResult, is_error: bool, seconds: float) -> Any:
    """What ``tools.<name>()`` resolves to for a tool declared to the model (pi's shapes): ``bash``
    an object (also for a non-zero exit code), ``read`` the text or an image block, others their
    text. A failed call raises with the tool's error text (the script's promise rejects). A result
    that carries its value (``structured_content``, as tau's bash and read give it) resolves to it."""
    if result.structured_content is not None and (not is_error or name == "bash"):
        return result.structured_content
    text = _text_of(result)
    if name == "bash":
        exit_code = 0
        if is_error:
            match = _EXIT.search(text)
            if match is None:
                raise RuntimeError(text or "bash failed")
            exit_code, text = int(match.group(1)), text[: match.start()]
        details = result.details if isinstance(result.details, dict) else {}
        value: dict[str, Any] = {"output": text, "truncated": bool(details.get("truncation"))}
        if details.get("fullOutputPath"):
            value["full_output_path"] = details["fullOutputPath"]
        value["exit_code"] = exit_code
        value["wall_time_seconds"] = round(seconds, 3)
        return value
    if is_error:
        raise RuntimeError(text or f"{name} failed")
    if name == "read":
        image = next((c for c in result.content if isinstance(c, ImageContent)), None)
        if image is not None:
            return {"type": "image", "data": image.data, "mimeType": image.mime_type, "note": text}
    return text


def declaration(name: str, schema: dict[str, Any], returns: str = "CallToolResult") -> str:
    """How a script calls the tool, as TypeScript: ``tools.<name>(args: {...}): Promise<CallToolResult>``."""
    return f"tools.{name}(args: {_ts_object(schema, schema, 0)}): Promise<{returns}>"


def _ts_object(schema: dict[str, Any], root: dict[str, Any], depth: int) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "Record<string, unknown>"
    required = set(schema.get("required") or [])
    indent = "  " * (depth + 1)
    lines = []
    for key, field_schema in properties.items():
        about = field_schema.get("description") if isinstance(field_schema, dict) else None
        if isinstance(about, str) and about.strip():
            lines.append(f"{indent}/** {about.strip().splitlines()[0]} */")
        optional = "" if key in required else "?"
        lines.append(f"{indent}{key}{optional}: {_ts_type(field_schema, root, depth + 1)};")
    return "{\n" + "\n".join(lines) + "\n" + "  " * depth + "}"


def _ts_type(schema: Any, root: dict[str, Any], depth: int, refs: int = 0) -> str:
    """A JSON Schema as a TypeScript type (``$ref``s into ``$defs`` followed a few levels deep)."""
    if not isinstance(schema, dict) or depth > 4 or refs > 8:
        return "unknown"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        return _ts_type(target, root, depth, refs + 1)
    if "const" in schema:
        return json.dumps(schema["const"])
    if isinstance(schema.get("enum"), list):
        return " | ".join(json.dumps(value) for value in schema["enum"]) or "never"
    variants = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(variants, list) and variants:
        return " | ".join(_ts_type(variant, root, depth) for variant in variants)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**schema, "type": k}, root, depth) for k in kind)
    if kind == "array":
        item = _ts_type(schema.get("items"), root, depth)
        return f"({item})[]" if " " in item else f"{item}[]"
    if kind == "object":
        return _ts_object(schema, root, depth)
    return {
        "string": "string",
        "integer": "number",
        "number": "number",
        "boolean": "boolean",
        "null": "null",
    }.get(str(kind), "unknown")


def _namespace_id(name: str) -> str:
    """``mcp__dev-radius``, ``mcp__dev_radius``, ``dev-radius`` and ``dev_radius`` name one server."""
    name = name.removeprefix("mcp__")
    return re.sub(r"[^A-Za-z0-9_]", "_", name)

"""The ``codemode`` tool: the model's JavaScript calls MCP tools in a QuickJS sandbox.

The script's host calls run on the agent's event loop; a tool call goes through the extension
``tool_call``/``tool_result`` handlers like a direct call (a block rejects the script's promise),
with the id ``<codemode call id>:<n>``. Scripts get the whole ``CallToolResult``; only what the
script outputs reaches the model. The sandbox itself is ``tau.mcp.codemode_sandbox``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tau.agent.tool import AgentToolResult
from tau.ai.types import ImageContent, TextContent
from tau.extensions.types import ToolDefinition
from tau.mcp.tools import SearchDocument, rank_tools

if TYPE_CHECKING:
    from tau.mcp.codemode_sandbox import ScriptOutcome
    from tau.mcp.extension import McpServers

__all__ = ["CODEMODE", "codemode_tool", "declaration", "servers_section"]

CODEMODE = "codemode"
STORE_ENTRY = "codemode-store"
"""The custom entry holding one successful script's ``store()`` writes: ``{set, delete}``."""
DEFAULT_TIMEOUT_MS = 120_000
"""pi sets no deadline by default; tau stops a script after two minutes unless it asks for more."""
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
_CHARS_PER_TOKEN = 4
_SEARCH_LIMIT = 8
_OPTIONS = re.compile(r"^\s*//\s*@options:(.*)$")
_MISSING = "codemode needs the quickjs package: pip install 'tau-agent[codemode]'"

_DESCRIPTION = """Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), run as the body of an async function in a QuickJS sandbox: top-level `await` and `return` work. There is no Node, file system, network or timers.
- `await tools.<name>({ ...args })` calls a tool: MCP tools resolve to their CallToolResult `{ content, structuredContent?, isError? }`; a failed or blocked call rejects with an Error. Use Promise.allSettled() for independent calls.
- Optional first line: `// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}`

Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` add output; `exit()` ends the script.
- `store(key, value)` and `load(key)` keep small JSON values across codemode calls (a failed script's writes are dropped).
- `ALL_TOOLS` ({ name, description }[]), `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find the tools, such as the MCP tools, which are not listed here."""


def codemode_tool(servers: McpServers, *, default_active: bool) -> ToolDefinition:
    """The tool definition, reaching the tools of ``servers``."""

    async def execute(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> AgentToolResult:
        return await _run(servers, tool_call_id, str(params.get("code", "")), signal, _stored(ctx))

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
    )


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
    servers: McpServers, call_id: str, code: str, signal: Any, stored: dict[str, Any]
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

    await servers.wait_for_script(code)
    host = _ScriptHost(servers, call_id, signal)
    loop = asyncio.get_running_loop()

    def request(kind: str, name: str, payload: str) -> Any:
        return asyncio.run_coroutine_threadsafe(host.handle(kind, name, payload), loop)

    script = SandboxScript(
        code,
        request,
        timeout_s=int(options.get("timeout_ms") or DEFAULT_TIMEOUT_MS) / 1000,
        globals_json={"ALL_TOOLS": json.dumps(host.all_tools()), "__stored": json.dumps(stored)},
    )
    running = _in_daemon_thread(script.run)

    def stop() -> None:
        script.abort()
        running.cancel()  # a busy loop runs on until its time limit: the call ends now all the same

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
    content = _format(
        outcome.output,
        outcome.console,
        outcome.error if not outcome.ok else None,
        int(options.get("max_output_tokens") or DEFAULT_MAX_OUTPUT_TOKENS),
    )
    header = f"{'Script completed' if outcome.ok else 'Script failed'}\nWall time {time.monotonic() - started:.1f} seconds\nOutput:\n"
    if not outcome.ok:
        text = header + "\n".join(c.text for c in content if isinstance(c, TextContent))
        raise RuntimeError(text)
    writes = outcome.store_writes
    if writes.get("set") or writes.get("delete"):
        servers.tau.append_entry(
            STORE_ENTRY, {"set": writes.get("set", {}), "delete": writes.get("delete", [])}
        )
    if content and isinstance(content[0], TextContent):
        content[0] = TextContent(header + content[0].text)
    else:
        content.insert(0, TextContent(header))
    return AgentToolResult(content, details={"calls": host.calls})


def _in_daemon_thread(work: Callable[[], ScriptOutcome]) -> asyncio.Future[ScriptOutcome]:
    """``work()`` on a daemon thread of its own (not the loop's executor, whose threads tau's exit
    waits for: an aborted busy script must not hold the process)."""
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
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=target, name="tau-codemode", daemon=True).start()
    return future


def _format(
    output: list[dict[str, Any]], console: list[str], error: str | None, max_tokens: int
) -> list[TextContent | ImageContent]:
    """The script's items as pi lays them out: numbered text items, the console block, the error;
    text over the budget keeps its start and end, the whole of it saved to a temporary file."""
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
    return [TextContent(combined), *images] if combined else [*images]


class _ScriptHost:
    """What one script's host calls do, on the event loop."""

    def __init__(self, servers: McpServers, call_id: str, signal: Any) -> None:
        self.servers = servers
        self.call_id = call_id
        self.signal = signal
        self.calls: list[dict[str, Any]] = []

    async def handle(self, kind: str, name: str, payload: str) -> str:
        args = json.loads(payload)
        handlers: dict[str, Callable[[str, Any], Awaitable[Any]]] = {
            "call": self._call,
            "searchTools": self._search,
            "describeTool": self._describe_tool,
            "describeNamespace": self._describe_namespace,
        }
        value = await handlers[kind](name, args)
        return "undefined" if value is None else json.dumps(value, ensure_ascii=False)

    def _callable(self) -> dict[str, Any]:
        return {
            name: tool
            for name, tool in self.servers.tools.items()
            if tool.server and self.servers.enabled(tool.server)
        }

    def all_tools(self) -> list[dict[str, str]]:
        return [{"name": n, "description": t.description} for n, t in self._callable().items()]

    async def _call(self, name: str, args: Any) -> Any:
        if name not in self._callable():
            await self.servers.wait_for_all()
        tool = self._callable().get(name)
        if tool is None:
            raise RuntimeError(f"there is no tool {name!r}: find tools with searchTools() or ALL_TOOLS")
        if not isinstance(args, dict):
            raise RuntimeError(f"tools.{name}() takes one object of arguments")
        nested_id = f"{self.call_id}:{len(self.calls) + 1}"
        record: dict[str, Any] = {"id": nested_id, "name": name, "status": "running"}
        self.calls.append(record)
        result = await self.servers.call_through_pipeline(name, nested_id, args, self.signal)
        record["status"] = "error" if result.get("isError") else "done"
        return result

    async def _search(self, _name: str, args: Any) -> Any:
        await self.servers.wait_for_all()
        query = str(args.get("query") or "").strip()
        limit = args.get("limit") or _SEARCH_LIMIT
        namespace = _namespace_id(str(args.get("namespace") or ""))
        documents = [
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
        if name not in self._callable():
            await self.servers.wait_for_all()
        tool = self._callable().get(name)
        if tool is None:
            return None
        return f"{tool.description.strip()}\n\n{declaration(name, tool.schema or {})}"

    async def _describe_namespace(self, _name: str, args: Any) -> Any:
        wanted = _namespace_id(str(args.get("name") or ""))
        await self.servers.wait_for_all()
        for server in self.servers.config.servers:
            if _namespace_id(server) != wanted or not self.servers.enabled(server):
                continue
            connection = self.servers.connections[server]
            description = self.servers.server_description(server)
            answer: dict[str, Any] = {
                "name": f"mcp__{server}",
                "tools": [n for n, t in self._callable().items() if t.server == server],
            }
            if description:
                answer["description"] = description
            if connection.instructions:
                answer["instructions"] = connection.instructions
            return answer
        return None


def declaration(name: str, schema: dict[str, Any]) -> str:
    """How a script calls the tool, as TypeScript: ``tools.<name>(args: {...}): Promise<CallToolResult>``."""
    return f"tools.{name}(args: {_ts_object(schema, schema, 0)}): Promise<CallToolResult>"


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

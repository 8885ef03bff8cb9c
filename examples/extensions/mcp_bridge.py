"""MCP bridge: the tools of an MCP server (stdio transport) become tau tools.

tau has MCP built in (``mcp.json``, ``tau mcp``, ``/mcp``; see docs/mcp.md): use that for real
servers. This example stays as a short, complete picture of an extension holding a long-lived
connection and registering tools from it.

On ``session_start`` the extension starts the server, lists its tools and registers each one as
``mcp_<server>_<tool>`` with the server's description and JSON schema; a call is forwarded to the
server and its text and image content comes back as the tool result (structured content goes in
``details``). The server is shut down on ``session_shutdown``. The command comes from the flag
``--mcp-server`` or, without it, from the environment variable ``TAU_MCP_SERVER``; it is split
like a shell command line (no shell runs it). The server's stderr is discarded.

Needs the official MCP SDK (``pip install 'tau-agent[mcp]'``); it is imported only once a server
is configured, so tau itself never imports it.

    tau -e examples/extensions/mcp_bridge.py --mcp-server "python my_server.py"
    TAU_MCP_SERVER="uvx mcp-server-fetch" tau -e examples/extensions/mcp_bridge.py
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from pathlib import Path
from typing import Any

from tau.agent.tool import AgentToolResult
from tau.ai.types import ImageContent, TextContent
from tau.extensions import (
    ExtensionAPI,
    ExtensionContext,
    SessionShutdownEvent,
    SessionStartEvent,
    ToolDefinition,
)

FLAG = "mcp-server"
ENV_VAR = "TAU_MCP_SERVER"
START_TIMEOUT = 30.0


def tool_name(server: str, tool: str) -> str:
    """``mcp_<server>_<tool>`` in the characters tau allows, at most 64 of them."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp_{server}_{tool}")[:64]


def dump(model: Any) -> dict[str, Any]:
    """An MCP SDK object as its wire JSON (camelCase keys in both mcp 1.x and 2.x)."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def to_result(result: dict[str, Any]) -> AgentToolResult:
    """A ``CallToolResult`` (wire JSON) as a tau tool result; an error result raises."""
    content: list[TextContent | ImageContent] = []
    for block in result.get("content", []):
        kind = block.get("type")
        if kind == "text":
            content.append(TextContent(block.get("text", "")))
        elif kind == "image":
            content.append(ImageContent(block["data"], block.get("mimeType", "image/png")))
        elif kind == "resource":
            resource = block.get("resource", {})
            text = resource.get("text")
            content.append(TextContent(text if text is not None else f"[resource {resource.get('uri')}]"))
        elif kind == "resource_link":
            content.append(TextContent(f"[resource link {block.get('uri')}]"))
        else:
            content.append(TextContent(f"[{kind} content omitted]"))
    if result.get("isError"):
        raise RuntimeError("\n".join(c.text for c in content if isinstance(c, TextContent)) or "tool failed")
    structured = result.get("structuredContent")
    if not content and structured is not None:
        content.append(TextContent(str(structured)))
    return AgentToolResult(content=content, details={"structured": structured} if structured else None)


class MCPConnection:
    """One server process and its client session, held open by a background task.

    The SDK's context managers must be entered and left in the same task, so ``run`` owns them and
    waits for ``close``; tool calls are made from other tasks through ``session``.
    """

    def __init__(self, argv: list[str], cwd: str) -> None:
        self.argv = argv
        self.cwd = cwd
        self.session: Any = None
        self.server_name = Path(argv[0]).stem
        self.tools: list[dict[str, Any]] = []
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()

    async def run(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], cwd=self.cwd)
        try:
            with open(os.devnull, "w") as errlog:
                async with (
                    stdio_client(params, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    info = dump(await session.initialize())
                    self.server_name = info.get("serverInfo", {}).get("name") or self.server_name
                    self.tools = [dump(tool) for tool in (await session.list_tools()).tools]
                    self.session = session
                    self._ready.set_result(None)
                    await self._stop.wait()
        except Exception as exc:
            if self._ready.done():
                raise  # reported by tau as this extension's background-task failure
            cause: BaseException = exc
            while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
                cause = cause.exceptions[0]  # anyio wraps the real failure in task-group layers
            reason = f"{type(cause).__name__}: {cause}"
            failure = RuntimeError(f"MCP server {shlex.join(self.argv)!r} did not start ({reason})")
            self._ready.set_exception(failure)  # reported by ``connect``, which awaits it
        except BaseException:
            if not self._ready.done():
                self._ready.set_exception(RuntimeError("the MCP connection was cancelled"))
            raise
        finally:
            self.session = None

    async def started(self) -> None:
        await asyncio.wait_for(asyncio.shield(self._ready), START_TIMEOUT)

    def close(self) -> None:
        self._stop.set()

    async def call(self, name: str, arguments: dict[str, Any]) -> AgentToolResult:
        if self.session is None:
            raise RuntimeError(f"the MCP server {self.server_name!r} is not running")
        return to_result(dump(await self.session.call_tool(name, arguments)))


def setup(tau: ExtensionAPI) -> None:
    tau.register_flag(FLAG, type=str, description=f"MCP server command to bridge (or set {ENV_VAR})")
    state: dict[str, Any] = {}

    def make_tool(connection: MCPConnection, tool: dict[str, Any]) -> ToolDefinition:
        remote = str(tool["name"])

        async def execute(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: ExtensionContext
        ) -> AgentToolResult:
            return await connection.call(remote, params)

        return ToolDefinition(
            name=tool_name(connection.server_name, remote),
            label=tool.get("title") or remote,
            description=tool.get("description") or f"{remote} (MCP server {connection.server_name})",
            parameters=tool.get("inputSchema") or {"type": "object", "properties": {}},
            execute=execute,
        )

    @tau.on("session_start")
    async def connect(event: SessionStartEvent, ctx: ExtensionContext) -> None:
        command = tau.get_flag(FLAG) or os.environ.get(ENV_VAR)
        if not isinstance(command, str) or not command.strip() or "connection" in state:
            return
        connection = MCPConnection(shlex.split(command), ctx.cwd)
        state["connection"] = connection
        state["task"] = task = tau.spawn(connection.run())
        try:
            await connection.started()
        except BaseException:
            state.pop("task", None)
            task.cancel()
            raise
        for tool in connection.tools:
            tau.register_tool(make_tool(connection, tool))

    @tau.on("session_shutdown")
    async def disconnect(event: SessionShutdownEvent, ctx: ExtensionContext) -> None:
        connection: MCPConnection | None = state.pop("connection", None)
        task: asyncio.Task[Any] | None = state.pop("task", None)
        if connection is None or task is None:
            return
        connection.close()
        try:
            await asyncio.wait_for(task, 10)
        except (TimeoutError, Exception):
            task.cancel()

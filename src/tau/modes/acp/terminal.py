"""bash through the editor's terminals (``terminal/*``), when the client offers them.

The command runs in a terminal the editor owns and shows live inside the tool call; tau waits for
it to exit, reads its output once and formats and truncates it as its own bash does (the last
2000 lines or 50 KB; the client keeps at most ``OUTPUT_LIMIT`` bytes, the end of the output). An
abort or the tool's timeout kills the terminal; it is released once the call is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

import msgspec

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.modes.acp.jsonrpc import Connection
from tau.tools.bash import SessionEnvironment, create_bash_tool
from tau.tools.operations import CommandAborted, CommandTimedOut

__all__ = ["OUTPUT_LIMIT", "TerminalBashOperations", "terminal_bash_tool"]

OUTPUT_LIMIT = 1024 * 1024

# The tool call a terminal belongs to (set around each bash call; its operations run in that task).
_running_call: ContextVar[str | None] = ContextVar("tau_acp_bash_call", default=None)


class TerminalBashOperations:
    """``BashOperations`` over the client's terminals; ``on_terminal(call id, terminal id)`` is
    told of each terminal as it is created, so the tool call can show it."""

    def __init__(self, conn: Connection, session_id: str, on_terminal: Callable[[str, str], None]) -> None:
        self._conn = conn
        self._session_id = session_id
        self._on_terminal = on_terminal

    async def exec(
        self,
        command: str,
        cwd: str,
        *,
        on_data: Callable[[bytes], None],
        signal: AbortSignal | None,
        timeout: float | None,
        env: Mapping[str, str],
    ) -> int | None:
        # The editor runs the terminal in its own environment: only what tau changed is passed.
        changed = [{"name": k, "value": v} for k, v in env.items() if os.environ.get(k) != v]
        created = await self._conn.request(
            "terminal/create",
            {
                "sessionId": self._session_id,
                "command": "bash",
                "args": ["-c", command],
                "env": changed,
                "cwd": cwd,
                "outputByteLimit": OUTPUT_LIMIT,
            },
        )
        terminal_id = created.get("terminalId") if isinstance(created, dict) else None
        if not isinstance(terminal_id, str):
            raise OSError("the editor created no terminal")
        ids = {"sessionId": self._session_id, "terminalId": terminal_id}
        call_id = _running_call.get()
        if call_id is not None:
            self._on_terminal(call_id, terminal_id)
        waits: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(self._conn.request("terminal/wait_for_exit", ids))
        ]
        if signal is not None:
            waits.append(asyncio.ensure_future(signal.wait()))
        try:
            done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            exited = waits[0] in done
            if not exited:
                await self._conn.request("terminal/kill", ids)
            output = await self._conn.request("terminal/output", ids)
            text = output.get("output") if isinstance(output, dict) else None
            if isinstance(text, str) and text:
                on_data(text.encode("utf-8"))
            if not exited:
                if signal is not None and signal.aborted:
                    raise CommandAborted()
                raise CommandTimedOut(timeout or 0)
            status = waits[0].result()
            code = status.get("exitCode") if isinstance(status, dict) else None
            return code if isinstance(code, int) else None
        finally:
            for wait in waits:
                wait.cancel()
            with contextlib.suppress(Exception):
                await self._conn.request("terminal/release", ids)


def terminal_bash_tool(
    cwd: str,
    ops: TerminalBashOperations,
    command_prefix: str | None,
    session_env: SessionEnvironment | None = None,
) -> AgentTool:
    """tau's bash tool (its arguments, formatting and truncation) running in the editor's terminals;
    ``session_env`` as the built-in bash tool's (the session's variables reach the terminal)."""
    tool = create_bash_tool(cwd, ops, command_prefix=command_prefix, session_env=session_env)
    run = tool.execute

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        token = _running_call.set(tool_call_id)
        try:
            return await run(tool_call_id, args, signal, on_update)
        finally:
            _running_call.reset(token)

    return msgspec.structs.replace(tool, execute=execute)

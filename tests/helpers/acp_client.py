"""The ACP tests' client side: recording clients (one serving files from memory, one running
terminals) and the SDK's client connected to a real ``tau --mode acp``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    spawn_agent_process,
)
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp_wire import WireChecker
from tau_command import MODEL, TauCommand


class RecordingClient:
    """An ACP client: records every update (validated by the SDK's models on the way in), answers
    permission requests with ``answer``, and serves ``files`` from memory when given."""

    def __init__(self, answer: str | None = "allow-once", files: dict[str, str] | None = None) -> None:
        self.updates: list[SessionNotification] = []
        self.permission_requests: list[Any] = []
        self.answer = answer
        self.files = files

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(SessionNotification(session_id=session_id, update=update))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.permission_requests.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        assert self.files is not None
        if path not in self.files:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.files[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        assert self.files is not None
        self.files[path] = content
        return WriteTextFileResponse()

    def of(self, kind: type) -> list[Any]:
        return [n.update for n in self.updates if isinstance(n.update, kind)]

    def message_text(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk))


class TerminalClient(RecordingClient):
    """A client that offers terminals: each runs its command as a real subprocess (with a variable
    only the editor's environment has) and records what tau asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.processes: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytearray] = {}
        self.readers: dict[str, asyncio.Future[None]] = {}
        self.requests: list[tuple[str, Any]] = []

    async def create_terminal(
        self, session_id: str, command: str, args: Any = None, env: Any = None, cwd: Any = None, **kwargs: Any
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{len(self.processes)}"
        self.requests.append(("create", (command, args, cwd, kwargs.get("output_byte_limit"))))
        environment = {**os.environ, "RUN_BY": "editor", **{e.name: e.value for e in env or []}}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.processes[terminal_id], self.outputs[terminal_id] = process, bytearray()

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                self.outputs[terminal_id] += chunk

        self.readers[terminal_id] = asyncio.ensure_future(read())
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _status(self, terminal_id: str) -> TerminalExitStatus | None:
        code = self.processes[terminal_id].returncode
        if code is None:
            return None
        return (
            TerminalExitStatus(exit_code=code) if code >= 0 else TerminalExitStatus(signal=f"signal {-code}")
        )

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.requests.append(("output", terminal_id))
        if self.processes[terminal_id].returncode is not None:
            await self.readers[terminal_id]
        output = self.outputs[terminal_id].decode()
        return TerminalOutputResponse(output=output, truncated=False, exit_status=self._status(terminal_id))

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        await self.processes[terminal_id].wait()
        status = self._status(terminal_id)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.requests.append(("kill", terminal_id))
        self.processes[terminal_id].kill()
        await self.processes[terminal_id].wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.requests.append(("release", terminal_id))


@contextlib.asynccontextmanager
async def spawn_tau(
    tau: TauCommand, client: RecordingClient, *extra: str, model: bool = True
) -> AsyncIterator[Any]:
    """The SDK's client connected to a ``tau --mode acp`` process (``--model`` the fake server's
    unless ``model`` is false); at the end, every message either side sent must have matched the
    protocol's schema exactly."""
    wire = WireChecker()
    with wire.sdk_errors():
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "tau",
            "--mode",
            "acp",
            *(MODEL if model else []),
            *extra,
            env=tau.env,
            cwd=str(tau.work),
            observers=[wire.observe],
        ) as (conn, process):
            yield conn, process
    assert wire.checked > 0 and wire.problems == []


async def initialize(conn: Any, fs: bool = False, terminal: bool = False) -> Any:
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal
    )
    return await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)


class RawAcp:
    """``tau --mode acp`` spoken to line by line, for what the SDK's client would not send or
    would hide: every line tau writes must be a JSON message, and every message either way is
    checked by the wire checker."""

    def __init__(self, tau: TauCommand, *extra: str) -> None:
        self.wire = WireChecker()
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 0
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tau", "--mode", "acp", *MODEL, *extra],
            cwd=tau.work,
            env=tau.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.wire.client_sent(message)
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "tau closed its output"
        message: dict[str, Any] = json.loads(line)  # a line that is not JSON fails here
        self.wire.tau_sent(message)
        return message

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """tau's answer (result or error); the notifications before it go to ``notifications``."""
        request_id, self._next_id = self._next_id, self._next_id + 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = self.read()
            if "method" in message:
                self.notifications.append(message)
            elif message.get("id") == request_id:
                return message

    def close(self) -> str:
        """End of input: tau must exit 0 with nothing but valid messages; its stderr."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        for line in self.process.stdout:
            self.wire.tau_sent(json.loads(line))
        assert self.process.wait(timeout=10) == 0
        assert self.wire.problems == []
        return self.process.stderr.read() if self.process.stderr is not None else ""

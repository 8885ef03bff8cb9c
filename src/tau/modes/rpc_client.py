"""``RpcClient``: drive ``tau --mode rpc`` from Python.

    async with RpcClient(cwd="/path/to/project") as client:
        await client.call("prompt", message="What is in README.md?")
        async for event in client.events():
            if event["type"] == "message_update":
                print(event["assistantMessageEvent"].get("delta", ""), end="")
            if event["type"] == "agent_settled":  # retries, compaction, queued input are over
                break
        state = await client.call("get_state")

The client starts the process, numbers each command's ``id``, and routes what comes back:
responses to the ``call``/``send`` waiting for them, everything else (events, extension UI
requests, responses without an ``id``) to ``events()``. ``call`` returns the response's ``data``
and raises ``RpcError`` when ``success`` is false; ``send`` returns the whole response.
Answer an extension dialog with ``respond_ui``. ``close()`` ends the input, which lets a running
prompt finish before tau exits, and returns the exit code.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any

from tau._import_path import python_module_command
from tau.errors import TauError

__all__ = ["DEFAULT_COMMAND", "RpcClient", "RpcError"]

JsonDict = dict[str, Any]

# -P: the project folder the process works in is never on its import path.
DEFAULT_COMMAND: tuple[str, ...] = tuple(python_module_command("tau", "--mode", "rpc"))
_STREAM_LIMIT = 64 * 1024 * 1024  # one line can carry a whole message


class RpcError(TauError):
    """A command answered with ``success: false``; ``response`` is the whole answer."""

    def __init__(self, response: JsonDict) -> None:
        super().__init__(f"{response.get('command')}: {response.get('error')}")
        self.response = response


class RpcClient:
    """One ``tau --mode rpc`` process (``command`` replaces the default command line)."""

    def __init__(
        self,
        command: Sequence[str] = DEFAULT_COMMAND,
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._command = list(command)
        self._cwd = cwd
        self._env = dict(env) if env is not None else None
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[JsonDict]] = {}
        self._events: asyncio.Queue[JsonDict | None] = asyncio.Queue()
        self.lines: list[JsonDict] = []
        """Every object tau wrote, in order (responses and events)."""

    async def start(self) -> RpcClient:
        self._process = await asyncio.create_subprocess_exec(
            *self._command,
            cwd=self._cwd,
            env=self._env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=_STREAM_LIMIT,
        )
        self._reader = asyncio.create_task(self._read_output())
        return self

    async def __aenter__(self) -> RpcClient:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._process is not None and self._process.returncode is None:
            if exc is not None:
                self._process.kill()
            await self.close()

    @property
    def process(self) -> asyncio.subprocess.Process:
        if self._process is None:
            raise RuntimeError("RpcClient.start() has not been called")
        return self._process

    # -- commands ------------------------------------------------------------------------------

    async def send(self, command: Mapping[str, Any], *, timeout: float | None = 60) -> JsonDict:
        """Send ``command`` with a fresh ``id`` (unless it has one) and return its response."""
        message = dict(command)
        message.setdefault("id", f"c{next(self._ids)}")
        command_id = str(message["id"])
        future: asyncio.Future[JsonDict] = asyncio.get_running_loop().create_future()
        self._waiting[command_id] = future
        # ASCII: a lone surrogate in a message travels as its \u escape (UTF-8 cannot hold it).
        await self.write_line(json.dumps(message))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._waiting.pop(command_id, None)

    async def call(self, command_type: str, *, timeout: float | None = 60, **fields: Any) -> Any:
        """Run a command and return its ``data`` (``None`` when it has none); ``RpcError`` on failure."""
        response = await self.send({"type": command_type, **fields}, timeout=timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    async def respond_ui(self, request_id: str, **answer: Any) -> None:
        """Answer an ``extension_ui_request``: ``value=…``, ``confirmed=…`` or ``cancelled=True``."""
        await self.write_line(json.dumps({"type": "extension_ui_response", "id": request_id, **answer}))

    async def write_line(self, line: str, *, end: str = "\n") -> None:
        """Write raw text to tau's stdin (for framing tests; ``send`` is the usual way)."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write((line + end).encode())
        await stdin.drain()

    # -- events --------------------------------------------------------------------------------

    async def next_event(self, *, timeout: float | None = 60) -> JsonDict | None:
        """The next event (``None`` once tau's output has ended)."""
        return await asyncio.wait_for(self._events.get(), timeout)

    async def events(self, *, timeout: float | None = 60) -> AsyncIterator[JsonDict]:
        """Events as they come, until tau's output ends."""
        while (event := await self.next_event(timeout=timeout)) is not None:
            yield event

    async def wait_for(self, event_type: str, *, timeout: float | None = 60) -> list[JsonDict]:
        """Collect events up to and including the first of ``event_type``."""
        seen: list[JsonDict] = []
        async for event in self.events(timeout=timeout):
            seen.append(event)
            if event.get("type") == event_type:
                return seen
        raise EOFError(f"tau's output ended before a {event_type} event")

    async def prompt(self, message: str, *, timeout: float | None = 60, **fields: Any) -> list[JsonDict]:
        """Send a prompt and return its events through ``agent_settled`` (none when a command or an
        extension handled it: no run starts then)."""
        data = await self.call("prompt", message=message, timeout=timeout, **fields)
        if isinstance(data, dict) and data.get("disposition") == "handled":
            return []
        return await self.wait_for("agent_settled", timeout=timeout)

    # -- ending --------------------------------------------------------------------------------

    async def close(self, *, timeout: float | None = 60) -> int:
        """End tau's input (a running prompt finishes first) and return its exit code."""
        process = self.process
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        code = await asyncio.wait_for(process.wait(), timeout)
        if self._reader is not None:
            await self._reader
        return code

    async def stderr_text(self) -> str:
        """What tau wrote to stderr (once it has exited)."""
        stderr = self.process.stderr
        return (await stderr.read()).decode(errors="replace") if stderr is not None else ""

    async def _read_output(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while line := await stdout.readline():
                data = json.loads(line)
                self.lines.append(data)
                future = self._waiting.get(str(data.get("id"))) if data.get("type") == "response" else None
                if future is not None and not future.done():
                    future.set_result(data)
                else:
                    self._events.put_nowait(data)
        finally:
            self._events.put_nowait(None)

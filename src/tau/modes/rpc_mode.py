"""RPC mode (``--mode rpc``): JSON commands on stdin, responses and session events on stdout.

Framing (spec 70 §5.1): one JSON object per line in each direction. Input is split on ``\\n`` only
(U+2028/U+2029 inside strings are data), one trailing ``\\r`` is dropped, and a last line without
``\\n`` still runs at end of input. Output is protocol objects only; the host takes stdout for it
before anything loads (``stdout_guard.StdoutGuard``), so stray prints cannot corrupt it.

Commands run as they arrive, each in its own task, so ``abort`` or ``abort_bash`` reach a long
``prompt``, ``compact`` or ``bash``. A response echoes the command's ``id``; events never carry one.
As in pi, ``prompt`` is answered once the session has accepted it, with its ``disposition``
(``started``: the run is about to start, the response precedes ``agent_start``; ``queued``;
``handled`` by a command or an extension); a failure later in the run only shows up as events, and
``agent_settled`` says the session will not go on by itself. Commands that emit events at once (``set_model``, ``abort_retry``, ``steer``...) are
answered after those events.

Where tau differs from pi: end of input does not drop a running prompt. The run (with its retries
and compaction) finishes, its events are written, then the session is disposed and the exit code
is 0. SIGTERM/SIGHUP abort the run cleanly (the aborted reply is recorded, so the session file stays
whole) and exit with 143/129. An extension's ``ctx.shutdown()`` stops the mode with exit code 0 once
the command being handled has written its response (at once when no command is being handled);
running work is aborted as on a signal.

The host calls::

    code = await run_rpc_mode(runtime, out=StdoutGuard(as_descriptor=False).stream)

with an ``AgentSessionRuntime`` (needed by ``new_session``, ``switch_session``, ``fork`` and
``clone``; a bare ``AgentSession`` answers those with an error). ``run_rpc_mode`` disposes the
runtime or session itself before it returns.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TextIO

from tau.ai.redaction import redact
from tau.ai.types import ImageContent
from tau.extensions.errors import ExtensionErrorReport
from tau.modes.event_lines import EventLineWriter, dumps
from tau.modes.line_output import LineOutput
from tau.modes.rpc_commands import ANSWERED, COMMANDS, NO_DATA, RpcCommandError
from tau.modes.rpc_ui import RpcExtensionUI
from tau.runtime.agent_session import AgentSession
from tau.runtime.errors import SessionBusyError
from tau.runtime.runtime import AgentSessionRuntime
from tau.runtime.session_prompt import InputDisposition, StreamingBehavior

__all__ = ["run_rpc_mode"]

JsonDict = dict[str, Any]

SIGNAL_EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}
_READ_SIZE = 1 << 16
_BEHAVIORS: dict[str, StreamingBehavior] = {"steer": "steer", "followUp": "follow_up"}
# Commands whose own events (thinking_level_changed, queue_update, auto_retry_end, ...) pi writes
# before their response. Not every command waits: the queue may sit behind an automatic
# compaction, and get_state or abort must not wait for that.
_ANSWERED_AFTER_EVENTS = frozenset(
    {
        "steer",
        "follow_up",
        "clear_queue",
        "set_model",
        "cycle_model",
        "set_thinking_level",
        "cycle_thinking_level",
        "abort_retry",
        "compact",
        "set_session_name",
        # The new session's session_start handlers may have announced entries (pi 1.6 order).
        "new_session",
        "switch_session",
        "fork",
        "clone",
    }
)
_BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."


async def run_rpc_mode(
    runtime_or_session: AgentSessionRuntime | AgentSession,
    *,
    stdin: asyncio.StreamReader | None = None,
    out: TextIO,
) -> int:
    """Serve RPC commands from ``stdin`` (default: the process's stdin) until end of input or a
    signal; returns the exit code (0, or 143/129 after SIGTERM/SIGHUP).

    Extensions get the RPC dialogs as their UI; their errors are written as ``extension_error``
    objects. A runtime carries that binding over to a new, switched or forked session.
    """
    mode = _RpcMode(runtime_or_session, out)

    def report_extension_error(report: ExtensionErrorReport) -> None:
        mode._write_object(
            {
                "type": "extension_error",
                "extensionPath": report.extension_path,
                "event": report.event,
                "error": redact(report.error),
            }
        )

    await mode.session.bind_extensions(
        mode.ui, on_error=report_extension_error, shutdown_handler=mode.request_shutdown, mode="rpc"
    )
    reader = stdin if stdin is not None else await _stdin_reader()
    return await mode.serve(reader)


class _RpcMode:
    def __init__(self, target: AgentSessionRuntime | AgentSession, out: TextIO) -> None:
        self._runtime = target if isinstance(target, AgentSessionRuntime) else None
        self._bare_session = target if isinstance(target, AgentSession) else None
        self._output = LineOutput(out, json_lines=True)
        self._events = EventLineWriter(self._write_line)
        self.ui = RpcExtensionUI(self._write_object)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._prompt_gate = asyncio.Lock()
        self._stopped: asyncio.Future[int] | None = None
        self._commands_running = 0
        self._shutdown_requested = False
        self._follow(self.session)

    def request_shutdown(self) -> None:
        """``ctx.shutdown()``: stop after the current command's response, or now if there is none."""
        self._shutdown_requested = True
        if self._commands_running == 0:
            self._stop(0)

    def _stop(self, code: int) -> None:
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(code)

    # -- CommandContext ------------------------------------------------------------------------

    @property
    def session(self) -> AgentSession:
        if self._runtime is not None:
            return self._runtime.session
        assert self._bare_session is not None
        return self._bare_session

    @property
    def runtime(self) -> AgentSessionRuntime | None:
        return self._runtime

    def _answer_builtin_fallback(self, text: str) -> bool:
        """``/mcp`` with no MCP extension loaded says there are no servers, and ``/llama`` with no
        llama.cpp extension that it is for the terminal UI, as pi 1.6 does."""
        runner = self.session.extension_runner
        registered = runner.commands if runner is not None else ()
        if text.startswith("/mcp"):
            from tau.mcp.fallback import answered_by_mode, no_servers_message

            if answered_by_mode(text, registered):
                self.ui.notify(no_servers_message(self.session.services.agent_dir), "info")
                return True
        elif text.startswith("/llama"):
            from tau.llama_cpp import fallback

            if fallback.answered_by_mode(text, registered):
                self.ui.notify(fallback.NOT_HERE, "warning")
                return True
        return False

    async def start_prompt(
        self, command_id: object, text: str, images: list[ImageContent] | None, behavior: str | None
    ) -> None:
        # One prompt at a time until accepted: a second prompt sent right behind the first must see
        # the session streaming, or both would try to start a run.
        async with self._prompt_gate:
            accepted: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def answer(disposition: InputDisposition) -> None:
                # Written here, synchronously, so the response precedes the run's agent_start.
                response = _success(command_id, "prompt")
                response["data"] = {"disposition": disposition}
                self._write_object(response)
                accepted.set_result(None)

            if self._answer_builtin_fallback(text):
                answer("handled")
                return
            run = self._track(
                self.session.prompt(
                    text,
                    images=images,
                    streaming_behavior=_BEHAVIORS.get(behavior) if behavior else None,
                    source="rpc",
                    on_accepted=answer,
                )
            )
            await asyncio.wait([run, accepted], return_when=asyncio.FIRST_COMPLETED)
            if not accepted.done():
                accepted.cancel()
                try:
                    run.result()
                except SessionBusyError as exc:
                    raise RpcCommandError(_BUSY) from exc
            elif run.done():
                run.result()
            else:
                run.add_done_callback(_report_late_failure)

    async def replace_session(self, change: Callable[[AgentSessionRuntime], Awaitable[Any]]) -> Any:
        assert self._runtime is not None
        before = self.session
        try:
            return await change(self._runtime)
        finally:
            if self.session is not before:
                self._follow(self.session)

    def write_event(self, data: JsonDict) -> None:
        self._write_object(data)

    # -- serving -------------------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader) -> int:
        loop = asyncio.get_running_loop()
        stopped: asyncio.Future[int] = loop.create_future()
        self._stopped = stopped
        if self._shutdown_requested:  # asked for during session_start
            stopped.set_result(0)
        installed = _install_signal_handlers(loop, stopped)
        reading: asyncio.Future[Any] = asyncio.create_task(self._read_commands(reader))
        try:
            await asyncio.wait([reading, stopped], return_when=asyncio.FIRST_COMPLETED)
            if not stopped.done():
                reading.result()
                # End of input: no UI answers can come any more; let running work finish.
                self.ui.close()
                await self._wait_for_tasks(stopped)
            if stopped.done():
                reading.cancel()
                self.ui.close()
                await self._abort_everything()
            return stopped.result() if stopped.done() else 0
        finally:
            for signum in installed:
                loop.remove_signal_handler(signum)
            if not reading.done():
                reading.cancel()
            await self._dispose()

    async def _read_commands(self, reader: asyncio.StreamReader) -> None:
        async for line in _lines(reader):
            if line.strip():
                self._handle_line(line)

    def _handle_line(self, line: str) -> None:
        try:
            command = json.loads(line)
        except ValueError as exc:
            self._write_object(_failure(None, "parse", f"Failed to parse command: {exc}"))
            return
        except RecursionError:  # the parser recurses once per level
            self._write_object(_failure(None, "parse", "Failed to parse command: nested too deeply"))
            return
        if not isinstance(command, dict):
            self._write_object(_failure(None, "parse", "Failed to parse command: expected a JSON object"))
            return
        if command.get("type") == "extension_ui_response":
            self.ui.resolve(command)
            return
        self._track(self._run_command(command))

    async def _run_command(self, command: JsonDict) -> None:
        self._commands_running += 1
        try:
            await self._answer_command(command)
        finally:
            self._commands_running -= 1
            if self._shutdown_requested:
                self._stop(0)

    async def _answer_command(self, command: JsonDict) -> None:
        kind = command.get("type")
        command_id = command.get("id")
        handler = COMMANDS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            self._write_object(_failure(command_id, kind, f"Unknown command: {kind}"))
            return
        try:
            data = await handler(self, command)
        except Exception as exc:  # any failure of a command is its error response
            self._write_object(_failure(command_id, kind, str(exc) or type(exc).__name__))
            return
        if data is ANSWERED:
            return
        response = _success(command_id, kind)
        if data is not NO_DATA:
            response["data"] = data
        if kind in _ANSWERED_AFTER_EVENTS:
            # Written by the pipeline itself once it has caught up: an event the run queues
            # meanwhile (the next message_start) cannot slip in before it.
            await self.session.catch_up_events(lambda: self._write_object(response))
        else:
            self._write_object(response)

    def _track(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _wait_for_tasks(self, stopped: asyncio.Future[int]) -> None:
        while self._tasks and not stopped.done():
            await asyncio.wait({*self._tasks, stopped}, return_when=asyncio.FIRST_COMPLETED)

    async def _abort_everything(self) -> None:
        session = self.session
        session.abort_bash()
        session.abort_compaction()
        await session.abort()
        if self._tasks:
            _, late = await asyncio.wait(set(self._tasks), timeout=5)
            for task in late:
                task.cancel()

    async def _dispose(self) -> None:
        if self._runtime is not None:
            await self._runtime.dispose()
        else:
            await self.session.dispose()

    # -- output --------------------------------------------------------------------------------

    def _follow(self, session: AgentSession) -> None:
        session.subscribe(self._on_event)

    def _on_event(self, event: Any) -> None:
        self._events(event)

    def _write_object(self, data: JsonDict) -> None:
        self._write_line(dumps(data))

    def _write_line(self, line: str) -> None:
        # A closed pipe or a full disk: the client is gone, and the run goes on to a clean end
        # (nothing more is written). Text the output cannot encode is written escaped: it is never
        # taken for a closed output.
        self._output.write(line + "\n")


def _success(command_id: object, command: object) -> JsonDict:
    response: JsonDict = {} if command_id is None else {"id": command_id}
    response.update(type="response", command=command, success=True)
    return response


def _failure(command_id: object, command: object, error: str) -> JsonDict:
    response: JsonDict = {} if command_id is None else {"id": command_id}
    # An exception's text can quote anything (a header, a URL with a token): never a known secret.
    response.update(type="response", command=command, success=False, error=redact(error))
    return response


def _report_late_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        print(f"tau: prompt failed: {redact(str(exc))}", file=sys.stderr)


def _install_signal_handlers(loop: asyncio.AbstractEventLoop, stopped: asyncio.Future[int]) -> list[int]:
    def on_signal(code: int) -> None:
        if not stopped.done():
            stopped.set_result(code)

    installed: list[int] = []
    for signum, code in SIGNAL_EXIT_CODES.items():
        try:
            loop.add_signal_handler(signum, on_signal, code)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return installed


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[str]:
    """The lines of ``reader``: split on ``\\n`` only, one trailing ``\\r`` dropped, the unterminated
    last line included. Splitting bytes on ``\\n`` never cuts a UTF-8 sequence, so each line decodes
    whole however the chunks fell."""
    pending = b""
    while chunk := await reader.read(_READ_SIZE):
        pending += chunk
        if b"\n" not in chunk:
            continue
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            yield _decode(raw)
    if pending:
        yield _decode(pending)


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


async def _stdin_reader() -> asyncio.StreamReader:
    """A stream over file descriptor 0: a pipe transport when stdin is a pipe or socket, else a
    reading thread (regular files and terminals)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_SIZE)
    stdin = os.fdopen(0, "rb", buffering=0, closefd=False)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        return reader
    except (ValueError, OSError):
        pass

    def pump() -> None:
        while chunk := os.read(0, _READ_SIZE):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="tau-rpc-stdin", daemon=True).start()
    return reader

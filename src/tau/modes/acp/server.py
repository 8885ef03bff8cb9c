"""The ACP agent: sessions opened, loaded and listed by the editor, prompts run, updates streamed.

One process serves every session the client opens, each with its own cwd and tau runtime. A prompt
answers when its run is over and every update it made has been sent: ``end_turn``, ``max_tokens``,
or ``cancelled`` after ``session/cancel`` (which aborts the run; the aborted reply is recorded, so
the session file stays whole). A failed run (no model, a provider error) answers with a JSON-RPC
error carrying the message. End of input or a closed pipe stops the server: running work is
aborted and every session disposed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, TextIO, cast

from acp import PROTOCOL_VERSION, Agent, RequestError
from acp.core import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
)

from tau import __version__
from tau.agent.events import ToolExecutionEnd, ToolExecutionStart
from tau.agent.tool import AgentTool
from tau.ai.redaction import redact
from tau.ai.types import AssistantMessage
from tau.extensions.errors import ExtensionErrorReport
from tau.modes.acp.client_files import ClientFileOperations, client_file_tools
from tau.modes.acp.commands import available_commands
from tau.modes.acp.permissions import AcpExtensionUI
from tau.modes.acp.prompt_blocks import PromptBlock, to_tau_prompt
from tau.modes.acp.session_config import config_options, modes, set_config_option, set_thinking_level
from tau.modes.acp.streams import stdio_streams
from tau.modes.acp.tool_calls import title_of
from tau.modes.acp.updates import SessionUpdate, UpdateSender, event_updates, history_updates
from tau.runtime.agent_session import AgentSession
from tau.runtime.runtime import AgentSessionRuntime
from tau.session.errors import SessionError
from tau.session.listing import find_session, list_all_sessions, list_sessions, read_header
from tau.session.manager import SessionManager

__all__ = ["SessionOpener", "run_acp_mode"]

_SIGNAL_EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}


@dataclass(frozen=True, slots=True)
class SessionOpener:
    """What the host (the CLI) decides about sessions: where a cwd's session files go, and how a
    runtime is built for a session manager with the ACP session's own tools."""

    agent_dir: str
    session_dir: Callable[[str], str]
    open_runtime: Callable[[SessionManager, Sequence[AgentTool]], AgentSessionRuntime]


@dataclass(slots=True)
class _Live:
    runtime: AgentSessionRuntime
    cwd: str
    args_by_call: dict[str, Any] = field(default_factory=dict)
    running_call: tuple[str, str] | None = None
    cancelled: bool = False
    prompting: bool = False


async def run_acp_mode(opener: SessionOpener, *, out: TextIO) -> int:
    """Serve ACP on stdin and ``out`` until end of input or a signal; the exit code."""
    reader, writer = await stdio_streams(out)
    agent = TauAcpAgent(opener)
    conn = AgentSideConnection(cast(Agent, agent), writer, reader, listening=False)
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()

    def on_signal(code: int) -> None:
        if not stopped.done():
            stopped.set_result(code)

    installed: list[signal.Signals] = []
    for signum, code in _SIGNAL_EXIT_CODES.items():
        try:
            loop.add_signal_handler(signum, on_signal, code)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    listening: asyncio.Future[None] = asyncio.ensure_future(conn.listen())
    try:
        waiting: list[asyncio.Future[Any]] = [listening, stopped]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        return stopped.result() if stopped.done() else 0
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
        listening.cancel()
        await agent.shutdown()
        with contextlib.suppress(Exception):  # already broken: nothing more can reach the client
            await asyncio.wait_for(conn.close(), 2)


class TauAcpAgent:
    """The ``acp.Agent`` side of tau (method names and parameters are the SDK's)."""

    def __init__(self, opener: SessionOpener) -> None:
        self._opener = opener
        self._conn: Any = None
        self._client = ClientCapabilities()
        self._sessions: dict[str, _Live] = {}
        self._sender: UpdateSender | None = None

    def on_connect(self, conn: Any) -> None:
        self._conn = conn
        self._sender = UpdateSender(self._send)

    async def _send(self, session_id: str, update: SessionUpdate) -> None:
        await self._conn.session_update(session_id=session_id, update=update)

    def _put(self, session_id: str, update: SessionUpdate) -> None:
        assert self._sender is not None
        self._sender.put(session_id, update)

    async def shutdown(self) -> None:
        for live in list(self._sessions.values()):
            session = live.runtime.session
            session.abort_bash()
            session.abort_compaction()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.abort(), 5)
            await live.runtime.dispose()
        self._sessions.clear()
        if self._sender is not None:
            await self._sender.close()

    # -- connection ----------------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._client = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="tau", title="tau", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise RequestError.invalid_params(
            {"message": "tau offers no login methods; use `tau auth` in a terminal"}
        )

    # -- sessions ------------------------------------------------------------------------------

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        cwd = _checked_cwd(cwd)
        manager = SessionManager.create(cwd, self._opener.session_dir(cwd), agent_dir=self._opener.agent_dir)
        live = await self._open(manager, cwd)
        return NewSessionResponse(
            session_id=manager.get_session_id(),
            modes=modes(live.runtime),
            config_options=config_options(live.runtime),
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kwargs: Any
    ) -> LoadSessionResponse:
        cwd = _checked_cwd(cwd)
        if session_id in self._sessions:
            live = self._sessions[session_id]
        else:
            path = self._find(session_id, cwd)
            try:
                manager = SessionManager.open(path, self._opener.session_dir(cwd), cwd_override=cwd)
            except SessionError as exc:
                raise RequestError.invalid_params({"message": str(exc)}) from exc
            live = await self._open(manager, cwd)
        for update in history_updates(live.runtime.session.messages, cwd):
            self._put(session_id, update)
        assert self._sender is not None
        await self._sender.flush()
        return LoadSessionResponse(modes=modes(live.runtime), config_options=config_options(live.runtime))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        infos = list_sessions(self._opener.session_dir(cwd)) if cwd else list_all_sessions()
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=info.id,
                    cwd=info.cwd,
                    title=info.name or info.first_message,
                    updated_at=info.modified.astimezone(UTC).isoformat().replace("+00:00", "Z"),
                )
                for info in infos
            ]
        )

    def _find(self, session_id: str, cwd: str) -> str:
        try:
            found = find_session(
                session_id, cwd, self._opener.session_dir(cwd), agent_dir=self._opener.agent_dir
            )
        except SessionError:
            found = None
        header = read_header(found.path) if found is not None else None
        if found is None or header is None or header.get("id") != session_id:
            raise RequestError.resource_not_found(session_id)
        return found.path

    async def _open(self, manager: SessionManager, cwd: str) -> _Live:
        session_id = manager.get_session_id()
        files = ClientFileOperations(
            self._conn,
            session_id,
            can_read=bool(self._client.fs and self._client.fs.read_text_file),
            can_write=bool(self._client.fs and self._client.fs.write_text_file),
        )
        runtime = self._opener.open_runtime(manager, client_file_tools(cwd, files))
        live = _Live(runtime, cwd)
        self._sessions[session_id] = live

        def on_event(event: Any) -> None:
            if isinstance(event, ToolExecutionStart):
                live.running_call = (event.tool_call_id, title_of(event.tool_name, event.args))
            elif isinstance(event, ToolExecutionEnd):
                live.running_call = None
            for update in event_updates(event, cwd, live.args_by_call):
                self._put(session_id, update)

        runtime.session.subscribe(on_event)

        def rebind(session: AgentSession) -> None:  # an extension replaced the session
            session.subscribe(on_event)

        runtime.set_rebind_session(rebind)

        def report_error(report: ExtensionErrorReport) -> None:
            print(
                f"tau: extension error ({report.extension_path}, {report.event}): {redact(report.error)}",
                file=sys.stderr,
            )

        ui = AcpExtensionUI(self._conn, session_id, lambda: live.running_call)
        await runtime.session.bind_extensions(ui, on_error=report_error)
        # After the response that names the session: a client ignores updates of unknown sessions.
        asyncio.get_running_loop().call_soon(self._put, session_id, available_commands(runtime.session))
        return live

    def _live(self, session_id: str) -> _Live:
        live = self._sessions.get(session_id)
        if live is None:
            raise RequestError.invalid_params(
                {"message": f"no open session {session_id}; call session/new or session/load"}
            )
        return live

    # -- prompts -------------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        if live.prompting:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        text, images = to_tau_prompt(prompt)
        session = live.runtime.session
        live.prompting, live.cancelled = True, False
        try:
            await session.prompt(text, images=images or None, source="rpc")
        except Exception as exc:
            if not live.cancelled:
                raise RequestError.internal_error(
                    {"message": redact(str(exc) or type(exc).__name__)}
                ) from exc
        finally:
            live.prompting = False
            assert self._sender is not None
            await self._sender.flush()
        return PromptResponse(stop_reason=_stop_reason(live, session.messages))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self._sessions.get(session_id)
        if live is None or not live.prompting:
            return
        live.cancelled = True
        await live.runtime.session.abort()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        set_thinking_level(self._live(session_id).runtime, mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id)
        await set_config_option(live.runtime, config_id, value)
        return SetSessionConfigOptionResponse(config_options=config_options(live.runtime))


def _stop_reason(live: _Live, messages: list[Any]) -> StopReason:
    if live.cancelled:
        return "cancelled"
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is not None:
        if last.stop_reason == "aborted":
            return "cancelled"
        if last.stop_reason == "length":
            return "max_tokens"
        if last.stop_reason == "error":
            raise RequestError.internal_error(
                {"message": redact(last.error_message or "the model request failed")}
            )
    return "end_turn"


def _checked_cwd(cwd: str) -> str:
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise RequestError.invalid_params(
            {"message": f"cwd must be an existing absolute folder, not {cwd!r}"}
        )
    return cwd

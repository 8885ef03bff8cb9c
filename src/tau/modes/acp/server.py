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
import gc
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from tau import __version__
from tau._contained import file_name_problem
from tau.agent.events import MessageEnd, ToolExecutionEnd, ToolExecutionStart
from tau.agent.tool import AgentTool
from tau.ai.redaction import redact
from tau.ai.types import AssistantMessage, Usage
from tau.config.settings import SettingsManager
from tau.modes.acp.auth import LOGIN_METHOD_IDS, NO_MODEL, auth_methods
from tau.modes.acp.client_files import ClientFileOperations, client_file_tools
from tau.modes.acp.commands import available_commands
from tau.modes.acp.jsonrpc import PROTOCOL_VERSION, Connection, JsonRpcError, param
from tau.modes.acp.mcp_servers import MCP_CAPABILITIES, mcp_json_entries
from tau.modes.acp.permissions import AcpExtensionUI
from tau.modes.acp.prompt_blocks import to_tau_prompt
from tau.modes.acp.session_config import config_options, modes, set_config_option, set_thinking_level
from tau.modes.acp.streams import stdio_streams
from tau.modes.acp.terminal import TerminalBashOperations, terminal_bash_tool
from tau.modes.acp.tool_calls import title_of
from tau.modes.acp.updates import event_updates, history_updates, terminal_content
from tau.modes.acp.usage import prompt_usage, usage_update
from tau.runtime.agent_session import AgentSession
from tau.runtime.runtime import AgentSessionRuntime
from tau.runtime.shell_environment import SessionShellEnvironment
from tau.runtime.subagents import TASK_TOOL_NAME
from tau.session.errors import SessionError
from tau.session.listing import find_session, list_all_sessions, list_sessions, read_header
from tau.session.manager import SessionManager
from tau.tools.images import ImageLimits

if TYPE_CHECKING:
    from tau.extensions.errors import ExtensionErrorReport

__all__ = ["SessionOpener", "run_acp_mode"]

_SIGNAL_EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129}


class SessionOpener(Struct, frozen=True):
    """What the host (the CLI) decides about sessions: where a cwd's session files go, whether a
    cwd is trusted (``decide_trust`` first lets the user's extensions answer for a cwd met for the
    first time; nobody is asked), how a runtime is built for a session manager with the ACP
    session's own built-in tools (read, write and edit on the editor's files, bash in its
    terminals) and MCP servers (mcp.json entries by name), and ``reload_credentials``, which
    re-reads the credentials after a login and tells whether a model is available now."""

    agent_dir: str
    session_dir: Callable[[str], Awaitable[str]]
    """A cwd's session folder (its trust decided first when its settings would choose it)."""
    open_runtime: Callable[[SessionManager, Sequence[AgentTool], Mapping[str, Any]], AgentSessionRuntime]
    decide_trust: Callable[[str], Awaitable[None]]
    project_trusted: Callable[[str], bool]
    reload_credentials: Callable[[], bool]


class _Live(Struct):
    runtime: AgentSessionRuntime
    cwd: str
    args_by_call: dict[str, Any] = field(default_factory=dict)
    terminals: dict[str, str] = field(default_factory=dict)  # bash call id -> the editor's terminal
    old_texts: dict[str, str | None] = field(default_factory=dict)  # write call id -> what it replaced
    held_halves: dict[str, str] = field(default_factory=dict)  # chunk kind -> a pair's first half
    running_call: tuple[str, str] | None = None
    cancelled: bool = False
    prompting: bool = False
    replies: list[Usage] = field(default_factory=list)  # the running prompt's model calls
    task_calls: set[str] = field(default_factory=set)  # running task calls: their children's calls show


async def run_acp_mode(opener: SessionOpener, *, out_fd: int) -> int:
    """Serve ACP on stdin and ``out_fd`` (the ``StdoutGuard``'s descriptor) until end of input or a
    signal; the exit code."""
    reader, writer = await stdio_streams(out_fd)
    conn = Connection(reader, writer)
    agent = TauAcpAgent(opener, conn)
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
    listening: asyncio.Future[None] = asyncio.ensure_future(conn.serve(agent.handle))
    try:
        waiting: list[asyncio.Future[Any]] = [listening, stopped]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        return stopped.result() if stopped.done() else 0
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
        listening.cancel()
        await agent.shutdown()
        await conn.drain()
        await conn.close()


class TauAcpAgent:
    """The agent side of ACP: one handler per method, parameters and results in the protocol's
    camelCase."""

    def __init__(self, opener: SessionOpener, conn: Connection) -> None:
        self._opener = opener
        self._conn = conn
        self._client: dict[str, Any] = {}
        self._sessions: dict[str, _Live] = {}
        self._methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/load": self.load_session,
            "session/list": self.list_sessions,
            "session/prompt": self.prompt,
            "session/cancel": self.cancel,
            "session/set_mode": self.set_session_mode,
            "session/set_config_option": self.set_config_option,
        }

    async def handle(self, method: str, params: dict[str, Any]) -> Any:
        handler = self._methods.get(method)
        if handler is None:
            raise JsonRpcError.method_not_found(method)
        return await handler(params)

    def _put(self, session_id: str, update: dict[str, Any]) -> None:
        self._conn.notify("session/update", {"sessionId": session_id, "update": update})

    async def shutdown(self) -> None:
        for live in list(self._sessions.values()):
            session = live.runtime.session
            session.abort_bash()
            session.abort_compaction()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.abort(), 5)
            await live.runtime.dispose()
        self._sessions.clear()

    # -- connection ----------------------------------------------------------------------------

    async def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        param(params, "protocolVersion", int)
        capabilities = param(params, "clientCapabilities", dict, None)
        self._client = capabilities or {}
        return {
            # tau speaks one version: the client's when it asks for that one, and otherwise too (the
            # latest tau supports, as the protocol has it; the client decides whether to go on).
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "sessionCapabilities": {"list": {}},
                "mcpCapabilities": MCP_CAPABILITIES,
            },
            "agentInfo": {"name": "tau", "title": "tau", "version": __version__},
            "authMethods": auth_methods(terminal=self._can("auth", "terminal")),
        }

    async def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        method = param(params, "methodId", str)
        if method not in LOGIN_METHOD_IDS:
            raise JsonRpcError.invalid_params(f"unknown authentication method {method}")
        if not self._opener.reload_credentials():
            raise JsonRpcError.auth_required(NO_MODEL)
        return {}

    def _can(self, group: str, capability: str) -> bool:
        offered = self._client.get(group)
        return isinstance(offered, dict) and offered.get(capability) is True

    # -- sessions ------------------------------------------------------------------------------

    async def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = _checked_cwd(param(params, "cwd", str))
        servers = mcp_json_entries(params.get("mcpServers"))
        folder = await self._opener.session_dir(cwd)
        manager = SessionManager.create(cwd, folder, agent_dir=self._opener.agent_dir)
        live = await self._open(manager, cwd, servers)
        return {
            "sessionId": manager.get_session_id(),
            "modes": modes(live.runtime),
            "configOptions": config_options(live.runtime),
        }

    async def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = _checked_cwd(param(params, "cwd", str))
        session_id = param(params, "sessionId", str)
        if session_id in self._sessions:
            live = self._sessions[session_id]
        else:
            servers = mcp_json_entries(params.get("mcpServers"))
            folder = await self._opener.session_dir(cwd)
            path = self._find(session_id, cwd, folder)
            try:
                manager = SessionManager.open(path, folder, cwd_override=cwd)
            except SessionError as exc:
                raise JsonRpcError.invalid_params(str(exc)) from exc
            live = await self._open(manager, cwd, servers)
        for update in history_updates(live.runtime.session.messages, cwd):
            self._put(session_id, update)
        self._put_usage(session_id, live)
        await self._conn.drain()
        return {"modes": modes(live.runtime), "configOptions": config_options(live.runtime)}

    async def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = param(params, "cwd", str, None)
        infos = list_sessions(await self._opener.session_dir(cwd)) if cwd else list_all_sessions()
        sessions = []
        for info in infos:
            entry = {
                "sessionId": info.id,
                "cwd": info.cwd,
                "updatedAt": info.modified.astimezone(UTC).isoformat().replace("+00:00", "Z"),
            }
            if title := info.name or info.first_message:
                entry["title"] = title
            sessions.append(entry)
        return {"sessions": sessions}

    def _find(self, session_id: str, cwd: str, folder: str) -> str:
        if file_name_problem(session_id) is not None:  # an id, never a path to some file
            raise JsonRpcError.resource_not_found(session_id)
        try:
            found = find_session(session_id, cwd, folder, agent_dir=self._opener.agent_dir)
        except SessionError:
            found = None
        header = read_header(found.path) if found is not None else None
        if found is None or header is None or header.get("id") != session_id:
            raise JsonRpcError.resource_not_found(session_id)
        return found.path

    async def _open(self, manager: SessionManager, cwd: str, mcp_servers: Mapping[str, Any]) -> _Live:
        session_id = manager.get_session_id()
        files = ClientFileOperations(
            self._conn,
            session_id,
            can_read=self._can("fs", "readTextFile"),
            can_write=self._can("fs", "writeTextFile"),
        )
        old_texts: dict[str, str | None] = {}

        def auto_resize_images() -> bool:  # asked per read, once the runtime below exists
            return runtime.session.services.settings_manager.auto_resize_images

        def image_limits() -> ImageLimits:  # the current model's, asked per read
            return runtime.session.image_limits()

        tools = client_file_tools(cwd, files, old_texts, auto_resize_images, image_limits)
        await self._opener.decide_trust(manager.get_cwd())
        shell_environment = SessionShellEnvironment()
        if self._client.get("terminal") is True:

            def on_terminal(call_id: str, terminal_id: str) -> None:
                self._sessions[session_id].terminals[call_id] = terminal_id
                update = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
                self._put(session_id, {**update, "content": [terminal_content(terminal_id)]})

            # An untrusted folder's settings must not choose what runs before every command.
            trusted = self._opener.project_trusted(manager.get_cwd())
            prefix = SettingsManager.create(cwd, self._opener.agent_dir, project=trusted).shell_command_prefix
            ops = TerminalBashOperations(self._conn, session_id, on_terminal)
            tools.append(terminal_bash_tool(cwd, ops, prefix, shell_environment))
        # Opening a session builds long-lived objects only (as the CLI's start-up does): no
        # collection while it runs, and what it made is frozen so that later passes skip it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            runtime = self._opener.open_runtime(manager, tools, mcp_servers)
        finally:
            gc.freeze()
            if collecting:
                gc.enable()
        shell_environment.attach(lambda: runtime.session)
        if runtime.session.model is None:  # no credentials yet: the client offers its login
            await runtime.dispose()
            raise JsonRpcError.auth_required(NO_MODEL)
        live = _Live(runtime, cwd, old_texts=old_texts)
        self._sessions[session_id] = live

        def on_event(event: Any) -> None:
            parent = getattr(event, "parent_tool_call_id", None)
            if parent is not None and parent not in live.task_calls:
                return  # a call a tool made (a codemode script's): reported by its caller's result
            if isinstance(event, ToolExecutionStart) and event.tool_name == TASK_TOOL_NAME:
                live.task_calls.add(event.tool_call_id)
            elif isinstance(event, ToolExecutionEnd):
                live.task_calls.discard(event.tool_call_id)
            if parent is not None:  # a sub-agent's call: a call of its own, naming the task call
                for update in event_updates(
                    event, cwd, live.args_by_call, live.terminals, live.old_texts, live.held_halves
                ):
                    self._put(session_id, {**update, "_meta": {"parentToolCallId": parent}})
                return
            if isinstance(event, ToolExecutionStart):
                live.running_call = (event.tool_call_id, title_of(event.tool_name, event.args))
            elif isinstance(event, ToolExecutionEnd):
                live.running_call = None
            elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
                live.replies.append(event.message.usage)
            for update in event_updates(
                event, cwd, live.args_by_call, live.terminals, live.old_texts, live.held_halves
            ):
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
        await runtime.session.bind_extensions(ui, on_error=report_error, mode="rpc")
        # After the response that names the session: a client ignores updates of unknown sessions.
        asyncio.get_running_loop().call_soon(self._put, session_id, available_commands(runtime.session))
        return live

    def _live(self, session_id: str) -> _Live:
        live = self._sessions.get(session_id)
        if live is None:
            raise JsonRpcError.invalid_params(
                f"no open session {session_id}; call session/new or session/load"
            )
        return live

    # -- prompts -------------------------------------------------------------------------------

    async def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = param(params, "sessionId", str)
        live = self._live(session_id)
        if live.prompting:
            raise JsonRpcError.invalid_request("a prompt is already running in this session")
        text, images = to_tau_prompt(param(params, "prompt", list))
        session = live.runtime.session
        live.prompting, live.cancelled = True, False
        live.replies = []
        try:
            await session.prompt(text, images=images or None, source="rpc")
        except Exception as exc:
            if not live.cancelled:
                raise JsonRpcError.internal_error(redact(str(exc) or type(exc).__name__)) from exc
        finally:
            live.prompting = False
            self._put_usage(session_id, live)
            await self._conn.drain()
        return {"stopReason": _stop_reason(live, session.messages), "usage": prompt_usage(live.replies)}

    def _put_usage(self, session_id: str, live: _Live) -> None:
        update = usage_update(live.runtime.session)
        if update is not None:
            self._put(session_id, update)

    async def cancel(self, params: dict[str, Any]) -> None:
        live = self._sessions.get(param(params, "sessionId", str))
        if live is None or not live.prompting:
            return
        live.cancelled = True
        await live.runtime.session.abort()

    # The thinking level is both the mode and a config option: a change through one is told as the
    # other's update, for a client that shows that one.

    async def set_session_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = param(params, "sessionId", str)
        live = self._live(session_id)
        set_thinking_level(live.runtime, param(params, "modeId", str))
        options = config_options(live.runtime)
        self._put(session_id, {"sessionUpdate": "config_option_update", "configOptions": options})
        return {}

    async def set_config_option(self, params: dict[str, Any]) -> dict[str, Any]:
        session_id = param(params, "sessionId", str)
        live = self._live(session_id)
        level = live.runtime.session.thinking_level
        await set_config_option(live.runtime, param(params, "configId", str), params.get("value"))
        if live.runtime.session.thinking_level != level:  # chosen, or clamped to the new model's
            mode = live.runtime.session.thinking_level
            self._put(session_id, {"sessionUpdate": "current_mode_update", "currentModeId": mode})
        return {"configOptions": config_options(live.runtime)}


def _stop_reason(live: _Live, messages: list[Any]) -> str:
    if live.cancelled:
        return "cancelled"
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is not None:
        if last.stop_reason == "aborted":
            return "cancelled"
        if last.stop_reason == "length":
            return "max_tokens"
        if last.stop_reason == "error":
            raise JsonRpcError.internal_error(redact(last.error_message or "the model request failed"))
    return "end_turn"


def _checked_cwd(cwd: str) -> str:
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise JsonRpcError.invalid_params(f"cwd must be an existing absolute folder, not {cwd!r}")
    return cwd

"""``AgentSessionRuntime``: owns the active session and replaces it (new, resume, fork).

A session is bound to its working directory, so replacing it rebuilds everything the cwd decides
(settings, context files, skills, templates, extensions) through the factory, with the *target*
session's cwd. Extensions may veto a replacement (``session_before_switch`` /
``session_before_fork``); the old session's extensions then get ``session_shutdown`` and it is
disposed; the new session's extensions are bound like the old ones were and get
``session_start``. A listener the host wants on every session is re-attached by the rebind
callback.

    runtime = create_agent_session_runtime(session_runtime_factory(), cwd=cwd, agent_dir=agent_dir,
                                           session_manager=SessionManager.create(cwd))
    await runtime.switch_session("/path/to/other.jsonl")
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Literal, Protocol

from msgspec import Struct, field

from tau.accounts.auth_storage import AuthStorage
from tau.accounts.model_resolver import ScopedModel
from tau.agent.tool import AgentTool
from tau.ai.types import Model, TextContent, ThinkingLevelOrOff, UserMessage
from tau.runtime.agent_session import AgentSession
from tau.runtime.errors import AgentSessionError, MissingSessionCwdError
from tau.runtime.extension_loading import ExtensionOptions
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import (
    AgentSessionServices,
    ResourceOptions,
    ServiceDiagnostic,
    create_agent_session_services,
)
from tau.runtime.session_extensions import ExtensionBinding
from tau.runtime.tool_registry import NoTools
from tau.session.entries import MessageEntry
from tau.session.errors import SessionFileError
from tau.session.listing import header_problem
from tau.session.manager import SessionManager

if TYPE_CHECKING:
    from tau.extensions.events import ShutdownReason, StartReason
    from tau.extensions.runner import ExtensionRunner

__all__ = [
    "AgentSessionRuntime",
    "CreatedRuntime",
    "ForkResult",
    "ForkTargetError",
    "RuntimeFactory",
    "SessionChange",
    "create_agent_session_runtime",
    "session_runtime_factory",
]


class ForkTargetError(AgentSessionError, ValueError):
    """A fork that cannot be made, in pi 1.6's words: an unknown entry, ``fork(entry_id, "before")``
    on an entry that is not a user message, or a persisted session whose file is not written yet
    (nothing has been answered)."""


_INVALID_FORK_ENTRY = "Invalid entry ID for forking"
_NOT_SAVED_YET = "This session has not been saved yet. Send a message before cloning or forking it."


class CreatedRuntime(Struct):
    """What a runtime factory builds for one session."""

    session: AgentSession
    services: AgentSessionServices
    diagnostics: list[ServiceDiagnostic] = field(default_factory=list)
    model_fallback_message: str | None = None


class RuntimeFactory(Protocol):
    def __call__(self, *, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime: ...


class SessionChange(Struct, frozen=True):
    """The outcome of a replacement; ``cancelled`` when an extension vetoed it."""

    cancelled: bool = False


class ForkResult(Struct, frozen=True):
    """``selected_text``: the text of the user message forked *before* (for the editor)."""

    cancelled: bool = False
    selected_text: str | None = None


RebindSession = Callable[[AgentSession], "Awaitable[None] | None"]


def session_runtime_factory(
    *,
    auth_storage: AuthStorage | None = None,
    resource_options: ResourceOptions | None = None,
    extension_options: ExtensionOptions | None = None,
    model: Model | None = None,
    thinking_level: ThinkingLevelOrOff | None = None,
    scoped_models: Sequence[ScopedModel] | None = None,
    tools: list[str] | None = None,
    no_tools: NoTools | None = None,
    custom_tools: Sequence[AgentTool] | None = None,
    exclude_tools: Sequence[str] = (),
    builtin_replacements: Sequence[AgentTool] = (),
    project_trusted: Callable[[str], bool] | None = None,
    preloaded_extensions: Callable[[str], ExtensionRunner | None] | None = None,
    prebuilt_services: Callable[[str], AgentSessionServices | None] | None = None,
    sandbox_mode: str | None = None,
) -> RuntimeFactory:
    """A factory building fresh services for each cwd (sharing ``auth_storage``, so runtime API keys
    survive a switch) and a session with the given options. ``project_trusted(cwd)`` decides whether
    a folder's own configuration and extensions load (default: they do); ``preloaded_extensions(cwd)``
    hands over the extensions already loaded to decide that, if any; ``prebuilt_services(cwd)`` the
    services already built for that cwd with these options (the CLI's start-up ones), if any;
    ``sandbox_mode`` (``--sandbox``) the mode over each folder's ``sandbox`` setting."""

    def create(*, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime:
        prebuilt = prebuilt_services(cwd) if prebuilt_services is not None else None
        services = prebuilt or create_agent_session_services(
            cwd=cwd,
            agent_dir=agent_dir,
            auth_storage=auth_storage,
            resource_options=resource_options,
            extension_options=extension_options,
            project_trusted=project_trusted(cwd) if project_trusted is not None else True,
            preloaded_extensions=preloaded_extensions(cwd) if preloaded_extensions is not None else None,
            sandbox_mode=sandbox_mode,
        )
        result = create_agent_session(
            services=services,
            session_manager=session_manager,
            model=model,
            thinking_level=thinking_level,
            scoped_models=scoped_models,
            tools=tools,
            no_tools=no_tools,
            custom_tools=custom_tools,
            exclude_tools=exclude_tools,
            builtin_replacements=builtin_replacements,
        )
        return CreatedRuntime(
            result.session, services, list(services.diagnostics), result.model_fallback_message
        )

    return create


class AgentSessionRuntime:
    """The active session, its services, and the factory that builds replacements."""

    def __init__(self, created: CreatedRuntime, factory: RuntimeFactory, agent_dir: str) -> None:
        self._factory = factory
        self._agent_dir = agent_dir
        self._created = created
        self._rebind: RebindSession | None = None
        self.before_replacement: Callable[[str], Awaitable[None]] | None = None
        """Awaited with the cwd of every replacement session before it is built (the CLI lets
        extensions decide the trust of a folder met for the first time there)."""
        created.session.extensions.host.replacer = self

    @property
    def session(self) -> AgentSession:
        return self._created.session

    @property
    def services(self) -> AgentSessionServices:
        return self._created.services

    @property
    def diagnostics(self) -> list[ServiceDiagnostic]:
        return self._created.diagnostics

    @property
    def model_fallback_message(self) -> str | None:
        return self._created.model_fallback_message

    def set_rebind_session(self, callback: RebindSession | None) -> None:
        """Called with every replacement session (hosts re-subscribe their listeners there)."""
        self._rebind = callback

    async def new_session(self, *, parent_session: str | None = None) -> SessionChange:
        """Start an empty session in the same cwd and session folder."""
        if await self._switch_vetoed("new", None):
            return SessionChange(cancelled=True)
        current = self.session.session_manager
        cwd = self.services.cwd
        if current.is_persisted():
            manager = SessionManager.create(cwd, current.get_session_dir())
            if parent_session is not None:
                manager.new_session(parent_session=parent_session)
        else:
            manager = SessionManager.in_memory(cwd)
        await self._replace(cwd, manager, "new")
        return SessionChange()

    async def switch_session(self, path: str, cwd_override: str | None = None) -> SessionChange:
        """Resume the session in ``path`` with the services of its own cwd (or ``cwd_override``).

        A path where no file exists starts a new session in the current cwd that is written to
        exactly that path (its folder made) once the first reply is saved, as pi 1.6 does. Raises,
        before anything is torn down, ``SessionFileError`` when ``path`` is something other than a
        session (a folder, or a file that is not a session: it is never overwritten) and
        ``MissingSessionCwdError`` when the session's folder is gone."""
        missing = not os.path.lexists(path)
        if not missing:
            if not os.path.isfile(path):
                raise SessionFileError(f"Cannot resume {os.path.abspath(path)}: it is not a file")
            if (problem := header_problem(path)) is not None:
                raise SessionFileError(f"Cannot resume {os.path.abspath(path)}: {problem}")
        if await self._switch_vetoed("resume", path):
            return SessionChange(cancelled=True)
        if missing and cwd_override is None:
            cwd_override = self.services.cwd
        manager = SessionManager.open(path, cwd_override=cwd_override)
        cwd = manager.get_cwd()
        if not os.path.isdir(cwd):
            raise MissingSessionCwdError(cwd, manager.get_session_file())
        await self._replace(cwd, manager, "resume")
        return SessionChange()

    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> ForkResult:
        """Continue from a point of the current branch in a new session.

        ``before`` a user message: the new session ends just before it and its text is returned;
        ``at``: the new session keeps the path through ``entry_id``. A persisted session gets a new
        file (``parentSession`` pointing at this one); an in-memory one branches in place."""
        manager = self.session.session_manager
        entry = manager.get_entry(entry_id)
        if entry is None:
            raise ForkTargetError(_INVALID_FORK_ENTRY)
        selected_text: str | None = None
        leaf: str | None = entry_id
        if position == "before":
            if not (isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage)):
                raise ForkTargetError(_INVALID_FORK_ENTRY)
            selected_text = _user_text(entry.message)
            leaf = entry.parent_id
        session_file = manager.get_session_file()
        if (
            manager.is_persisted()
            and leaf is not None
            and not (session_file and os.path.exists(session_file))
        ):
            raise ForkTargetError(_NOT_SAVED_YET)
        runner = self.session.extension_runner
        if runner is not None:
            vetoed = await runner.emit_session_before_fork(entry_id, position)
            if vetoed is not None and vetoed.cancel:
                return ForkResult(cancelled=True)
        previous_file = manager.get_session_file()
        binding = self.session.extensions.binding
        await self._teardown("fork")
        if not manager.is_persisted():
            if leaf is None:
                manager.reset_leaf()
            else:
                manager.branch(leaf)
        elif leaf is None:
            manager.new_session(parent_session=manager.get_session_file())
        else:
            manager.create_branched_session(leaf)
        await self._rebuild(self.services.cwd, manager, binding, "fork", previous_file)
        return ForkResult(selected_text=selected_text)

    async def dispose(self) -> None:
        await self._teardown("quit")

    async def _switch_vetoed(self, reason: Literal["new", "resume"], target: str | None) -> bool:
        runner = self.session.extension_runner
        if runner is None:
            return False
        result = await runner.emit_session_before_switch(reason, target)
        return result is not None and result.cancel

    async def _replace(self, cwd: str, manager: SessionManager, reason: Literal["new", "resume"]) -> None:
        previous_file = self.session.session_file
        binding = self.session.extensions.binding
        await self._teardown(reason, manager.get_session_file())
        await self._rebuild(cwd, manager, binding, reason, previous_file)

    async def _teardown(self, reason: ShutdownReason, target_session_file: str | None = None) -> None:
        await self.session.dispose(reason=reason, target_session_file=target_session_file)

    async def _rebuild(
        self,
        cwd: str,
        manager: SessionManager,
        binding: ExtensionBinding | None,
        reason: StartReason,
        previous_file: str | None,
    ) -> None:
        if self.before_replacement is not None:
            await self.before_replacement(cwd)
        chosen = self.session.sandbox_mode_chosen
        self._created = self._factory(cwd=cwd, agent_dir=self._agent_dir, session_manager=manager)
        session = self._created.session
        if chosen is not None:  # /sandbox or RPC's set_sandbox outlives a new, resumed or forked session
            from tau.config.sandbox_config import SandboxConfigError

            with contextlib.suppress(SandboxConfigError):  # not usable there: that folder's setting
                session.set_sandbox(chosen)
        session.extensions.host.replacer = self
        if binding is not None:
            await session.extensions.bind(binding, reason, previous_file)
        if self._rebind is not None:
            outcome = self._rebind(self._created.session)
            if inspect.isawaitable(outcome):
                await outcome


def create_agent_session_runtime(
    factory: RuntimeFactory, *, cwd: str, agent_dir: str, session_manager: SessionManager
) -> AgentSessionRuntime:
    """Build the first session with ``factory`` and wrap it; ``MissingSessionCwdError`` if ``cwd`` is gone."""
    if not os.path.isdir(cwd):
        raise MissingSessionCwdError(cwd, session_manager.get_session_file())
    created = factory(cwd=cwd, agent_dir=agent_dir, session_manager=session_manager)
    return AgentSessionRuntime(created, factory, agent_dir)


def _user_text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(b.text for b in message.content if isinstance(b, TextContent))

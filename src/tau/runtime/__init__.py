"""tau.runtime: the life of one session.

``AgentSession`` (``agent_session``) drives one conversation: prompts, the event pipeline, retries,
compaction, the extension host and the user's ``!`` commands. ``AgentSessionServices``
(``services``) gathers what a session is built from (settings from ``tau.config``, models and
credentials from ``tau.accounts``, resources from ``tau.packages``), ``create_agent_session``
(``sdk``) is the SDK entry and ``AgentSessionRuntime`` (``runtime``) swaps sessions in a process.

    from tau.runtime import create_agent_session

Names are imported on first access, so ``import tau.runtime`` loads nothing.
"""

from __future__ import annotations

from tau._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py

if TYPE_CHECKING:
    from tau.runtime.agent_session import AgentSession
    from tau.runtime.errors import (
        AgentSessionError,
        BashBusyError,
        MissingAuthError,
        MissingSessionCwdError,
        NoModelError,
        SessionBusyError,
    )
    from tau.runtime.events import (
        AgentSessionEvent,
        QueueUpdate,
        SessionEvent,
        SessionInfoChanged,
        ThinkingLevelChanged,
        session_event_to_json,
    )
    from tau.runtime.runtime import (
        AgentSessionRuntime,
        CreatedRuntime,
        ForkResult,
        RuntimeFactory,
        create_agent_session_runtime,
        session_runtime_factory,
    )
    from tau.runtime.sdk import CreateAgentSessionResult, create_agent_session
    from tau.runtime.services import (
        AgentSessionServices,
        ResourceOptions,
        ServiceDiagnostic,
        create_agent_session_services,
    )
    from tau.runtime.user_bash import BashResult

_HOMES: dict[str, str] = {
    "AgentSession": "agent_session",
    "AgentSessionError": "errors",
    "BashBusyError": "errors",
    "MissingAuthError": "errors",
    "MissingSessionCwdError": "errors",
    "NoModelError": "errors",
    "SessionBusyError": "errors",
    "AgentSessionEvent": "events",
    "QueueUpdate": "events",
    "SessionEvent": "events",
    "SessionInfoChanged": "events",
    "ThinkingLevelChanged": "events",
    "session_event_to_json": "events",
    "AgentSessionRuntime": "runtime",
    "CreatedRuntime": "runtime",
    "ForkResult": "runtime",
    "RuntimeFactory": "runtime",
    "create_agent_session_runtime": "runtime",
    "session_runtime_factory": "runtime",
    "CreateAgentSessionResult": "sdk",
    "create_agent_session": "sdk",
    "AgentSessionServices": "services",
    "ResourceOptions": "services",
    "ServiceDiagnostic": "services",
    "create_agent_session_services": "services",
    "BashResult": "user_bash",
}

__all__ = [
    "AgentSession",
    "AgentSessionError",
    "AgentSessionEvent",
    "AgentSessionRuntime",
    "AgentSessionServices",
    "BashBusyError",
    "BashResult",
    "CreateAgentSessionResult",
    "CreatedRuntime",
    "ForkResult",
    "MissingAuthError",
    "MissingSessionCwdError",
    "NoModelError",
    "QueueUpdate",
    "ResourceOptions",
    "RuntimeFactory",
    "ServiceDiagnostic",
    "SessionBusyError",
    "SessionEvent",
    "SessionInfoChanged",
    "ThinkingLevelChanged",
    "create_agent_session",
    "create_agent_session_runtime",
    "create_agent_session_services",
    "session_event_to_json",
    "session_runtime_factory",
]

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

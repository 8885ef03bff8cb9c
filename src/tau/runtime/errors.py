"""Errors an ``AgentSession`` or its runtime raises; each message is one line a user can act on."""

from __future__ import annotations

from tau.errors import TauError

__all__ = [
    "AgentSessionError",
    "BashBusyError",
    "MissingAuthError",
    "MissingSessionCwdError",
    "NoModelError",
    "SessionBusyError",
]


class AgentSessionError(TauError, RuntimeError):
    """Base class of the session's own errors."""


class NoModelError(AgentSessionError):
    """A prompt was sent with no model selected."""


class MissingAuthError(AgentSessionError):
    """The selected model's provider has no credentials."""


class SessionBusyError(AgentSessionError):
    """A prompt arrived while the agent is working and did not say how to queue it."""


class BashBusyError(AgentSessionError):
    """A user shell command was started while another one is still running."""


class MissingSessionCwdError(AgentSessionError):
    """A session's recorded working directory no longer exists."""

    def __init__(self, cwd: str, session_file: str | None = None) -> None:
        self.cwd = cwd
        self.session_file = session_file
        which = f"Session {session_file} was recorded in" if session_file else "The working directory"
        super().__init__(
            f"{which} {cwd}, which no longer exists; open it with a cwd override "
            "(e.g. the current directory) to continue it elsewhere"
        )

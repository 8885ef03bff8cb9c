"""What the bash tool's commands learn of the session from their environment, as in pi 1.6.

pi gives every command its bash tool runs ``PI_SESSION_ID``, ``PI_SESSION_FILE`` (a session kept in
a file only), ``PI_PROVIDER``, ``PI_MODEL`` and ``PI_REASONING_LEVEL``, read when the command starts.
tau sets the same, each with a ``TAU_*`` twin. Values a parent agent left in the environment are
removed when the session has none (an in-memory session has no file), so a nested run never shows
stale ones. The process markers (``AI_AGENT`` and ``TAU_CODING_AGENT``/``PI_CODING_AGENT``) are set
by the command itself (``mark_process``), never by an embedding program's session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from typing import Protocol

    from tau.ai.types import Model

    class _SessionState(Protocol):
        @property
        def session_id(self) -> str: ...
        @property
        def session_file(self) -> str | None: ...
        @property
        def model(self) -> Model | None: ...
        @property
        def thinking_level(self) -> str: ...


__all__ = ["SESSION_VARIABLES", "SessionShellEnvironment", "mark_process"]

SESSION_VARIABLES = ("SESSION_ID", "SESSION_FILE", "PROVIDER", "MODEL", "REASONING_LEVEL")
"""The names after the ``TAU_`` / ``PI_`` prefix."""
_PREFIXES = ("TAU_", "PI_")


class SessionShellEnvironment:
    """The bash tool's ``session_env``: made before the session it describes, ``attach``-ed to it
    once it exists; until then (and without a session) it only removes inherited values."""

    def __init__(self) -> None:
        self._session: Callable[[], _SessionState | None] = lambda: None

    def attach(self, session: Callable[[], _SessionState | None]) -> None:
        """Describe the session ``session()`` returns when a command starts (a runtime's current one)."""
        self._session = session

    def __call__(self) -> dict[str, str | None]:
        values: dict[str, str | None] = dict.fromkeys(SESSION_VARIABLES)
        session = self._session()
        if session is not None:
            model = session.model
            values["SESSION_ID"] = session.session_id
            values["SESSION_FILE"] = session.session_file or None
            values["PROVIDER"] = model.provider if model is not None else None
            values["MODEL"] = model.id if model is not None else None
            values["REASONING_LEVEL"] = session.thinking_level or None
        return {prefix + name: value for prefix in _PREFIXES for name, value in values.items()}


def mark_process(environ: MutableMapping[str, str] | None = None) -> None:
    """Mark this process (and so its children) as run by tau: ``AI_AGENT=tau``, and
    ``TAU_CODING_AGENT=true`` with pi's ``PI_CODING_AGENT=true``, as pi marks its own."""
    env = os.environ if environ is None else environ
    env["AI_AGENT"] = "tau"
    env["TAU_CODING_AGENT"] = "true"
    env["PI_CODING_AGENT"] = "true"

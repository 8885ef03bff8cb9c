"""The link between a runner's extensions and the live session: the stale-context guard.

Every ``tau`` object and every ``ctx`` holds the runner's ``SessionBinding``. Before the runtime
binds a host, session actions raise ``ExtensionNotReadyError``; after the runner is disposed
(session replaced, reload, exit) any use raises ``StaleContextError``, so a timer or task left
behind by an old extension instance fails loudly instead of acting on the wrong session.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from tau.extensions.errors import ExtensionNotReadyError, StaleContextError
from tau.extensions.host import ExtensionHost
from tau.extensions.ui import ExtensionUI, NoUI

__all__ = ["ExtensionMode", "SessionBinding"]

ExtensionMode: TypeAlias = Literal["tui", "rpc", "json", "print"]
"""``ctx.mode``: the mode tau runs in, as pi 1.6 names it."""


class SessionBinding:
    """The host and UI the extensions of one runner talk to, and whether they are still live."""

    __slots__ = ("active", "cwd", "has_ui", "host", "mode", "ui")

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.host: ExtensionHost | None = None
        self.ui: ExtensionUI = NoUI()
        self.has_ui = False
        self.mode: ExtensionMode = "print"
        self.active = True

    def check_live(self) -> None:
        if not self.active:
            raise StaleContextError(
                "This extension object belongs to a session that was replaced, reloaded or closed; "
                "use the ctx passed to the current handler instead"
            )

    def require_host(self, action: str) -> ExtensionHost:
        """The bound host, for ``action`` (named in the error when there is none yet)."""
        self.check_live()
        if self.host is None:
            raise ExtensionNotReadyError(
                f"{action} is not available yet: the runtime is not initialised (extensions are "
                "still loading). Call it from an event handler, a command or a tool instead of setup()"
            )
        return self.host

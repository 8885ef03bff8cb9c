"""What a login flow may ask of the person logging in, and tell them: the terminal and the TUI each
provide one of these.

Flows run in a worker thread and block on ``ask``/``select``; ``start_paste`` lets the user paste the
code or redirect URL while the flow also waits for the browser's callback (SSH, another machine).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from msgspec import Struct

__all__ = ["LoginInteraction", "SelectOption"]


class SelectOption(Struct, frozen=True):
    id: str
    label: str


class LoginInteraction(Protocol):
    """The user's side of a login. ``cancelled`` is set when the user gives up (Ctrl+C, Esc)."""

    cancelled: threading.Event

    def show_url(self, url: str, instructions: str) -> None:
        """Show the sign-in URL (and open the browser if allowed)."""

    def show_device_code(self, url: str, code: str) -> None:
        """Show where to enter ``code`` (and open the browser if allowed)."""

    def progress(self, message: str) -> None:
        """A step of the login, one line."""

    def notice(self, message: str) -> None:
        """Something the user should know that does not stop the login (a port in use)."""

    def ask(self, message: str, placeholder: str = "") -> str:
        """A line of text; raises ``LoginCancelledError`` when the user gives up."""

    def select(self, message: str, options: list[SelectOption]) -> str:
        """The id of one of ``options`` (sign-in methods: the first is the browser sign-in)."""

    def start_paste(self, message: str, placeholder: str, deliver: Callable[[str | None], None]) -> None:
        """Offer to paste the code or redirect URL; ``deliver`` receives what was pasted (``None``: no input)."""

    def stop_paste(self) -> None:
        """Withdraw the paste offer (the browser's callback came first)."""

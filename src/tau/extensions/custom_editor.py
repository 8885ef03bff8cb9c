"""``CustomEditor``: the base of an editor an extension puts in place of tau's input editor
(``ctx.ui.set_editor_component``), pi's ``CustomEditor`` in Python.

Subclass it and override what you change: ``handle_input(key)`` gets every key typed into the
editor first (named as ``keybindings.json`` names keys: ``"escape"``, ``"left"``, ``"ctrl+a"``,
``"enter"``, or the character typed); ``super().handle_input(key)`` gives a key to tau's editor,
which edits the text and runs the app's keys (Enter sends, Escape interrupts, Ctrl+D quits, model
switching...), and may be called with another key than the one typed (a vim-style ``h`` passed on
as ``"left"``). ``render(width)`` returns the lines drawn in the editor's place;
``super().render(width)`` is tau's editor as lines (the top border, the text with its cursor, the
bottom border), to decorate. The text itself stays in tau's editor (``get_text`` / ``set_text``,
and ``ctx.ui.get_editor_text``), so it is kept when the editor is replaced or restored.

A component that is not a ``CustomEditor`` (any object with ``render`` and ``handle_input``) gets
the keys too, and nothing reaches tau's editor unless it is given the text with ``ctx.ui``.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["BuiltinEditor", "CustomEditor"]


class BuiltinEditor(Protocol):
    """tau's own editor as a ``CustomEditor`` reaches it (the terminal UI provides it)."""

    def handle_input(self, key: str) -> None: ...

    def render(self, width: int) -> list[str]: ...

    def get_text(self) -> str: ...

    def set_text(self, text: str) -> None: ...


class CustomEditor:
    """An editor of an extension's own that keeps tau's editing and app keys for what it passes on."""

    def __init__(self, tui: Any, theme: Any, keybindings: Any) -> None:
        self.tui = tui
        self.theme = theme
        self.keybindings = keybindings
        self.builtin: BuiltinEditor | None = None
        """tau's editor, set by the terminal UI when this editor is shown (``None`` before)."""

    def handle_input(self, key: str) -> None:
        """Give ``key`` to tau's editor (text editing and the app's keys)."""
        if self.builtin is not None:
            self.builtin.handle_input(key)

    def render(self, width: int) -> list[str]:
        """tau's editor as lines ``width`` cells wide."""
        return self.builtin.render(width) if self.builtin is not None else []

    def get_text(self) -> str:
        return self.builtin.get_text() if self.builtin is not None else ""

    def set_text(self, text: str) -> None:
        if self.builtin is not None:
            self.builtin.set_text(text)

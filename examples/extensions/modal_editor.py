"""A vim-style modal editor in place of tau's (``ctx.ui.set_editor_component``).

Escape in insert mode goes to normal mode (in normal mode it interrupts the agent, as tau's
editor does); ``i`` and ``a`` go back to insert mode; ``h``/``j``/``k``/``l`` move, ``0``/``$`` go
to the line's start or end, ``x`` deletes the character under the cursor. Other letters do nothing
in normal mode; Enter, Ctrl+C, Ctrl+D and the other app keys work in both. The mode is shown in the
editor's bottom border. ``/vim`` switches back to tau's own editor and again to this one; the
text is kept either way.

    tau -e examples/extensions/modal_editor.py
"""

from __future__ import annotations

from typing import Any

from tau.extensions import CustomEditor, ExtensionAPI, ExtensionCommandContext

NORMAL_KEYS = {"h": "left", "j": "down", "k": "up", "l": "right", "0": "home", "$": "end", "x": "delete"}


class ModalEditor(CustomEditor):
    def __init__(self, tui: Any, theme: Any, keybindings: Any) -> None:
        super().__init__(tui, theme, keybindings)
        self.mode = "insert"

    def handle_input(self, key: str) -> None:
        if key == "escape":
            if self.mode == "insert":
                self.mode = "normal"
            else:
                super().handle_input(key)  # interrupts the agent, as in tau's editor
            return
        if self.mode == "insert":
            super().handle_input(key)
            return
        if key in ("i", "a"):
            self.mode = "insert"
            if key == "a":
                super().handle_input("right")
        elif key in NORMAL_KEYS:
            super().handle_input(NORMAL_KEYS[key])
        elif len(key) > 1:  # enter, ctrl+c, ctrl+d, ...: the app's keys
            super().handle_input(key)

    def render(self, width: int) -> list[str]:
        lines = super().render(width)
        label = " NORMAL " if self.mode == "normal" else " INSERT "
        if lines and width > len(label):
            lines[-1] = lines[-1].replace("─" * len(label), "", 1) + label
        return lines


def _modal(tui: Any, theme: Any, keybindings: Any) -> ModalEditor:
    return ModalEditor(tui, theme, keybindings)


def setup(tau: ExtensionAPI) -> None:
    @tau.on("session_start")
    def start(event: Any, ctx: Any) -> None:
        ctx.ui.set_editor_component(_modal)

    @tau.register_command("vim", description="Switch between the modal editor and tau's")
    async def toggle(args: str, ctx: ExtensionCommandContext) -> None:
        ui: Any = ctx.ui
        ui.set_editor_component(None if ui.get_editor_component() is _modal else _modal)

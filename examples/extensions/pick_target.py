"""A component of your own in the editor's place, or floating above the screen.

``/pick-target`` shows a list drawn by the extension (``ctx.ui.custom``): Up/Down move, Enter
chooses, Escape cancels, with the user's keys for ``tui.select.*``. ``/pick-target overlay`` shows
the same list as an overlay in the top right corner. The component is anything with
``render(width) -> list[str]`` and ``handle_input(key)``; it calls ``done(value)`` to finish and
``tui.request_render()`` after a change. Without the terminal UI, ``custom`` answers ``None``.

    tau -e examples/extensions/pick_target.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.extensions import ExtensionAPI, ExtensionCommandContext

CHOICES = ["development", "staging", "production"]


class TargetList:
    def __init__(self, tui: Any, keybindings: Any, done: Callable[[Any], None]) -> None:
        self.tui, self.keybindings, self.done = tui, keybindings, done
        self.index = 0

    def render(self, width: int) -> list[str]:
        rows = [f"{'> ' if i == self.index else '  '}{choice}" for i, choice in enumerate(CHOICES)]
        return [
            "\x1b[1mChoose a deployment target\x1b[0m",
            *rows,
            "\x1b[2m↑↓ move · enter choose · esc cancel\x1b[0m",
        ]

    def handle_input(self, key: str) -> None:
        if self.keybindings.matches(key, "tui.select.up"):
            self.index = (self.index - 1) % len(CHOICES)
        elif self.keybindings.matches(key, "tui.select.down"):
            self.index = (self.index + 1) % len(CHOICES)
        elif self.keybindings.matches(key, "tui.select.confirm"):
            self.done(CHOICES[self.index])
        elif self.keybindings.matches(key, "tui.select.cancel"):
            self.done(None)
        self.tui.request_render()


def setup(tau: ExtensionAPI) -> None:
    @tau.register_command("pick-target", description="Pick a deployment target")
    async def pick(args: str, ctx: ExtensionCommandContext) -> None:
        overlay = args.strip() == "overlay"
        chosen = await ctx.ui.custom(  # type: ignore[attr-defined]
            lambda tui, theme, keybindings, done: TargetList(tui, keybindings, done),
            overlay=overlay,
            overlay_options={"anchor": "top-right", "width": 40, "margin": 1},
        )
        ctx.ui.notify(f"Selected {chosen}" if chosen else "No target chosen")

"""Your own startup header: the project's name and a reminder, in place of tau's.

``ctx.ui.set_header(factory)`` draws ``factory(tui, theme)``'s component (anything with
``render(width) -> list[str]``) at the top of the conversation; ``set_header(None)`` brings tau's
back. Other modes than the terminal UI ignore it.

    tau -e examples/extensions/custom_header.py
"""

from __future__ import annotations

import os
from typing import Any

from tau.extensions import ExtensionAPI, ExtensionContext


class ProjectHeader:
    def __init__(self, cwd: str) -> None:
        self.name = os.path.basename(cwd) or cwd

    def render(self, width: int) -> list[str]:
        return [f"\x1b[1m{self.name}\x1b[0m", "\x1b[2mRun the tests before you commit.\x1b[0m"]


def setup(tau: ExtensionAPI) -> None:
    @tau.on("session_start")
    def header(event: Any, ctx: ExtensionContext) -> None:
        ctx.ui.set_header(lambda tui, theme: ProjectHeader(ctx.cwd))  # type: ignore[attr-defined]

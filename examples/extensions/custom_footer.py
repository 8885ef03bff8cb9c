"""Replace the footer with a line of your own: ``/footer`` toggles it.

``ctx.ui.set_footer(factory)`` draws ``factory(tui, theme, footer_data)``'s component instead of
tau's footer; ``footer_data`` has the git branch and the statuses extensions set. A component is
anything with ``render(width) -> list[str]``. ``set_footer(None)`` brings tau's back. Other modes
than the terminal UI ignore it.

    tau -e examples/extensions/custom_footer.py
"""

from __future__ import annotations

from typing import Any

from tau.extensions import ExtensionAPI, ExtensionCommandContext


class BranchFooter:
    def __init__(self, footer_data: Any) -> None:
        self.footer_data = footer_data

    def render(self, width: int) -> list[str]:
        branch = self.footer_data.git_branch or "no git"
        statuses = " · ".join(self.footer_data.statuses.values())
        return [f"\x1b[2m⎇ {branch}{'  ' + statuses if statuses else ''}\x1b[0m"]


def setup(tau: ExtensionAPI) -> None:
    state = {"on": False}

    @tau.register_command("footer", description="Toggle a minimal footer")
    def toggle(args: str, ctx: ExtensionCommandContext) -> None:
        state["on"] = not state["on"]
        factory = (lambda tui, theme, footer_data: BranchFooter(footer_data)) if state["on"] else None
        ctx.ui.set_footer(factory)  # type: ignore[attr-defined]

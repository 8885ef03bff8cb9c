"""``terminal.clearOnShrink`` in the inline (regular) UI, as pi 1.6 gives it.

The live area (editor, footer, completions, dialogs, widgets) is drawn below the conversation. When
it gets shorter, prompt_toolkit keeps the rows it had and leaves the lost ones blank below the
footer, so the footer no longer sits on the terminal's last row. With ``clearOnShrink`` on, a live
area shorter than the tallest one drawn since the last full redraw (and no overlay open) prints the
whole conversation again, so the editor and footer end on the last row once more; and the working
line's row stays (blank) when the agent goes idle, so every turn's end is not such a shrink.
Both as pi's ``clearOnShrink``; the price is the same: a full redraw now and then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ShrinkWatch"]


class ShrinkWatch:
    """Watches the live area's height after each frame and asks for a full redraw when it shrank."""

    def __init__(
        self,
        enabled: Callable[[], bool],
        overlays_open: Callable[[], bool],
        redraw: Callable[[], None],
    ) -> None:
        self._enabled = enabled
        self._overlays_open = overlays_open
        self._redraw = redraw
        self._tallest = 0
        """The most rows the live area took since it was last drawn afresh below the conversation."""
        self._status_seen = False

    def forget(self) -> None:
        """The live area is drawn afresh under new text (``print_above``): its height starts over."""
        self._tallest = 0

    def keeps_status_row(self, shown: bool) -> bool:
        """Whether the status line's row is drawn: when it has text (``shown``), and with
        ``clearOnShrink`` on, blank once it has had some (pi's idle status)."""
        if shown:
            self._status_seen = True
            return True
        return self._status_seen and self._enabled()

    def after_render(self, app: Any) -> None:
        """``Application.after_render``'s hook."""
        if not self._enabled():
            self._tallest = 0
            return
        size = app.output.get_size()
        rows = min(size.rows, app.layout.container.preferred_height(size.columns, size.rows).preferred)
        if rows < self._tallest and not self._overlays_open():
            self._tallest = rows
            self._redraw()
            return
        self._tallest = max(self._tallest, rows)

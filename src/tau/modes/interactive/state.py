"""The interactive mode's mutable state that more than one helper reads or writes, as records.

``InputState`` is what the user has put in and not yet sent (attached images, messages held
while the conversation is compacted or queued in the session) and when Esc or Ctrl+C was last
pressed; ``Activity`` is what runs now, as the status line tells it. The mode holds one of each;
its helpers get them through their narrow protocols (``host``) instead of the whole mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct, field

if TYPE_CHECKING:
    from tau.ai.types import ImageContent
    from tau.modes.interactive.chat import Block

__all__ = ["Activity", "InputState"]


def _no_queue() -> tuple[list[str], list[str]]:
    return ([], [])


class InputState(Struct):
    """What the user typed, attached or pressed that the next message or key depends on."""

    pending_images: list[ImageContent] = field(default_factory=list)
    """Images attached (Ctrl+V) for the next message, marked ``[image #n]`` in the editor."""
    held_for_compaction: list[str] = field(default_factory=list)
    """Messages sent while the conversation was being compacted: sent once it is."""
    queued: tuple[list[str], list[str]] = field(default_factory=_no_queue)
    """The session's queue as it last said: steering messages, follow-ups."""
    last_ctrl_c_at: float = 0.0
    last_escape_at: float = 0.0


class Activity(Struct):
    """What runs now (a reply, a compaction, a retry's wait, a ``!`` command), and the status line's
    short confirmation."""

    working: bool = False
    working_message: str | None = None
    """An extension's words for the spinner instead of "Working…"."""
    working_visible: bool = True
    """``ctx.ui.set_working_visible(False)`` hides the working line while the agent works."""
    working_frames: list[str] | None = None
    """An extension's spinner frames (``ctx.ui.set_working_indicator``); ``None``: tau's."""
    working_interval_ms: int = 100
    compacting: bool = False
    compactions_ended: int = 0
    retry_text: str | None = None
    summary_retry_text: str | None = None
    """A compaction's or branch summary's request being retried."""
    retry_deadline: float = 0.0
    bash_block: Block | None = None
    """The ``!`` command running, if one is."""
    flash_text: str = ""

    @property
    def busy(self) -> bool:
        """Whether the status line has a spinner to turn."""
        return (
            self.working
            or self.compacting
            or self.retry_text is not None
            or self.summary_retry_text is not None
            or self.bash_block is not None
        )

"""The numbers compaction works with (``compaction.*`` and ``branchSummary.*`` in settings.json)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BRANCH_SUMMARY_MAX_TOKENS",
    "DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS",
    "DEFAULT_COMPACTION_SETTINGS",
    "CompactionSettings",
]


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    """``enabled``: automatic compaction (``/compact`` always works). ``reserve_tokens``: head-room
    kept free below the context window, which also sizes the summary. ``keep_recent_tokens``: about
    how much recent history stays verbatim."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000

    @property
    def summary_max_tokens(self) -> int:
        """The history summary's output budget: 80% of the reserve."""
        return int(0.8 * self.reserve_tokens)

    @property
    def turn_prefix_max_tokens(self) -> int:
        """The budget for summarising the early part of a turn cut in two: half the reserve."""
        return int(0.5 * self.reserve_tokens)


DEFAULT_COMPACTION_SETTINGS = CompactionSettings()
DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS = 16384
BRANCH_SUMMARY_MAX_TOKENS = 2048

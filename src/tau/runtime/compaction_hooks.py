"""Where extensions plug into compaction and tree navigation (spec 50 §7, spec 40 §10.1).

``CompactionHooks`` does nothing; ``extension_hooks.ExtensionCompactionHooks`` calls the
extension runner. The event and result shapes follow pi's ``session_before_compact`` /
``session_compact`` / ``session_compact_failed`` / ``session_before_tree`` / ``session_tree``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol

from msgspec import Struct

from tau.ai.abort import AbortSignal
from tau.session.entries import BranchSummaryEntry, CompactionEntry, SessionEntry

if TYPE_CHECKING:
    from tau.compaction import CompactionPreparation, CompactionResult

__all__ = [
    "BeforeCompactEvent",
    "BeforeCompactResult",
    "BeforeTreeEvent",
    "BeforeTreeResult",
    "CompactionFailure",
    "CompactionHooks",
    "CompactionRecord",
    "NavigateTreeResult",
]


class BeforeCompactEvent(Struct):
    """``session_before_compact``: what is about to be summarised; the hook may cancel or supply
    its own summary."""

    preparation: CompactionPreparation
    branch_entries: list[SessionEntry]
    custom_instructions: str | None
    signal: AbortSignal
    reason: Literal["manual", "threshold", "overflow"] = "manual"
    will_retry: bool = False
    """Whether the run is continued after the compaction (an ``overflow`` recovery)."""


class CompactionRecord(Protocol):
    """What a compaction entry stores: a ``CompactionResult``, or an extension's own record whose
    ``details`` may be any JSON."""

    @property
    def summary(self) -> str: ...

    @property
    def first_kept_entry_id(self) -> str: ...

    @property
    def tokens_before(self) -> int: ...

    def details_json(self) -> Any: ...


class BeforeCompactResult(Struct):
    cancel: bool = False
    compaction: CompactionRecord | CompactionResult | None = None


class CompactionFailure(Struct):
    """``session_compact_failed``: a compaction that failed (``error_message``) or was stopped
    (``aborted``: by the user or a ``session_before_compact`` handler's cancel)."""

    reason: Literal["manual", "threshold", "overflow"]
    error_message: str | None
    aborted: bool
    will_retry: bool
    from_extension: bool


class BeforeTreeEvent(Struct):
    """``session_before_tree``: a move in the session tree, before any summary is written."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]
    user_wants_summary: bool
    custom_instructions: str | None
    replace_instructions: bool
    label: str | None


class BeforeTreeResult(Struct):
    cancel: bool = False
    summary: str | None = None
    details: object = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


class CompactionHooks:
    """Where extensions plug in (spec 50 §7, spec 40 §10.1); every method is a no-op here."""

    async def session_before_compact(self, event: BeforeCompactEvent) -> BeforeCompactResult | None:
        return None

    async def session_compact(
        self,
        entry: CompactionEntry,
        from_extension: bool,
        reason: Literal["manual", "threshold", "overflow"] = "manual",
        will_retry: bool = False,
    ) -> None:
        return None

    async def session_compact_failed(self, failure: CompactionFailure) -> None:
        return None

    async def session_before_tree(self, event: BeforeTreeEvent) -> BeforeTreeResult | None:
        return None

    async def session_tree(
        self,
        new_leaf_id: str | None,
        old_leaf_id: str | None,
        summary_entry: BranchSummaryEntry | None,
        from_extension: bool,
    ) -> None:
        return None


class NavigateTreeResult(Struct, frozen=True):
    """``cancelled`` (and ``aborted`` when the summary was stopped): the leaf did not move.
    ``editor_text``: the text of the user message navigated to, for the input box."""

    cancelled: bool = False
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: BranchSummaryEntry | None = None

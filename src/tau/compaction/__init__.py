"""tau.compaction: keeping long sessions inside the model's context window.

    from tau.compaction import CompactionSettings, SummaryRequest, compact, prepare_compaction

    preparation = prepare_compaction(session_manager.get_branch(), CompactionSettings())
    if preparation is not None:                    # None: nothing to summarise, no model call
        result = await compact(preparation, SummaryRequest(model, api_key=key))
        session_manager.append_compaction(result.summary, result.first_kept_entry_id,
                                          result.tokens_before, result.details_json())

Older history is replaced by a structured summary written by one plain model call; the most recent
``keep_recent_tokens`` stay verbatim. Only the conversation changes: the system prompt and tools
are untouched. Whether to compact is measured on the provider's reported usage, with a
four-characters-a-token estimate for what came after it.

Names are imported on first access, so that reading the compaction settings does not load the
summariser (and with it the model-calling and conversion modules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.compaction.branch_summary import (
        BranchEntries,
        BranchPreparation,
        BranchSummaryResult,
        collect_entries_for_branch_summary,
        generate_branch_summary,
        prepare_branch_entries,
    )
    from tau.compaction.cut_point import CutPoint, find_cut_point, find_turn_start_index, is_valid_cut_point
    from tau.compaction.errors import (
        CompactionAbortedError,
        CompactionCancelledError,
        CompactionError,
        NothingToCompactError,
        SummarizationError,
    )
    from tau.compaction.file_ops import FileDetails, FileOperations, format_file_lists
    from tau.compaction.prepare import CompactionPreparation, nothing_to_compact_reason, prepare_compaction
    from tau.compaction.retry import SummaryRetry
    from tau.compaction.serialize import serialize_conversation
    from tau.compaction.settings import DEFAULT_COMPACTION_SETTINGS, CompactionSettings
    from tau.compaction.summarize import (
        CompactionResult,
        SummaryRequest,
        compact,
        generate_summary,
        generate_turn_prefix_summary,
    )
    from tau.compaction.tokens import (
        ContextEstimate,
        calculate_context_tokens,
        estimate_context_tokens,
        estimate_tokens,
        get_last_assistant_usage,
        should_compact,
    )

__all__ = [
    "DEFAULT_COMPACTION_SETTINGS",
    "BranchEntries",
    "BranchPreparation",
    "BranchSummaryResult",
    "CompactionAbortedError",
    "CompactionCancelledError",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "ContextEstimate",
    "CutPoint",
    "FileDetails",
    "FileOperations",
    "NothingToCompactError",
    "SummarizationError",
    "SummaryRequest",
    "SummaryRetry",
    "calculate_context_tokens",
    "collect_entries_for_branch_summary",
    "compact",
    "estimate_context_tokens",
    "estimate_tokens",
    "find_cut_point",
    "find_turn_start_index",
    "format_file_lists",
    "generate_branch_summary",
    "generate_summary",
    "generate_turn_prefix_summary",
    "get_last_assistant_usage",
    "is_valid_cut_point",
    "nothing_to_compact_reason",
    "prepare_branch_entries",
    "prepare_compaction",
    "serialize_conversation",
    "should_compact",
]

_HOMES: dict[str, str] = {
    "BranchEntries": "branch_summary",
    "BranchPreparation": "branch_summary",
    "BranchSummaryResult": "branch_summary",
    "collect_entries_for_branch_summary": "branch_summary",
    "generate_branch_summary": "branch_summary",
    "prepare_branch_entries": "branch_summary",
    "CutPoint": "cut_point",
    "find_cut_point": "cut_point",
    "find_turn_start_index": "cut_point",
    "is_valid_cut_point": "cut_point",
    "CompactionAbortedError": "errors",
    "CompactionCancelledError": "errors",
    "CompactionError": "errors",
    "NothingToCompactError": "errors",
    "SummarizationError": "errors",
    "FileDetails": "file_ops",
    "FileOperations": "file_ops",
    "format_file_lists": "file_ops",
    "CompactionPreparation": "prepare",
    "nothing_to_compact_reason": "prepare",
    "prepare_compaction": "prepare",
    "SummaryRetry": "retry",
    "serialize_conversation": "serialize",
    "DEFAULT_COMPACTION_SETTINGS": "settings",
    "CompactionSettings": "settings",
    "CompactionResult": "summarize",
    "SummaryRequest": "summarize",
    "compact": "summarize",
    "generate_summary": "summarize",
    "generate_turn_prefix_summary": "summarize",
    "ContextEstimate": "tokens",
    "calculate_context_tokens": "tokens",
    "estimate_context_tokens": "tokens",
    "estimate_tokens": "tokens",
    "get_last_assistant_usage": "tokens",
    "should_compact": "tokens",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

"""What a compaction summarises and keeps (spec 50 §4, §6, §10; test cases 16–21)."""

from __future__ import annotations

from tau.ai.types import AssistantMessage, Usage, UserMessage
from tau.compaction import (
    CompactionSettings,
    FileDetails,
    FileOperations,
    format_file_lists,
    nothing_to_compact_reason,
    prepare_compaction,
)
from tau.compaction.tokens import estimate_projected_context_tokens
from tau.session.context import build_session_context
from tau.session.entries import ContextEditEntry
from tau.session.messages import CompactionSummaryMessage

from .conftest import assistant, chain, compaction, tool_result, user, worked_example

DEFAULTS = CompactionSettings()


def test_16_nothing_is_prepared_right_after_a_compaction() -> None:
    entries = chain(user("u" * 400), assistant("a" * 400), compaction("e1"))
    assert prepare_compaction(entries, DEFAULTS) is None
    assert nothing_to_compact_reason(entries) == "Already compacted"


def test_nothing_is_prepared_when_everything_fits_and_the_reason_says_so() -> None:
    entries = chain("model_change", "thinking", user("hello"), assistant("hi"))
    assert prepare_compaction(entries, DEFAULTS) is None
    assert nothing_to_compact_reason(entries) == "Nothing to compact (session too small)"
    assert prepare_compaction(chain("model_change", "thinking"), DEFAULTS) is None
    assert prepare_compaction([], DEFAULTS) is None


def test_17_a_second_compaction_starts_at_the_previous_first_kept_entry() -> None:
    entries = chain(
        user("u" * 4000),  # 0: summarised by the previous compaction
        assistant("a" * 4000),  # 1
        user("u" * 4000),  # 2: first kept by it
        assistant("a" * 4000),  # 3
        compaction("e2", "the previous summary"),  # 4
        user("u" * 4000),  # 5
        assistant("a" * 4000),  # 6
    )
    preparation = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=1500))
    assert preparation is not None
    assert preparation.previous_summary == "the previous summary"
    assert preparation.first_kept_entry_id == "e5"
    texts = [m.content if isinstance(m, UserMessage) else m.text() for m in preparation.messages_to_summarize]  # type: ignore[union-attr]
    assert texts == ["u" * 4000, "a" * 4000]  # entries 2 and 3, not 0 and 1

    entries[4] = compaction("gone", "the previous summary")
    fallback = prepare_compaction(chain(*entries), CompactionSettings(keep_recent_tokens=500))
    assert fallback is not None
    assert fallback.first_kept_entry_id == "e6"
    assert fallback.messages_to_summarize == []  # starts right after the compaction, at e5
    assert [m.role for m in fallback.turn_prefix_messages] == ["user"]


def test_18_tokens_before_is_the_estimate_of_the_projected_context() -> None:
    entries = chain(
        user("u" * 4000),
        assistant("a" * 400, reported=Usage(total_tokens=5000)),
        compaction("e1"),
        user("u" * 4000),
        assistant("a" * 40),
        user("u" * 400),
    )
    preparation = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100))
    assert preparation is not None
    projected = build_session_context(entries, "e5").messages
    assert isinstance(projected[0], CompactionSummaryMessage)
    # As pi 1.6 measures it: no reply with a usage since the compaction, so every projected
    # message is estimated (the summary, 4000 + 40 + 400 characters at 4 per token).
    estimate = estimate_projected_context_tokens(projected, entries)
    assert preparation.tokens_before == estimate.tokens > 1000 + 10 + 100
    assert estimate.last_usage_index is None


def test_19_earlier_compactions_are_not_summarised_again() -> None:
    entries = chain(
        user("u" * 4000), assistant("a" * 4000), compaction("e0"), user("u" * 4000), assistant("a" * 4000)
    )
    preparation = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=500))
    assert preparation is not None
    roles = [m.role for m in preparation.messages_to_summarize]
    assert roles == ["user", "assistant"]  # entries 0, 1 (2 is the compaction; 3 opens the split turn)


def test_20_file_lists_separate_reads_from_changes_sorted_and_carried_over() -> None:
    ops = FileOperations()
    ops.add_message(
        assistant(
            "",
            calls=[
                ("read", {"path": "b.py"}),
                ("read", {"path": "a.py"}),
                ("read", {"path": "c.py"}),
                ("edit", {"path": "c.py"}),
                ("write", {"path": "d.py"}),
                ("bash", {"command": "cat e.py"}),
                ("read", {"path": ""}),
            ],
        )
    )
    assert ops.details() == FileDetails(["a.py", "b.py"], ["c.py", "d.py"])

    carried = {"readFiles": ["old.py"], "modifiedFiles": ["changed.py"]}
    history = [user("u" * 4000), assistant("", calls=[("read", {"path": "new.py"})]), tool_result("r" * 4000)]
    kept = [user("u" * 4000), assistant("", calls=[("edit", {"path": "kept.py"})]), tool_result("r")]
    entries = chain(*history, compaction("e0", details=carried), *kept)
    preparation = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=100))
    assert preparation is not None
    assert preparation.file_ops.details() == FileDetails(["new.py", "old.py"], ["changed.py"])

    by_extension = chain(*history, compaction("e0", details=carried, from_hook=True), *kept)
    preparation = prepare_compaction(by_extension, CompactionSettings(keep_recent_tokens=100))
    assert preparation is not None
    assert preparation.file_ops.details() == FileDetails(["new.py"], [])


def test_21_file_list_blocks_appear_only_for_non_empty_lists() -> None:
    assert format_file_lists(FileDetails()) == ""
    assert format_file_lists(FileDetails(["a"], [])) == "\n\n<read-files>\na\n</read-files>"
    assert format_file_lists(FileDetails([], ["b", "c"])) == "\n\n<modified-files>\nb\nc\n</modified-files>"
    assert format_file_lists(FileDetails(["a"], ["b"])) == (
        "\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\n</modified-files>"
    )


def test_worked_example_preparation() -> None:
    entries = worked_example()
    preparation = prepare_compaction(entries, DEFAULTS)
    assert preparation is not None
    assert preparation.tokens_before == 184_500
    assert preparation.first_kept_entry_id == "e7" and preparation.is_split_turn
    assert [m.role for m in preparation.messages_to_summarize] == ["user", "assistant"]
    assert [m.role for m in preparation.turn_prefix_messages] == ["user", "assistant", "toolResult"]
    assert preparation.file_ops.details() == FileDetails(["src/a.ts"], [])
    assert preparation.previous_summary is None


def test_worked_example_second_compaction_starts_at_a2_and_carries_the_read_file() -> None:
    first = worked_example()
    details = {"readFiles": ["src/a.ts"], "modifiedFiles": []}
    later = [user("u" * 8000), assistant("a" * 80_000), user("u" * 400), assistant("a" * 400)]
    entries = chain(*first, compaction("e7", "H", details=details), *later)
    preparation = prepare_compaction(entries, DEFAULTS)
    assert preparation is not None
    assert preparation.previous_summary == "H"
    first_summarised = preparation.messages_to_summarize[0]
    assert isinstance(first_summarised, AssistantMessage) and first_summarised.text() == "a" * 800  # A2
    assert "src/a.ts" in preparation.file_ops.details().read_files
    assert "src/b.ts" in preparation.file_ops.details().modified_files  # A3's edit is summarised now


def _omit(target: str) -> ContextEditEntry:
    """A ``context_edit`` taking entry ``target`` out of the context (re-parented by ``chain``)."""
    return ContextEditEntry(target_id=target, replacement=None, id="x", parent_id=None, timestamp="")


def test_the_cut_pulls_in_an_omitted_attempt_before_it_as_pi16s_does() -> None:
    # e2 failed and was retried (e3 omits it); the kept part starts at the failed attempt, as
    # pi 1.6's projection keeps it there, and the turn it belongs to is split at e1.
    entries = chain(
        assistant("0" * 40),
        user("u" * 40),
        assistant("", stop_reason="error", error="500 boom"),
        _omit("e2"),
        assistant("a" * 40),
        user("v" * 40),
        assistant("b" * 40),
    )
    prepared = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=25))
    assert prepared is not None
    assert prepared.first_kept_entry_id == "e2"
    assert prepared.is_split_turn
    assert [m.role for m in prepared.turn_prefix_messages] == ["user"]
    assert [m.role for m in prepared.messages_to_summarize] == ["assistant"]


def test_a_cut_followed_only_by_an_omitted_attempt_moves_onto_it_as_pi16s_does() -> None:
    # The prompt (e2) overflowed; its failed reply is omitted. The cut lands on the reply, so the
    # prompt is summarised as the opening of a split turn instead of kept whole.
    entries = chain(
        user("p" * 400),
        assistant("r" * 400),
        user("q" * 1600),
        assistant("", stop_reason="error", error="prompt is too long"),
        _omit("e3"),
    )
    prepared = prepare_compaction(entries, CompactionSettings(keep_recent_tokens=300))
    assert prepared is not None
    assert prepared.first_kept_entry_id == "e3"
    assert prepared.is_split_turn
    assert [m.role for m in prepared.messages_to_summarize] == ["user", "assistant"]
    assert [m.role for m in prepared.turn_prefix_messages] == ["user"]
    # Not when the edit puts other content in place of a message: that is visible.
    replaced = [
        *entries[:4],
        ContextEditEntry(target_id="e3", replacement={"content": "x"}, id="x", parent_id=None, timestamp=""),
    ]
    prepared = prepare_compaction(chain(*replaced), CompactionSettings(keep_recent_tokens=300))
    assert prepared is not None and prepared.first_kept_entry_id == "e2" and not prepared.is_split_turn

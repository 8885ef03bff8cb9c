"""build_session_context: the root → leaf path, settings, compaction and summaries."""

from __future__ import annotations

from typing import Any

import pytest

from tau.ai.types import AssistantMessage, UserMessage
from tau.session import (
    LAST_ENTRY,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    IdSource,
    ModelRef,
    SessionManager,
    build_session_context,
)


@pytest.fixture
def manager(ids: IdSource) -> SessionManager:
    return SessionManager.in_memory("/p", ids=ids)


def texts(manager: SessionManager) -> list[str]:
    out = []
    for m in manager.build_session_context().messages:
        if isinstance(m, UserMessage | AssistantMessage):
            out.append(m.to_json()["content"][0]["text"])
        elif isinstance(m, CompactionSummaryMessage | BranchSummaryMessage):
            out.append(f"<{m.role}:{m.summary}>")
        else:
            out.append(f"<{m.role}>")
    return out


def test_no_entries_give_an_empty_context() -> None:  # 13.18
    context = build_session_context([])
    assert (context.messages, context.thinking_level, context.model) == ([], "off", None)


def test_explicit_none_leaf_is_empty_and_an_unknown_leaf_falls_back_to_the_last_entry(
    manager: SessionManager, msg: Any
) -> None:  # 13.19
    manager.append_message(msg.user("a"))
    manager.append_message(msg.assistant("b"))
    entries = manager.get_entries()
    assert build_session_context(entries, None).messages == []
    assert len(build_session_context(entries, "nope").messages) == 2
    assert len(build_session_context(entries, LAST_ENTRY).messages) == 2
    assert len(build_session_context(entries, entries[0].id).messages) == 1
    manager.reset_leaf()
    assert manager.build_session_context().messages == []


def test_model_and_thinking_level_come_from_the_latest_entries_on_the_path(
    manager: SessionManager, msg: Any
) -> None:  # 13.20
    manager.append_thinking_level_change("low")
    manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a", provider="anthropic", model="claude-x"))
    assert manager.build_session_context().model == ModelRef("anthropic", "claude-x")
    manager.append_model_change("openai", "gpt-4o")
    manager.append_thinking_level_change("high")
    context = manager.build_session_context()
    assert context.model == ModelRef("openai", "gpt-4o") and context.thinking_level == "high"
    manager.append_message(msg.assistant("b", provider="google", model="gemini"))
    assert manager.build_session_context().model == ModelRef("google", "gemini")


def test_a_compaction_keeps_its_summary_the_kept_range_and_everything_after(
    manager: SessionManager, msg: Any
) -> None:  # 13.21
    manager.append_message(msg.user("u1"))
    manager.append_message(msg.assistant("a1"))
    kept = manager.append_message(msg.user("u2"))
    manager.append_message(msg.assistant("a2"))
    manager.append_compaction("S1", kept, 5000)
    manager.append_message(msg.user("u3"))
    assert texts(manager) == ["<compactionSummary:S1>", "u2", "a2", "u3"]
    [summary] = [
        m for m in manager.build_session_context().messages if isinstance(m, CompactionSummaryMessage)
    ]
    assert summary.tokens_before == 5000 and summary.timestamp > 0


def test_only_the_latest_compaction_counts(manager: SessionManager, msg: Any) -> None:  # 13.22
    first = manager.append_message(msg.user("u1"))
    manager.append_message(msg.assistant("a1"))
    manager.append_compaction("S1", first, 100)
    second = manager.append_message(msg.user("u2"))
    manager.append_message(msg.assistant("a2"))
    manager.append_compaction("S2", second, 200)
    manager.append_message(msg.user("u3"))
    assert texts(manager) == ["<compactionSummary:S2>", "u2", "a2", "u3"]


def test_first_kept_id_at_the_first_entry_keeps_everything(
    manager: SessionManager, msg: Any
) -> None:  # 13.23
    first = manager.append_message(msg.user("u1"))
    manager.append_message(msg.assistant("a1"))
    manager.append_compaction("S", first, 1)
    assert texts(manager) == ["<compactionSummary:S>", "u1", "a1"]


def test_first_kept_id_off_the_path_keeps_only_summary_and_what_follows(
    manager: SessionManager, msg: Any
) -> None:  # 13.24
    manager.append_message(msg.user("u1"))
    manager.append_compaction("S", "not-on-path", 1)
    manager.append_message(msg.user("u2"))
    assert texts(manager) == ["<compactionSummary:S>", "u2"]


def test_custom_label_and_info_entries_emit_nothing_but_custom_messages_do(
    manager: SessionManager, msg: Any
) -> None:  # 13.25
    user = manager.append_message(msg.user("u1"))
    manager.append_custom_entry("ext", {"x": 1})
    manager.append_label_change(user, "L")
    manager.append_session_info("name")
    manager.append_custom_message_entry("ext", "injected", False, {"d": 1})
    messages = manager.build_session_context().messages
    assert [m.role for m in messages] == ["user", "custom"]
    custom = messages[1]
    assert isinstance(custom, CustomMessage)
    assert (custom.custom_type, custom.content, custom.display, custom.details) == (
        "ext",
        "injected",
        False,
        {"d": 1},
    )
    assert custom.timestamp > 0


def test_branch_summaries_appear_only_when_not_empty(manager: SessionManager, msg: Any) -> None:  # 13.26
    user = manager.append_message(msg.user("u1"))
    empty = manager.branch_with_summary(user, "")
    assert texts(manager) == ["u1"]
    manager.branch_with_summary(user, "explored X")
    assert texts(manager) == ["u1", "<branchSummary:explored X>"]
    summary = manager.build_session_context().messages[1]
    assert isinstance(summary, BranchSummaryMessage) and summary.from_id == empty  # the leaf left


def test_sibling_branches_are_invisible(manager: SessionManager, msg: Any) -> None:  # 13.27
    manager.append_message(msg.user("u1"))
    fork = manager.append_message(msg.assistant("a1"))
    manager.append_message(msg.user("left"))
    manager.branch(fork)
    manager.append_message(msg.user("right"))
    assert texts(manager) == ["u1", "a1", "right"]


def test_an_orphan_leaf_projects_only_its_own_chain(
    manager: SessionManager, msg: Any, ids: IdSource
) -> None:  # 13.28
    manager.append_message(msg.user("u1"))
    orphan_path = SessionManager.in_memory("/p", ids=ids)
    orphan_path.append_message(msg.user("lost parent"))
    orphan = orphan_path.get_entries()[0]
    orphan.parent_id = "missing1"
    context = build_session_context([*manager.get_entries(), orphan], orphan.id)
    assert [m.to_json()["content"][0]["text"] for m in context.messages] == ["lost parent"]


def test_a_self_parented_entry_does_not_loop(manager: SessionManager, msg: Any) -> None:
    manager.append_message(msg.user("u1"))
    entry = manager.get_entries()[0]
    entry.parent_id = entry.id
    assert len(build_session_context([entry]).messages) == 1


def test_the_v3_fixture_projects_like_pi(fixture_copy: Any, ids: IdSource) -> None:
    manager = SessionManager.open(str(fixture_copy("v3_session.jsonl")), ids=ids)
    context = manager.build_session_context()
    assert [m.role for m in context.messages] == [
        "compactionSummary", "user", "assistant", "toolResult", "assistant", "user", "assistant",
    ]  # fmt: skip
    assert context.model == ModelRef("openai", "gpt-5.1-codex") and context.thinking_level == "high"
    side = build_session_context(manager.get_entries(), "ee40a3d1")
    assert [m.role for m in side.messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    before_compaction = build_session_context(manager.get_entries(), "c7a19f33")
    assert [m.role for m in before_compaction.messages][-2:] == ["bashExecution", "custom"]


def test_a_context_list_a_caller_changes_is_not_the_one_the_next_call_returns(
    manager: SessionManager, msg: Any
) -> None:
    manager.append_message(msg.user("hello"))
    first = manager.build_session_context()
    first.messages.append(msg.user("added by the caller"))
    assert texts(manager) == ["hello"]
    manager.append_message(msg.user("next"))
    assert texts(manager) == ["hello", "next"]


def test_build_context_entries_are_the_branchs_entries_the_context_is_made_of(
    manager: SessionManager, msg: Any
) -> None:  # pi 1.6's sessionManager.buildContextEntries()
    assert manager.build_context_entries() == []
    first = manager.append_message(msg.user("u1"))
    label = manager.append_label_change(first, "start")
    assert [e.id for e in manager.build_context_entries()] == [first, label]  # no compaction: the branch
    manager.append_message(msg.assistant("a1"))
    kept = manager.append_message(msg.user("u2"))
    answer = manager.append_message(msg.assistant("a2"))
    compaction = manager.append_compaction("S1", kept, 5000)
    after = manager.append_message(msg.user("u3"))
    assert [e.id for e in manager.build_context_entries()] == [compaction, kept, answer, after]
    manager.branch(first)
    assert [e.id for e in manager.build_context_entries()] == [first]

"""pi's files in, pi's files out: fixtures of versions 1, 2 and 3 load, project and continue."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, ImageContent, ThinkingContent, ToolCall, UserMessage
from tau.session import (
    BashExecutionMessage,
    CompactionSummaryMessage,
    CustomMessage,
    IdSource,
    MessageEntry,
    ModelRef,
    SessionManager,
)

Copy = Callable[[str], Path]

EXPECTED = {
    # fixture: (roles of the projected context, model, thinking level, session name)
    "v1_session.jsonl": (
        ["compactionSummary", "user", "assistant", "user", "assistant"],
        ModelRef("openai", "gpt-5.1-codex"), "medium", None,
    ),
    "v2_session.jsonl": (
        ["user", "assistant", "toolResult", "assistant", "branchSummary", "custom", "user", "assistant"],
        ModelRef("anthropic", "claude-sonnet-4-5"), "off", None,
    ),
    "v3_session.jsonl": (
        ["compactionSummary", "user", "assistant", "toolResult", "assistant", "user", "assistant"],
        ModelRef("openai", "gpt-5.1-codex"), "high", "Chart labels: tick step fix",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pi_fixtures_load_and_project(name: str, fixture_copy: Copy, ids: IdSource) -> None:
    manager = SessionManager.open(str(fixture_copy(name)), ids=ids)
    roles, model, thinking, session_name = EXPECTED[name]
    context = manager.build_session_context()
    assert [m.role for m in context.messages] == roles
    assert (context.model, context.thinking_level, manager.get_session_name()) == (
        model,
        thinking,
        session_name,
    )
    assert manager.warnings == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pi_fixtures_continue_with_one_appended_line_per_entry(
    name: str, fixture_copy: Copy, ids: IdSource, msg: Any, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:
    path = fixture_copy(name)
    manager = SessionManager.open(str(path), ids=ids)
    loaded = path.read_bytes()  # after any migration
    leaf = manager.get_leaf_id()
    user = manager.append_message(msg.user("one more thing"))
    manager.append_message(msg.assistant("sure"))
    assert path.read_bytes().startswith(loaded)
    new_lines = read_jsonl(path)[-2:]
    assert [o["parentId"] for o in new_lines] == [leaf, user]
    reopened = SessionManager.open(str(path), ids=ids)
    assert [m.role for m in reopened.build_session_context().messages][-2:] == ["user", "assistant"]
    assert reopened.get_leaf_id() == new_lines[-1]["id"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loaded_entries_dump_back_to_the_exact_bytes(name: str, fixture_copy: Copy, ids: IdSource) -> None:
    path = fixture_copy(name)
    manager = SessionManager.open(str(path), ids=ids)
    lines = path.read_text(encoding="utf-8").splitlines()
    dumped = [manager.get_header().to_json(), *(e.to_json() for e in manager.get_entries())]
    assert [json.dumps(o, ensure_ascii=False, separators=(",", ":")) for o in dumped] == lines


def test_v3_fixture_messages_parse_into_typed_objects(fixture_copy: Copy, ids: IdSource) -> None:
    manager = SessionManager.open(str(fixture_copy("v3_session.jsonl")), ids=ids)
    by_id = {e.id: e for e in manager.get_entries() if isinstance(e, MessageEntry)}
    user = by_id["d15a6c03"].message
    assert isinstance(user, UserMessage) and isinstance(user.content, list)
    assert isinstance(user.content[1], ImageContent) and user.content[1].mime_type == "image/png"
    thinker = by_id["e9073b5f"].message
    assert isinstance(thinker, AssistantMessage)
    assert isinstance(thinker.content[0], ThinkingContent) and thinker.content[0].thinking_signature
    assert isinstance(thinker.content[1], ToolCall) and thinker.content[1].arguments == {
        "command": "grep -n tick src/chart.py"
    }
    assert thinker.usage.total_tokens == 8344 and thinker.stop_reason == "toolUse"
    bash = by_id["f4b0e6d2"].message
    assert isinstance(bash, BashExecutionMessage) and bash.exit_code == 0
    summary = manager.build_session_context().messages[0]
    assert isinstance(summary, CompactionSummaryMessage) and summary.tokens_before == 61234


def test_old_usage_without_total_tokens_is_summed_in_memory_only(fixture_copy: Copy, ids: IdSource) -> None:
    path = fixture_copy("v1_session.jsonl")
    manager = SessionManager.open(str(path), ids=ids)
    first_reply = manager.get_entries()[1]
    assert isinstance(first_reply, MessageEntry) and isinstance(first_reply.message, AssistantMessage)
    assert first_reply.message.usage.total_tokens == 1840 + 96
    assert "totalTokens" not in first_reply.to_json()["message"]["usage"]


def test_v2_hook_message_projects_as_a_custom_message(fixture_copy: Copy, ids: IdSource) -> None:
    manager = SessionManager.open(str(fixture_copy("v2_session.jsonl")), ids=ids)
    custom = manager.build_session_context().messages[5]
    assert isinstance(custom, CustomMessage)
    assert (custom.custom_type, custom.content, custom.display) == (
        "todo-reminder", "Open todos: document --units in README.", True,
    )  # fmt: skip
    [root] = manager.get_tree()
    assert root.label == "units-start"
    answer = root.children[0].children[0].children[0]
    assert [c.entry.type for c in answer.children] == ["message", "branch_summary"]

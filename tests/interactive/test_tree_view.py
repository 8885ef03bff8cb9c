"""/tree rows: depth-first, indented at branch points, the leaf's path marked."""

from __future__ import annotations

from pathlib import Path

from tau.ai.types import AssistantMessage, TextContent, ToolCall, UserMessage
from tau.modes.interactive.tree_view import tree_items
from tau.session import SessionManager


def _reply(text: str, *calls: str) -> AssistantMessage:
    content: list[TextContent | ToolCall] = [TextContent(text)] if text else []
    content += [ToolCall(f"c{i}", name) for i, name in enumerate(calls)]
    return AssistantMessage(content, api="openai-completions", provider="p", model="m")


def test_rows_follow_the_tree_and_mark_the_current_leaf(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_thinking_level_change("off")
    first = manager.append_message(UserMessage("first question"))
    manager.append_message(_reply("first answer"))
    manager.append_message(UserMessage("abandoned question"))
    manager.branch(first)
    manager.append_message(_reply("", "read", "bash"))
    items, selected = tree_items(manager)
    labels = [item.label for item in items]
    assert labels[0] == "│ user: first question"  # the thinking-level entry is left out
    assert any("assistant: first answer" in label for label in labels)
    assert any("user: abandoned question" in label for label in labels)
    assert labels[selected].strip().startswith("● assistant: [read, bash]")
    # the two children of the first question are indented one step deeper
    assert all(label.startswith("  ") for label in labels[1:])


def test_labels_show_next_to_their_entry(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    entry = manager.append_message(UserMessage("tagged"))
    manager.append_label_change(entry, "checkpoint")
    items, _ = tree_items(manager)
    assert items[0].label.endswith("user: tagged [checkpoint]")
    assert items[0].value == entry


def test_filters_choose_which_entries_show(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_model_change("p", "m")
    user = manager.append_message(UserMessage("do it"))
    manager.append_message(_reply("", "bash"))
    manager.append_message(_reply("done"))
    manager.append_label_change(user, "start")

    def shown(filter_mode: str) -> list[str]:
        return [item.label.strip(" │●") for item in tree_items(manager, filter_mode)[0]]

    assert shown("default") == ["user: do it [start]", "assistant: [bash]", "assistant: done"]
    assert shown("no-tools") == ["user: do it [start]", "assistant: done"]
    assert shown("user-only") == ["user: do it [start]"]
    assert shown("labeled-only") == ["user: do it [start]"]
    assert shown("all")[0] == "[model_change]" and len(shown("all")) == 5


def test_a_task_result_has_a_row_that_opens_the_childs_transcript(tmp_path: Path) -> None:
    from tau.ai.types import ToolResultMessage
    from tau.modes.interactive.tree_view import child_session_of

    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(UserMessage("delegate"))
    manager.append_message(_reply("", "task"))
    details = {"agent": "scout", "turns": 2, "sessionFile": "/s/child.jsonl"}
    manager.append_message(ToolResultMessage("c0", "task", [TextContent("done")], details=details))
    manager.append_message(
        ToolResultMessage("c1", "read", [TextContent("x")], details={"sessionFile": "/no"})
    )
    for mode in ("default", "no-tools", "all"):
        items, _ = tree_items(manager, mode)
        rows = [item for item in items if child_session_of(item.value) is not None]
        assert [(r.label.strip(), child_session_of(r.value)) for r in rows] == [
            ("⤷ sub-agent (scout, 2 turns): open its transcript", "/s/child.jsonl")
        ]
    items, _ = tree_items(manager, "user-only")
    assert all(child_session_of(item.value) is None for item in items)
    assert all(
        child_session_of(item.value) is None
        for item in tree_items(SessionManager.in_memory(str(tmp_path)))[0]
    )


def test_rows_carry_the_whole_trees_parents_indents_and_label_times(tmp_path: Path) -> None:
    from tau.modes.interactive.tree_view import tree_rows

    manager = SessionManager.in_memory(str(tmp_path))
    change = manager.append_thinking_level_change("off")
    first = manager.append_message(UserMessage("first"))
    left = manager.append_message(_reply("left"))
    manager.branch(first)
    right = manager.append_message(_reply("right"))
    manager.append_label_change(right, "kept")
    rows = tree_rows(manager)
    assert [item.value for item in rows.items] == [first, right, left]  # the current branch first
    # hidden entries are in the parents too, so a row finds its nearest shown ancestor
    assert list(rows.parents.items()) == [
        (change, None),
        (first, change),
        (right, first),
        (manager.get_leaf_id(), right),  # the label entry
        (left, first),
    ]
    assert rows.indents == {first: 0, left: 2, right: 2}
    assert rows.label_times == {right: manager.get_entry(manager.get_leaf_id() or "").timestamp}


def test_a_label_time_reads_as_pis(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    from tau.modes.interactive.tree_view import format_label_time

    now = datetime(2026, 12, 6, 15, 30).astimezone()
    assert format_label_time(now.replace(hour=9, minute=5).isoformat(), now) == "09:05"
    assert format_label_time((now - timedelta(days=40)).isoformat(), now) == "10/27 15:30"
    assert format_label_time(now.replace(year=2025, month=3, day=7).isoformat(), now) == "25/3/7 15:30"
    assert format_label_time("not a time", now) == ""

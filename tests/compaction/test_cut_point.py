"""Where the history is cut (spec 50 §4.1; test cases 10–15, 47, and properties)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.types import AssistantMessage, ToolResultMessage, UserMessage
from tau.compaction import estimate_tokens, find_cut_point, is_valid_cut_point
from tau.session.entries import MessageEntry, SessionEntry
from tau.session.manager import SessionManager

from .conftest import EntryItem, assistant, bash, chain, compaction, tool_result, user, worked_example


def test_10_without_a_valid_cut_point_the_cut_is_the_start() -> None:
    entries = chain("model_change", "thinking", tool_result("x" * 4000))
    cut = find_cut_point(entries, 1, len(entries), 10)
    assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (1, -1, False)


def test_11_when_everything_fits_everything_is_kept() -> None:
    entries = chain(user("a"), assistant("b"), user("c"), assistant("d"))
    cut = find_cut_point(entries, 0, len(entries), 20_000)
    assert (cut.first_kept_entry_index, cut.is_split_turn) == (0, False)


def test_12_the_cut_moves_past_a_tool_result_to_the_next_message() -> None:
    entries = chain(
        user("u" * 400),
        assistant("", calls=[("read", {"path": "a"})]),
        tool_result("r" * 4000),
        assistant("a" * 40),
        user("u" * 40),
        assistant("a" * 40),
    )
    # 10 + 10 + 10 (=30) then the tool result crosses 500 at index 2.
    cut = find_cut_point(entries, 0, len(entries), 500)
    assert cut.first_kept_entry_index == 3
    assert isinstance(entries[3], MessageEntry) and isinstance(entries[3].message, AssistantMessage)


def test_13_settings_and_labels_before_the_cut_are_kept_up_to_a_message_or_compaction() -> None:
    entries = chain(
        user("u" * 400), assistant("a" * 400), "model_change", "thinking", "label", "custom", user("u" * 400)
    )
    cut = find_cut_point(entries, 0, len(entries), 100)
    assert cut.first_kept_entry_index == 2  # pulled back over four entries, stopped by the reply
    assert not cut.is_split_turn or cut.turn_start_index >= 0

    with_compaction = chain(user("u" * 400), compaction("e0"), "model_change", user("u" * 400))
    cut = find_cut_point(with_compaction, 0, len(with_compaction), 100)
    assert cut.first_kept_entry_index == 2  # stops at the compaction


def test_14_a_cut_inside_a_turn_is_split_at_the_turns_user_message() -> None:
    entries = chain(
        user("first"),
        assistant("", calls=[("read", {"path": "a"})]),
        tool_result("r" * 4000),
        assistant("a" * 400),
    )
    cut = find_cut_point(entries, 0, len(entries), 50)
    assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (3, 0, True)

    shell_turn = chain(bash("make", "o" * 40), assistant("a" * 400))
    cut = find_cut_point(shell_turn, 0, 2, 50)
    assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (1, 0, True)


def test_15_extension_messages_and_branch_summaries_cut_and_start_turns_but_add_no_tokens() -> None:
    for kind in ("custom_message", "branch_summary"):
        lands_on_it = chain(
            user("u"),
            assistant("", calls=[("read", {"path": "a"})]),
            tool_result("r" * 4000),
            kind,
            assistant("a" * 40),
        )
        cut = find_cut_point(lands_on_it, 0, len(lands_on_it), 100)
        assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (3, 3, True)

        starts_the_turn = chain(
            kind, assistant("", calls=[("read", {"path": "a"})]), tool_result("r" * 4000), assistant("a" * 40)
        )
        cut = find_cut_point(starts_the_turn, 0, len(starts_the_turn), 100)
        assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (3, 0, True)

        # 400 chars in the entry would be 100 tokens and cross 105 there; they are not counted.
        uncounted = chain(user("u" * 400), kind, assistant("a" * 40))
        assert find_cut_point(uncounted, 0, 3, 105).first_kept_entry_index == 0


def test_worked_example_cuts_at_a2_inside_the_turn_of_u1() -> None:
    entries = worked_example()
    expected = [None, None, 1000, 500, 500, 106, 10_000, 200, 300, 300, 1000, 100, 15_000, 750]
    assert [estimate_tokens(e.message) if isinstance(e, MessageEntry) else None for e in entries] == expected
    cut = find_cut_point(entries, 0, len(entries), 20_000)
    assert (cut.first_kept_entry_index, cut.turn_start_index, cut.is_split_turn) == (7, 4, True)


def _write_v1_session(path: Path, turns: int, steps: int) -> None:
    """A version-1 session (no ids, no version key) of long turns: each user message is followed
    by many assistant tool calls and their results, like a real agent session."""
    usage = {
        "input": 10,
        "output": 10,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 20,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    lines: list[dict[str, object]] = [
        {
            "type": "session",
            "id": "6a1f0c2e-0000-4000-8000-000000000047",
            "timestamp": "2025-12-01T10:00:00.000Z",
            "cwd": "/tmp/project",
            "provider": "anthropic",
            "modelId": "claude-sonnet-4-5",
            "thinkingLevel": "off",
        }
    ]
    stamp = 1764583200000
    for turn in range(turns):
        lines.append(
            {
                "type": "message",
                "timestamp": "2025-12-01T10:00:01.000Z",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": f"task {turn}: " + "go " * 50}],
                    "timestamp": stamp,
                },
            }
        )
        for step in range(steps):
            call_id = f"toolu_{turn}_{step}"
            lines.append(
                {
                    "type": "message",
                    "timestamp": "2025-12-01T10:00:02.000Z",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Checking. " * 20},
                            {
                                "type": "toolCall",
                                "id": call_id,
                                "name": "read",
                                "arguments": {"path": f"src/f{step}.py"},
                            },
                        ],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": usage,
                        "stopReason": "toolUse",
                        "timestamp": stamp,
                    },
                }
            )
            lines.append(
                {
                    "type": "message",
                    "timestamp": "2025-12-01T10:00:03.000Z",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": call_id,
                        "toolName": "read",
                        "content": [{"type": "text", "text": "line of code\n" * 150}],
                        "isError": False,
                        "timestamp": stamp,
                    },
                }
            )
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


def test_47_a_large_v1_session_is_cut_at_an_assistant_message(tmp_path: Path) -> None:
    # pi checks this on a large recorded session; ours is generated in the same shape (v1, no
    # compaction, long tool-using turns).
    path = tmp_path / "large-session.jsonl"
    _write_v1_session(path, turns=4, steps=60)
    entries = SessionManager.open(str(path)).get_entries()
    assert sum(isinstance(e, MessageEntry) for e in entries) > 100
    cut = find_cut_point(entries, 0, len(entries), 20_000)
    kept = entries[cut.first_kept_entry_index]
    assert isinstance(kept, MessageEntry) and isinstance(kept.message, AssistantMessage)
    assert cut.is_split_turn


# -- properties --------------------------------------------------------------------------------

_ITEMS = st.one_of(
    st.builds(lambda n: user("u" * n), st.integers(0, 3000)),
    st.builds(lambda n: assistant("a" * n), st.integers(0, 3000)),
    st.builds(lambda n: assistant("", calls=[("read", {"path": "p" * n})]), st.integers(1, 300)),
    st.builds(lambda n: tool_result("r" * n), st.integers(0, 6000)),
    st.builds(lambda n: bash("ls", "o" * n), st.integers(0, 2000)),
    st.sampled_from(["model_change", "thinking", "label", "custom", "custom_message", "branch_summary"]),
)


def _message_tokens(entries: list[SessionEntry]) -> int:
    return sum(estimate_tokens(e.message) for e in entries if isinstance(e, MessageEntry))


@settings(max_examples=300, deadline=None)
@given(items=st.lists(_ITEMS, min_size=1, max_size=40), keep=st.integers(0, 5000), data=st.data())
def test_the_cut_never_lands_on_a_tool_result_and_keeps_the_budget_when_it_can(
    items: list[EntryItem], keep: int, data: st.DataObject
) -> None:
    entries = chain(*items)
    start = data.draw(st.integers(0, len(entries) - 1))
    cut = find_cut_point(entries, start, len(entries), keep)
    index = cut.first_kept_entry_index
    assert start <= index < len(entries)
    kept = entries[index]
    if any(is_valid_cut_point(e) for e in entries[start:]):
        assert not (isinstance(kept, MessageEntry) and isinstance(kept.message, ToolResultMessage))
    # The budget is kept, except for tool results that cannot stay without the call before the cut.
    reach = index
    while reach > start and not is_valid_cut_point(entries[reach - 1]):
        reach -= 1
    if _message_tokens(entries[start:]) >= keep:
        assert _message_tokens(entries[reach:]) >= keep
    if cut.is_split_turn:
        assert start <= cut.turn_start_index <= index
        assert not (isinstance(kept, MessageEntry) and isinstance(kept.message, UserMessage))
    else:
        assert cut.turn_start_index == -1

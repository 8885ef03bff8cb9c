"""The conversation as the summariser reads it (spec 50 §5.1; test case 22)."""

from __future__ import annotations

from tau.ai.types import ImageContent, TextContent, ToolResultMessage, UserMessage
from tau.compaction import serialize_conversation
from tau.compaction.serialize import truncate_for_summary
from tau.context.convert import convert_to_llm
from tau.session.messages import CompactionSummaryMessage

from .conftest import assistant, bash, tool_result, user


def test_22_parts_are_labelled_and_only_tool_results_are_truncated() -> None:
    long_user = "u" * 5000
    reply = assistant(
        "first\n",
        thinking="hmm",
        calls=[("read", {"path": "a.py", "offset": 1.0}), ("bash", {"command": "ls -la"})],
    )
    reply.content.insert(2, TextContent("second"))
    messages = [
        user(long_user),
        reply,
        tool_result("r" * 2500),
        tool_result(""),
        UserMessage([TextContent("look "), ImageContent("aGk=", "image/png"), TextContent("here")]),
        user(""),
    ]
    text = serialize_conversation(convert_to_llm(messages))
    assert text == "\n\n".join(
        [
            f"[User]: {long_user}",
            "[Assistant thinking]: hmm",
            "[Assistant]: first\n\nsecond",
            '[Assistant tool calls]: read(path="a.py", offset=1); bash(command="ls -la")',
            "[Tool result]: " + "r" * 2000 + "\n\n[... 500 more characters truncated]",
            "[User]: look here",
        ]
    )


def test_session_messages_are_converted_first() -> None:
    text = serialize_conversation(convert_to_llm([bash("make", "ok"), CompactionSummaryMessage("older", 10)]))
    assert text.startswith("[User]: Ran `make`")
    assert "<summary>\nolder\n</summary>" in text


def test_truncation_counts_utf16_units_and_never_splits_a_pair() -> None:
    assert truncate_for_summary("😀" * 1000) == "😀" * 1000  # exactly 2000 units
    cut = truncate_for_summary("a" + "😀" * 1000)
    assert cut == "a" + "😀" * 999 + "\n\n[... 2 more characters truncated]"


def test_tool_result_images_are_dropped() -> None:
    result = ToolResultMessage("c", "read", [ImageContent("aGk=", "image/png")])
    assert serialize_conversation([result]) == ""

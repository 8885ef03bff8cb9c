"""convert_to_llm: session message kinds as user text, drops, and image blocking (spec 20 §12 cases 53–58)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tau.agent.messages import default_convert_to_llm
from tau.ai import AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage
from tau.context import (
    BRANCH_SUMMARY_PREAMBLE,
    COMPACTION_SUMMARY_PREAMBLE,
    IMAGE_PLACEHOLDER,
    convert_to_llm,
)
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)

IMAGE = ImageContent(data="AA==", mime_type="image/png")


def only_text(messages: Sequence[object]) -> str:
    assert len(messages) == 1
    message = messages[0]
    assert isinstance(message, UserMessage)
    assert isinstance(message.content, list) and len(message.content) == 1
    block = message.content[0]
    assert isinstance(block, TextContent)
    return block.text


def bash(**changes: object) -> BashExecutionMessage:
    fields: dict[str, object] = {"command": "ls", "output": "a\nb", "exit_code": 0, "timestamp": 42}
    fields.update(changes)
    return BashExecutionMessage(**fields)  # type: ignore[arg-type]


def test_llm_roles_pass_through_as_the_same_objects() -> None:
    user = UserMessage("hi")
    reply = AssistantMessage(content=[TextContent("hello")], api="x", provider="y", model="z")
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent("ok")])
    converted = convert_to_llm([user, reply, result])
    assert all(a is b for a, b in zip(converted, [user, reply, result], strict=True))


def test_bash_excluded_from_context_is_dropped() -> None:  # case 53
    assert convert_to_llm([bash(exclude_from_context=True)]) == []


def test_bash_becomes_one_user_text_block_in_the_documented_format() -> None:  # case 53
    converted = convert_to_llm([bash()])
    assert only_text(converted) == "Ran `ls`\n```\na\nb\n```"
    assert converted[0].timestamp == 42


def test_bash_exit_code_zero_adds_no_exit_line_and_two_adds_one() -> None:  # case 54
    assert "code" not in only_text(convert_to_llm([bash(exit_code=0)]))
    assert only_text(convert_to_llm([bash(exit_code=2)])).endswith("```\n\nCommand exited with code 2")


def test_cancelled_bash_gets_the_cancelled_marker_and_no_exit_line() -> None:  # case 54
    text = only_text(convert_to_llm([bash(cancelled=True, exit_code=None)]))
    assert text.endswith("\n\n(command cancelled)")
    assert "exited" not in text
    assert "exited" not in only_text(convert_to_llm([bash(cancelled=True, exit_code=1)]))


def test_bash_with_empty_output_says_no_output() -> None:  # case 54
    assert only_text(convert_to_llm([bash(output="")])) == "Ran `ls`\n(no output)"


def test_truncated_bash_points_to_the_full_output_file() -> None:
    text = only_text(convert_to_llm([bash(truncated=True, full_output_path="/tmp/out.log")]))
    assert text.endswith("\n\n[Output truncated. Full output: /tmp/out.log]")
    assert "/tmp/out.log" not in only_text(convert_to_llm([bash(truncated=False, full_output_path="/x")]))


def test_custom_string_content_becomes_one_text_block() -> None:  # case 55
    converted = convert_to_llm([CustomMessage("note", "remember this", timestamp=9)])
    assert only_text(converted) == "remember this"
    assert converted[0].timestamp == 9


def test_custom_block_content_passes_through_and_hidden_ones_are_still_sent() -> None:  # case 55
    blocks: list[TextContent | ImageContent] = [TextContent("see"), IMAGE]
    converted = convert_to_llm([CustomMessage("note", blocks, display=False)])
    assert len(converted) == 1
    assert isinstance(converted[0], UserMessage)
    assert converted[0].content == blocks


def test_compaction_summary_wraps_the_summary_with_newlines_inside_the_tag() -> None:  # case 56
    text = only_text(convert_to_llm([CompactionSummaryMessage("did X", tokens_before=100)]))
    assert text == f"{COMPACTION_SUMMARY_PREAMBLE}\n\n<summary>\ndid X\n</summary>"


def test_branch_summary_has_no_newline_before_the_closing_tag() -> None:  # case 56
    text = only_text(convert_to_llm([BranchSummaryMessage("tried Y", from_id="abc")]))
    assert text == f"{BRANCH_SUMMARY_PREAMBLE}\n\n<summary>\ntried Y</summary>"


@dataclass
class Bookmark:
    label: str
    role: str = "bookmark"
    timestamp: int = 1


def test_unknown_roles_are_dropped_by_both_converters() -> None:  # case 57
    user = UserMessage("hi")
    assert convert_to_llm([Bookmark("x"), user]) == [user]
    assert default_convert_to_llm([bash(), CustomMessage("n", "t"), user]) == [user]


def test_block_images_replaces_images_and_collapses_adjacent_placeholders() -> None:  # case 58
    user = UserMessage([TextContent("look"), IMAGE, IMAGE, TextContent("and"), IMAGE])
    result = ToolResultMessage(tool_call_id="c", tool_name="read", content=[IMAGE])
    converted = convert_to_llm([user, result], block_images=True)
    texts = [[b.text for b in m.content if isinstance(b, TextContent)] for m in converted]
    assert texts == [["look", IMAGE_PLACEHOLDER, "and", IMAGE_PLACEHOLDER], [IMAGE_PLACEHOLDER]]
    assert not any(isinstance(b, ImageContent) for m in converted for b in m.content)
    assert user.content[1] is IMAGE, "the session's message is not mutated"


def test_block_images_leaves_assistant_messages_and_image_free_messages_alone() -> None:  # case 58
    reply = AssistantMessage(content=[TextContent("x")], api="a", provider="p", model="m")
    plain = UserMessage("text only")
    converted = convert_to_llm([reply, plain, CustomMessage("n", [IMAGE])], block_images=True)
    assert converted[0] is reply and converted[1] is plain
    assert converted[2].content == [TextContent(IMAGE_PLACEHOLDER)]


def test_images_are_kept_when_blocking_is_off() -> None:
    user = UserMessage([IMAGE])
    assert convert_to_llm([user]) == [user]

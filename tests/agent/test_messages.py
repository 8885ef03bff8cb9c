"""Agent messages: the default converter, the user-message helper, JSON for custom messages."""

from __future__ import annotations

from dataclasses import dataclass

from tau.agent.messages import CustomAgentMessage, default_convert_to_llm, message_to_json, user_message
from tau.ai import ImageContent, TextContent, ToolResultMessage, UserMessage
from tau.testing.faux import faux_message


@dataclass
class Bookmark:
    label: str
    role: str = "bookmark"
    timestamp: int = 5


class WithJson:
    role = "custom"
    timestamp = 7

    def to_json(self) -> dict[str, object]:
        return {"role": "custom", "customType": "x", "timestamp": 7}


def test_the_default_converter_keeps_only_the_three_llm_roles_in_order() -> None:
    user, reply = UserMessage("hi"), faux_message("hello")
    result = ToolResultMessage(tool_call_id="c", tool_name="t", content=[TextContent("ok")])
    assert default_convert_to_llm([Bookmark("a"), user, WithJson(), reply, result]) == [user, reply, result]


def test_any_object_with_role_and_timestamp_is_an_agent_message() -> None:
    assert isinstance(Bookmark("a"), CustomAgentMessage)
    assert isinstance(UserMessage("hi"), CustomAgentMessage)


def test_user_message_puts_text_before_images() -> None:
    image = ImageContent(data="AA==", mime_type="image/png")
    message = user_message("look", [image])
    assert message.content == [TextContent("look"), image]


def test_message_to_json_uses_to_json_or_dataclass_fields() -> None:
    assert message_to_json(UserMessage("hi", timestamp=1)) == {
        "role": "user",
        "content": "hi",
        "timestamp": 1,
    }
    assert message_to_json(WithJson())["customType"] == "x"
    assert message_to_json(Bookmark("a")) == {"role": "bookmark", "label": "a", "timestamp": 5}

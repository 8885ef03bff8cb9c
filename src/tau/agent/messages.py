"""Agent messages: the three LLM messages plus any app-defined message with a role and a timestamp."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

import msgspec

from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    JsonObject,
    Message,
    TextContent,
    ToolResultMessage,
    UserMessage,
)


@runtime_checkable
class CustomAgentMessage(Protocol):
    """An app-defined message. The loop stores and emits it; only ``convert_to_llm`` decides
    whether (and as what) the model sees it."""

    @property
    def role(self) -> str: ...

    @property
    def timestamp(self) -> int: ...


AgentMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage | CustomAgentMessage

LLM_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


def default_convert_to_llm(messages: Sequence[AgentMessage]) -> list[Message]:
    """Keep the user, assistant and tool-result messages; drop every app-defined one."""
    return [m for m in messages if isinstance(m, LLM_MESSAGE_TYPES)]


def user_message(text: str, images: Sequence[ImageContent] | None = None) -> UserMessage:
    """A user message with one text block, followed by the image blocks if any."""
    content: list[TextContent | ImageContent] = [TextContent(text)]
    content.extend(images or ())
    return UserMessage(content)


def message_to_json(message: AgentMessage) -> JsonObject:
    """A message's JSON form: its ``to_json()`` if it has one, else its record's (struct or dataclass) fields."""
    to_json = getattr(message, "to_json", None)
    if callable(to_json):
        data: JsonObject = to_json()
        return data
    if isinstance(message, msgspec.Struct):
        record: JsonObject = msgspec.to_builtins(message)
        return {"role": message.role, **record, "timestamp": message.timestamp}
    # No object is a dataclass while the module is not loaded: a run without one does not load it.
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is not None and dataclasses.is_dataclass(message) and not isinstance(message, type):
        fields: JsonObject = dataclasses.asdict(message)
        return {"role": message.role, **fields, "timestamp": message.timestamp}
    extra: dict[str, Any] = dict(getattr(message, "__dict__", {}))
    return {**extra, "role": message.role, "timestamp": message.timestamp}

"""The conversation as plain labelled text for the summariser.

Sent as chat messages, a conversation invites the model to carry on with it; flattened into one
block of ``[User]: …`` / ``[Assistant]: …`` parts it reads as a document to summarise. Tool results
are cut to their first 2000 characters (the summary needs what a call found, not all of it);
images are left out.
"""

from __future__ import annotations

from collections.abc import Iterable

from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.compaction.tokens import js_json, utf16_length

__all__ = ["TOOL_RESULT_MAX_CHARS", "serialize_conversation", "truncate_for_summary"]

TOOL_RESULT_MAX_CHARS = 2000


def serialize_conversation(messages: Iterable[Message]) -> str:
    """LLM messages (after ``convert_to_llm``) as labelled parts separated by blank lines."""
    parts: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = _text_of(message.content)
            if text:
                parts.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            parts.extend(_assistant_parts(message))
        elif isinstance(message, ToolResultMessage):
            text = _text_of(message.content)
            if text:
                parts.append(f"[Tool result]: {truncate_for_summary(text)}")
    return "\n\n".join(parts)


def _text_of(content: str | Iterable[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, TextContent))


def _assistant_parts(message: AssistantMessage) -> list[str]:
    thinking = [b.thinking for b in message.content if isinstance(b, ThinkingContent)]
    texts = [b.text for b in message.content if isinstance(b, TextContent)]
    calls = [_format_call(b) for b in message.content if isinstance(b, ToolCall)]
    parts = []
    if thinking:
        parts.append("[Assistant thinking]: " + "\n".join(thinking))
    if texts:
        parts.append("[Assistant]: " + "\n".join(texts))
    if calls:
        parts.append("[Assistant tool calls]: " + "; ".join(calls))
    return parts


def _format_call(call: ToolCall) -> str:
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    return f"{call.name}({', '.join(f'{key}={js_json(value)}' for key, value in arguments.items())})"


def truncate_for_summary(text: str, limit: int = TOOL_RESULT_MAX_CHARS) -> str:
    """``text`` cut to ``limit`` UTF-16 units with a note of how many were dropped."""
    length = utf16_length(text)
    if length <= limit:
        return text
    if text.isascii():
        kept = text[:limit]
    else:
        units = text.encode("utf-16-le", "surrogatepass")[: 2 * limit]
        if 0xD8 <= units[-1] <= 0xDB:  # never end on half a surrogate pair
            units = units[:-2]
        kept = units.decode("utf-16-le", "surrogatepass")
    return f"{kept}\n\n[... {length - utf16_length(kept)} more characters truncated]"

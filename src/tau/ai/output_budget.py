"""The output cap of a ``stream_simple`` call: the model's ``maxTokens``, fitted into its context window.

As pi 1.6 does: the input is estimated (the last reply's reported usage plus ~3.5 characters per
token for what came after it; the system prompt and tool definitions count as a leading message),
and the cap leaves a margin for the input being counted higher than estimated (OpenRouter counts
with its own tokenizer and rejects ``input + max_tokens`` above the window): 15% of the input,
at least 4096 tokens; when that leaves less than 32768 tokens of output, only the 4096 are kept.
"""

from __future__ import annotations

import json
import math

from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    Tool,
    Usage,
)

_CHARS_PER_TOKEN = 3.5
_IMAGE_CHARS = 4800
_SAFETY_TOKENS = 4096
_SAFETY_RATIO = 0.15
_MIN_OUTPUT_WITH_RATIO_MARGIN = 32768


def _length(text: str) -> int:
    """``len`` as JavaScript counts it (characters outside the BMP count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _tokens(chars: int) -> int:
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _content_chars(content: str | list[TextContent | ImageContent]) -> int:
    if isinstance(content, str):
        return _length(content)
    return sum(_length(b.text) if isinstance(b, TextContent) else _IMAGE_CHARS for b in content)


def _message_tokens(message: Message) -> int:
    if not isinstance(message, AssistantMessage):
        return _tokens(_content_chars(message.content))
    chars = 0
    for block in message.content:
        if isinstance(block, TextContent):
            chars += _length(block.text)
        elif isinstance(block, ThinkingContent):
            chars += _length(block.thinking)
        else:
            chars += _length(block.name) + _length(_json(block.arguments))
    return _tokens(chars)


def _leading_tokens(system_prompt: str | None, tools: list[Tool] | None) -> int:
    tokens = _tokens(_length(system_prompt)) if system_prompt else 0
    if tools:
        tokens += _tokens(_length(_json([tool.to_json() for tool in tools])))
    return tokens


def _usage_tokens(usage: Usage) -> int:
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def _last_usage_index(messages: list[Message]) -> int | None:
    """The last reply whose reported usage still describes the input before it: none of the
    messages before it is newer than it (a compaction summary put in front of a kept reply is, so
    that reply's usage counted the history the summary replaced), as pi 1.6 decides."""
    found = None
    newest = -math.inf
    for index, message in enumerate(messages):
        if (
            isinstance(message, AssistantMessage)
            and message.timestamp >= newest
            and message.stop_reason not in ("aborted", "error")
            and _usage_tokens(message.usage) > 0
        ):
            found = index
        newest = max(newest, message.timestamp)
    return found


def estimate_input_tokens(context: Context) -> int:
    """The tokens the request's input is expected to take."""
    messages = context.messages
    index = _last_usage_index(messages)
    if index is not None:
        reply = messages[index]
        assert isinstance(reply, AssistantMessage)
        return _usage_tokens(reply.usage) + sum(_message_tokens(m) for m in messages[index + 1 :])
    leading = _leading_tokens(context.system_prompt, context.tools)
    return leading + sum(_message_tokens(m) for m in messages)


def clamp_max_tokens_to_context(context_window: int, context: Context, max_tokens: int) -> int:
    """``max_tokens`` fitted into ``context_window`` beside the estimated input (at least 1)."""
    if context_window <= 0:
        return max(1, max_tokens)
    estimated = estimate_input_tokens(context)
    margin = max(_SAFETY_TOKENS, math.ceil(estimated * _SAFETY_RATIO))
    room = context_window - estimated - margin
    if room < _MIN_OUTPUT_WITH_RATIO_MARGIN:
        room = min(_MIN_OUTPUT_WITH_RATIO_MARGIN, context_window - estimated - _SAFETY_TOKENS)
    return min(max_tokens, max(1, room))

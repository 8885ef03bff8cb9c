"""How full the model's context window is: the provider's last reported usage plus an estimate
for what came after it (four characters a token)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tau.agent.messages import AgentMessage
from tau.ai.types import AssistantMessage, ImageContent, TextContent, ThinkingContent, ToolCall, Usage

__all__ = ["ContextUsage", "estimate_context_usage", "usage_tokens"]

_CHARS_PER_TOKEN = 4
_IMAGE_TOKENS = 1200


@dataclass(frozen=True, slots=True)
class ContextUsage:
    tokens: int | None
    context_window: int
    percent: float | None


def usage_tokens(usage: Usage) -> int:
    """The context size a response reports: its total, else the sum of its four counts."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def estimate_context_usage(messages: Sequence[AgentMessage], context_window: int) -> ContextUsage:
    """Tokens in context: the last successful response's usage, plus an estimate of later messages
    (everything is estimated when no response reported usage)."""
    anchor = -1
    tokens = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("error", "aborted")
            and usage_tokens(message.usage) > 0
        ):
            anchor, tokens = index, usage_tokens(message.usage)
            break
    tokens += sum(_estimate(m) for m in messages[anchor + 1 :])
    percent = tokens / context_window * 100 if context_window > 0 else None
    return ContextUsage(tokens, context_window, percent)


def _estimate(message: AgentMessage) -> int:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        chars, images = len(content), 0
    elif isinstance(content, list):
        chars, images = 0, 0
        for block in content:
            if isinstance(block, TextContent):
                chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                chars += len(block.thinking)
            elif isinstance(block, ToolCall):
                chars += len(block.name) + len(json.dumps(block.arguments))
            elif isinstance(block, ImageContent):
                images += 1
    else:
        chars = sum(len(str(v)) for v in (getattr(message, f, "") for f in ("command", "output", "summary")))
        images = 0
    return -(-chars // _CHARS_PER_TOKEN) + images * _IMAGE_TOKENS

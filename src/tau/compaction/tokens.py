"""Counting tokens: the provider's reported usage, and a conservative four-characters-a-token estimate.

Characters are UTF-16 code units (what JavaScript's ``.length`` counts), so tau and pi estimate the
same session alike. The estimate over-counts on purpose: it decides when to compact and how much
recent history to keep, and erring large keeps requests inside the window.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from tau.ai.js_json import js_json
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.compaction.settings import CompactionSettings
from tau.session.entries import CompactionEntry, ContextEditEntry, MessageEntry, SessionEntry
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    SystemMessage,
    replay_system_messages,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "IMAGE_CHARS",
    "ContextEstimate",
    "calculate_context_tokens",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    "get_last_assistant_usage",
    "js_json",
    "should_compact",
    "utf16_length",
]

CHARS_PER_TOKEN = 4
IMAGE_CHARS = 4800
"""What one image counts for in tool results and custom messages (1200 tokens)."""


def utf16_length(text: str) -> int:
    """``len`` as JavaScript counts it: characters outside the BMP count twice."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def calculate_context_tokens(usage: Usage) -> int:
    """The context size a response reports: its total if set, else the sum of its four counts."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def estimate_tokens(message: object) -> int:
    """A message's tokens estimated as ``ceil(chars / 4)`` (see the module docstring)."""
    chars = _chars(message)
    return -(-chars // CHARS_PER_TOKEN)


def _chars(message: object) -> int:
    if isinstance(message, UserMessage):
        content = message.content
        if isinstance(content, str):
            return utf16_length(content)
        return sum(utf16_length(b.text) for b in content if isinstance(b, TextContent))
    if isinstance(message, AssistantMessage):
        total = 0
        for block in message.content:
            if isinstance(block, TextContent):
                total += utf16_length(block.text)
            elif isinstance(block, ThinkingContent):
                total += utf16_length(block.thinking)
            elif isinstance(block, ToolCall):
                total += utf16_length(block.name) + utf16_length(js_json(block.arguments))
        return total
    if isinstance(message, (ToolResultMessage, CustomMessage)):
        return _content_chars(message.content)
    if isinstance(message, BashExecutionMessage):
        return utf16_length(message.command) + utf16_length(message.output)
    if isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        return utf16_length(message.summary)
    return 0


def _content_chars(content: str | Sequence[TextContent | ImageContent]) -> int:
    if isinstance(content, str):
        return utf16_length(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += utf16_length(block.text)
        elif isinstance(block, ImageContent):
            total += IMAGE_CHARS
    return total


class ContextEstimate(Struct, frozen=True):
    """The context's size: the last usable reported usage plus estimates for what came after it.

    ``last_usage_index`` is the index of that reply in the messages (``None``: nothing reported)."""

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def _is_usage_anchor(message: object) -> bool:
    return isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error")


def estimate_context_tokens(messages: Sequence[object]) -> ContextEstimate:
    """Tokens the messages take: the usage of the last reply that neither failed nor was aborted
    (a zero usage counts too) plus estimates of the messages after it; all estimated without one."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _is_usage_anchor(message):
            assert isinstance(message, AssistantMessage)
            usage_tokens = calculate_context_tokens(message.usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(m) for m in messages)
    return ContextEstimate(estimated, 0, estimated, None)


def estimate_projected_context_tokens(
    messages: Sequence[object], branch: Sequence[SessionEntry]
) -> ContextEstimate:
    """The size of ``messages``, a session branch's projection (its ``branch`` entries), as pi 1.6
    measures it before the next request of a run: the last reply with a non-zero usage that neither
    failed nor was aborted, plus estimates of what follows it, unless a ``compaction`` or
    ``context_edit`` entry came after that reply (its usage then describes another context); then
    every message estimated, the prompt records counted once, as the prompt they add up to."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not _is_usage_anchor(message):
            continue
        assert isinstance(message, AssistantMessage)
        usage_tokens = calculate_context_tokens(message.usage)
        if usage_tokens <= 0:
            continue
        if _entry_index(branch, message) > _latest_rewrite_index(branch):
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
        break
    prompt = replay_system_messages(m for m in messages if isinstance(m, SystemMessage))
    tokens = _system_tokens(prompt) if prompt is not None else 0
    tokens += sum(estimate_tokens(m) for m in messages if not isinstance(m, SystemMessage))
    return ContextEstimate(tokens, 0, tokens, None)


def _entry_index(branch: Sequence[SessionEntry], message: AssistantMessage) -> int:
    for index in range(len(branch) - 1, -1, -1):
        entry = branch[index]
        if isinstance(entry, MessageEntry) and (
            entry.message is message
            or (isinstance(entry.message, AssistantMessage) and entry.message.timestamp == message.timestamp)
        ):
            return index
    return -1


def _latest_rewrite_index(branch: Sequence[SessionEntry]) -> int:
    for index in range(len(branch) - 1, -1, -1):
        if isinstance(branch[index], (CompactionEntry, ContextEditEntry)):
            return index
    return -1


def _system_tokens(message: SystemMessage) -> int:
    chars = utf16_length(message.content)
    chars += sum(utf16_length(text) for text in (message.sections or {}).values() if text)
    if message.tools_added:
        chars += utf16_length(js_json(message.tools_added))
    return -(-chars // CHARS_PER_TOKEN)


def get_last_assistant_usage(entries: Sequence[SessionEntry]) -> Usage | None:
    """The usage of the last reply stored in ``entries`` that neither failed nor was aborted."""
    for entry in reversed(entries):
        if isinstance(entry, MessageEntry) and _is_usage_anchor(entry.message):
            assert isinstance(entry.message, AssistantMessage)
            return entry.message.usage
    return None


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """Whether compaction is on and the context has grown past the window minus the reserve (strictly)."""
    return settings.enabled and context_tokens > context_window - settings.reserve_tokens

"""How full the model's context window is (footer, stats): spec 50 §2.4.

The provider's last reported usage plus an estimate for what came after it (four characters a
token), the same measure auto-compaction uses. Right after a compaction the old usage no longer
describes the context and nothing newer exists yet: the size is unknown (``None``) until a reply
reports one.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from tau.agent.messages import AgentMessage
from tau.ai.types import AssistantMessage, Model, Usage
from tau.compaction.tokens import calculate_context_tokens, estimate_context_tokens
from tau.session.entries import CompactionEntry, MessageEntry, SessionEntry

__all__ = ["ContextUsage", "context_usage", "estimate_context_usage", "usage_tokens"]


class ContextUsage(Struct, frozen=True):
    tokens: int | None
    context_window: int
    percent: float | None


def usage_tokens(usage: Usage) -> int:
    """The context size a response reports: its total, else the sum of its four counts."""
    return calculate_context_tokens(usage)


def estimate_context_usage(messages: Sequence[AgentMessage], context_window: int) -> ContextUsage:
    """Tokens in context: the last successful response's usage plus estimates of later messages."""
    tokens = estimate_context_tokens(messages).tokens
    percent = tokens / context_window * 100 if context_window > 0 else None
    return ContextUsage(tokens, context_window, percent)


def context_usage(
    model: Model | None, branch: Sequence[SessionEntry], messages: Sequence[AgentMessage]
) -> ContextUsage | None:
    """The usage for ``model`` of the context made of ``messages`` (the agent's), given the
    session ``branch``; ``None`` without a model or window, unknown tokens right after a compaction."""
    if model is None or model.context_window <= 0:
        return None
    window = model.context_window
    if not _measured_since_last_compaction(branch):
        return ContextUsage(None, window, None)
    return estimate_context_usage(messages, window)


def _measured_since_last_compaction(branch: Sequence[SessionEntry]) -> bool:
    """False when the branch has a compaction and the newest reply after it (failed and aborted
    ones aside) is missing or reported no usage."""
    compaction = next(
        (i for i in range(len(branch) - 1, -1, -1) if isinstance(branch[i], CompactionEntry)), None
    )
    if compaction is None:
        return True
    for entry in reversed(branch[compaction + 1 :]):
        message = entry.message if isinstance(entry, MessageEntry) else None
        if isinstance(message, AssistantMessage) and message.stop_reason not in ("aborted", "error"):
            return calculate_context_tokens(message.usage) > 0
    return False

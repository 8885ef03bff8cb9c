"""A session's token use as ACP sees it: ``usage_update`` (context used and size, the session's
cost so far) after each prompt and on load, and the prompt's own tokens in its response."""

from __future__ import annotations

from collections.abc import Sequence

from tau.ai.types import JsonObject, Usage
from tau.runtime.agent_session import AgentSession
from tau.session.usage import usages

__all__ = ["prompt_usage", "usage_update"]


def usage_update(session: AgentSession) -> JsonObject | None:
    """``None`` while the context size is not known (no model, or just compacted)."""
    context = session.get_context_usage()
    if context is None or context.tokens is None:
        return None
    # Every usage the file records, all branches, as the footer and RPC's get_session_stats count it.
    cost = sum(usage.cost.total for usage in usages(session.session_manager.get_entries()))
    return {
        "sessionUpdate": "usage_update",
        "used": context.tokens,
        "size": context.context_window,
        "cost": {"amount": cost, "currency": "USD"},
    }


def prompt_usage(replies: Sequence[Usage]) -> JsonObject:
    """The tokens of one prompt's model calls (``PromptResponse.usage``)."""
    usage: JsonObject = {
        "totalTokens": sum(
            u.total_tokens or u.input + u.output + u.cache_read + u.cache_write for u in replies
        ),
        "inputTokens": sum(u.input for u in replies),
        "outputTokens": sum(u.output for u in replies),
        "cachedReadTokens": sum(u.cache_read for u in replies),
        "cachedWriteTokens": sum(u.cache_write for u in replies),
    }
    reasoning = [u.reasoning for u in replies if u.reasoning is not None]
    if reasoning:
        usage["thoughtTokens"] = sum(reasoning)
    return usage

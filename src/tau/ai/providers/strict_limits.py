"""Sessions whose strict tools Claude refused for going over its limits (a 400 naming them).

Claude takes at most about 20 strict tools and 16 optional or union-typed parameters across them;
a request over that fails whole. The provider then sends it again with every tool non-strict, and
the session's later requests go non-strict from the start: the tool set rarely changes between
turns, so trying strict again would only be refused again, and switching back later would rewrite
the tool definitions and miss the prompt cache (pi 1.6 does the same).
"""

from __future__ import annotations

import json
import time

from tau.ai.session_resources import register_cleanup
from tau.ai.transport.http import HttpStatusError
from tau.ai.types import JsonObject

# How Claude words the refusal (the Anthropic API and Bedrock alike).
_LIMIT_MESSAGES = (
    "The compiled grammar is too large",
    "Too many strict tools (",
    "Schemas contains too many parameters with union types (",
)
# At most this many sessions are remembered (the oldest goes first); a forgotten one pays one
# more refusal.
_MAX_SESSIONS = 10_000
_sessions: dict[str, None] = {}


def exceeded(session_id: str | None) -> bool:
    """Whether an earlier request of this session had its strict tools refused."""
    return session_id is not None and session_id in _sessions


def mark(session_id: str | None) -> None:
    """Remember that this session's strict tools went over the limits (nothing without a session)."""
    if session_id is None:
        return
    _sessions.pop(session_id, None)
    _sessions[session_id] = None
    if len(_sessions) > _MAX_SESSIONS:
        del _sessions[next(iter(_sessions))]


def forget(session_id: str | None = None) -> None:
    """Drop one session's record, or every record."""
    if session_id is None:
        _sessions.clear()
    else:
        _sessions.pop(session_id, None)


def refused(error: HttpStatusError) -> bool:
    """Whether ``error`` is Claude on the Anthropic API refusing a request's strict tools for their size."""
    if error.status != 400 or _error_type(error.body) != "invalid_request_error":
        return False
    return names_a_limit(str(error))


def names_a_limit(message: str) -> bool:
    """Whether an error message is Claude's refusal of strict tools over its limits (Bedrock's
    ``ValidationException`` carries the same words)."""
    return any(limit in message for limit in _LIMIT_MESSAGES)


def diagnostic(error: HttpStatusError, provider: str = "anthropic") -> JsonObject:
    """The record kept on the reply (pi 1.6's ``anthropic_strict_tools_fallback`` diagnostic, or
    ``bedrock_strict_tools_fallback`` with ``provider="bedrock"``)."""
    return {
        "type": f"{provider}_strict_tools_fallback",
        "timestamp": time.time_ns() // 1_000_000,
        "error": {"message": str(error)},
        "details": {"reason": "strict_tool_limits_exceeded"},
    }


def _error_type(body: str) -> str | None:
    try:
        data = json.loads(body)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind if isinstance(kind, str) else None


register_cleanup(forget)

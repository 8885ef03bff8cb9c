"""Anthropic message threads: a session's next request sends only its new messages (pi 1.6).

Where the model's compat has ``supportsMessageThreads`` (by default: a base URL on
api.anthropic.com) and a request has a session id with caching on, the request carries
``thread: {"type": "create"}`` and the ``message-threads-2026-08-12`` beta. The server keeps the
conversation under the reply's id; the session's next request, when it starts with exactly what the
server holds (same fixed settings, same messages up to and with that reply), sends only the
messages after it with ``thread: {"type": "continue", "previous_message_id": ...}`` and without
``system`` and ``tools`` (the thread keeps its own). Each reply is continued at most once.

A refusal about the thread is answered by sending the request again in full, once: as a new thread
when the old one cannot go on (expired, raced, settings changed), or without ``thread`` when the
endpoint cannot use threads, which turns them off for the session. The reply records an
``anthropic_thread_fallback`` diagnostic either way.

State lives per process, per session id, for at most ``_MAX_SESSIONS`` sessions.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Literal, NamedTuple, TypeAlias

from tau.ai.options import StreamOptions, resolve_cache_retention
from tau.ai.providers.anthropic_compat import anthropic_compat
from tau.ai.session_resources import register_cleanup
from tau.ai.short_hash import short_hash
from tau.ai.transport.http import HttpStatusError
from tau.ai.types import AssistantMessage, JsonObject, Model

# Refusals of a ``continue`` that a new thread answers.
_NEW_THREAD_ERRORS = frozenset(
    {
        "thread_not_found",
        "thread_already_continued",
        "thread_continue_in_flight",
        "thread_fingerprint_mismatch",
    }
)
_MAX_SESSIONS = 10_000


class _Continuable(NamedTuple):
    prefix_count: int
    prefix_hash: str
    reply_id: str


_State: TypeAlias = _Continuable | Literal["off"]
_sessions: dict[str, _State] = {}


class ThreadRequest(NamedTuple):
    """A request body with its ``thread`` field, for the session ``session_id``."""

    session_id: str
    body: JsonObject


def thread_session(model: Model, options: StreamOptions) -> str | None:
    """The session whose requests may use threads; ``None`` where threads do not apply."""
    if not anthropic_compat(model).supports_message_threads:
        return None
    if resolve_cache_retention(options.cache_retention) == "none":
        return None
    return options.session_id or None


def prepare(model: Model, session_id: str, body: JsonObject, betas: str) -> ThreadRequest | None:
    """The thread request for ``body``: a ``continue`` when the session's last reply can be
    continued, else a ``create``; ``None`` when the endpoint refused threads for this session."""
    state = _sessions.get(session_id)
    if state == "off":
        return None
    messages = body.get("messages")
    if (
        isinstance(state, _Continuable)
        and isinstance(messages, list)
        and len(messages) > state.prefix_count
        and _prefix_hash(model, body, betas, messages[: state.prefix_count]) == state.prefix_hash
    ):
        # A reply is continued once; forgetting it also keeps a concurrent request from trying.
        del _sessions[session_id]
        rest = {key: value for key, value in body.items() if key not in ("system", "tools")}
        rest["messages"] = messages[state.prefix_count :]
        rest["thread"] = {"type": "continue", "previous_message_id": state.reply_id}
        return ThreadRequest(session_id, rest)
    return created(session_id, body)


def created(session_id: str, body: JsonObject) -> ThreadRequest:
    return ThreadRequest(session_id, {**body, "thread": {"type": "create"}})


Fallback: TypeAlias = Literal["new_thread", "no_thread"]


def fallback(error: HttpStatusError) -> Fallback | None:
    """How to answer a refused thread request: a new thread, no thread, or not at all (the error is
    not about the thread, and sending again would fail again)."""
    code = _error_code(error.body)
    if code is not None and code in _NEW_THREAD_ERRORS:
        return "new_thread"
    # The endpoint cannot thread this request, or does not know the field (a 400 naming it).
    if code == "thread_unsupported_request" or (
        code is None and error.status == 400 and "thread" in str(error)
    ):
        return "no_thread"
    return None


def turn_off(session_id: str) -> None:
    _set(session_id, "off")


def diagnostic(error: HttpStatusError) -> JsonObject:
    """The record kept on the reply (pi 1.6's ``anthropic_thread_fallback``)."""
    return {
        "type": "anthropic_thread_fallback",
        "timestamp": time.time_ns() // 1_000_000,
        "error": {"message": str(error)},
        "details": {"reason": _error_code(error.body) or str(error.status)},
    }


def record_reply(
    model: Model,
    thread: ThreadRequest,
    body: JsonObject,
    betas: str,
    output: AssistantMessage,
    convert_reply: Callable[[AssistantMessage], list[JsonObject]],
) -> None:
    """Where the session's next request can continue: after ``output``, the reply to ``thread``,
    whose full request was ``body``. ``convert_reply`` gives the reply as the next request sends it."""
    # A fallback model's reply (``response_model``) is not kept by the server.
    if not output.response_id or output.response_model is not None:
        return
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    prefix = [*messages, *convert_reply(output)]
    _set(
        thread.session_id,
        _Continuable(len(prefix), _prefix_hash(model, body, betas, prefix), output.response_id),
    )


def forget(session_id: str | None = None) -> None:
    """Drop one session's thread state, or every session's."""
    if session_id is None:
        _sessions.clear()
    else:
        _sessions.pop(session_id, None)


def _set(session_id: str, state: _State) -> None:
    _sessions.pop(session_id, None)  # re-inserted last, so the oldest goes first
    _sessions[session_id] = state
    if len(_sessions) > _MAX_SESSIONS:
        del _sessions[next(iter(_sessions))]


def _prefix_hash(model: Model, body: JsonObject, betas: str, messages: list[object]) -> str:
    """A hash of what a ``continue`` builds on: the endpoint and the request's fixed fields (a
    ``continue`` leaves ``system`` and ``tools`` out, so only this notices them change), and the
    messages the server holds, with what does not change their meaning taken out."""
    settings = [
        model.provider,
        model.base_url,
        body.get("model"),
        body.get("system"),
        body.get("tools"),
        body.get("thinking"),
        body.get("output_config"),
        body.get("tool_choice"),
        betas,
        body.get("fallbacks"),
    ]
    conversation = [_normalized(message) for message in messages]
    return short_hash(json.dumps([settings, conversation], sort_keys=True, separators=(",", ":")))


def _normalized(value: object) -> object:
    """Cache markers dropped (they move to the newest message) and string content as one text block
    (the marker needs a block; the next request sends the same message as a string)."""
    if isinstance(value, dict):
        out: JsonObject = {}
        for key, item in value.items():
            if key == "cache_control":
                continue
            out[key] = (
                [{"type": "text", "text": item}]
                if key == "content" and isinstance(item, str)
                else _normalized(item)
            )
        return out
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def _error_code(body: str) -> str | None:
    """The ``error_code`` Anthropic puts in ``error.details`` of a thread refusal."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


register_cleanup(forget)

"""The ChatGPT Codex backend's Responses protocol for the fake server (``…/codex/responses``).

The stream is OpenAI's Responses stream. Before a turn is used, the request must carry what the
backend insists on: a bearer token with a ``chatgpt-account-id`` header (else 401) and
``store: false`` (else 400). The response reports the ``default`` service tier whatever tier was
asked for, as the backend does. Errors take the backend's shape; a 429 is the plan's usage limit,
with ``plan_type`` and ``resets_at`` (in an hour).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import msgspec

from tau.testing.fake_llm import openai_responses
from tau.testing.fake_llm.openai_responses import MALFORMED_FRAME
from tau.testing.fake_llm.openai_responses import error_body as openai_error_body
from tau.testing.fake_llm.script import RecordedRequest, Turn

__all__ = ["MALFORMED_FRAME", "error_body", "reject", "render"]


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    """OpenAI's Responses frames, reporting the ``default`` tier."""
    body = (
        {k: v for k, v in request.body.items() if k != "service_tier"}
        if isinstance(request.body, dict)
        else {}
    )
    return openai_responses.render(turn, msgspec.structs.replace(request, body=body))


def error_body(status: int, message: str) -> dict[str, Any]:
    """An error body as the Codex backend sends it."""
    if status == 429:
        return {
            "error": {
                "type": "usage_limit_reached",
                "message": "The usage limit has been reached",
                "plan_type": "plus",
                "resets_at": int(time.time()) + 3600,
            }
        }
    return openai_error_body(status, message)


def reject(request: RecordedRequest) -> tuple[int, dict[str, Any]] | None:
    """The backend's answer to a request it refuses outright, before any turn is used."""
    headers = request.headers
    if not headers.get("authorization", "").startswith("Bearer ") or not headers.get("chatgpt-account-id"):
        return 401, {"detail": "Unauthorized"}
    body = request.body if isinstance(request.body, dict) else {}
    if body.get("store") is not False:
        return 400, {"detail": "Store must be set to false"}
    return None

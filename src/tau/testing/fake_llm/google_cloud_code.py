"""Cloud Code Assist's ``/v1internal:streamGenerateContent`` (Gemini CLI, Antigravity) for the fake.

The request is an envelope, ``{"project", "model", "request": <generateContent body>, ...}``; each
SSE frame wraps one Gemini response as ``{"response": {...}, "traceId": ...}``. A request without a
bearer token, or whose envelope lacks ``project`` or ``request``, is refused as Google would. The
token itself is not checked against ``fake_llm.google_auth``: it comes from an OAuth login that the
test made elsewhere, and tests read it from the recorded headers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm import google
from tau.testing.fake_llm.google_auth import Rejection
from tau.testing.fake_llm.script import RecordedRequest, Turn
from tau.testing.fake_llm.server import sse_frame

MALFORMED_FRAME = google.MALFORMED_FRAME


def error_body(status: int, message: str) -> dict[str, Any]:
    return google.error_body(status, message)


def reject(request: RecordedRequest) -> Rejection | None:
    if not request.headers.get("authorization", "").startswith("Bearer "):
        return 401, error_body(401, "Request is missing required authentication credential.")
    body = request.body
    if not isinstance(body, dict) or not body.get("project") or not isinstance(body.get("request"), dict):
        return 400, error_body(400, "Invalid request: the envelope needs project and request.")
    return None


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    model = request.body.get("model") if isinstance(request.body, dict) else None
    trace_id = uuid.uuid4().hex[:16]
    for response in google.responses(turn, str(model or "gemini")):
        yield sse_frame({"response": response, "traceId": trace_id})

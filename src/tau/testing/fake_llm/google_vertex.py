"""Vertex AI's ``…/publishers/google/models/{id}:streamGenerateContent`` for the fake LLM server.

The frames are Gemini's (``fake_llm.google``). Unlike the Gemini API route, this one checks the
credentials first, as Vertex does: an ``x-goog-api-key`` the test allowed, or a bearer token that
the fake's own token endpoint issued (or the test allowed) and that has not expired
(``fake_llm.google_auth``). Anything else is answered with Google's 401 (or 400 for a bad key).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm import google
from tau.testing.fake_llm.google_auth import FakeGoogleAuth, Rejection
from tau.testing.fake_llm.script import RecordedRequest, Turn

MALFORMED_FRAME = google.MALFORMED_FRAME


def error_body(status: int, message: str) -> dict[str, Any]:
    return google.error_body(status, message)


def check_credentials(request: RecordedRequest, auth: FakeGoogleAuth) -> Rejection | None:
    return auth.check(request.headers)


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    return google.render(turn, request)

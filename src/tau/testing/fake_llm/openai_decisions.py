"""OpenAI's Decisions API (``…/decisions``) for the fake LLM server.

Each request is answered at once: every question of the request's ``questions`` list gets an answer
by its ``name`` (a choice picks the first choice at 0.9, the rest sharing 0.1, with confidence 0.9;
a score is 0.5 with confidence 0.8; a predicate is 0.75), and ``usage`` holds the turn's input and
output token counts. A turn's ``classifier_answers`` (wire form, by question name) replace them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, Turn


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}}


def _made_up(question: dict[str, Any]) -> dict[str, Any]:
    name = question.get("name")
    if question.get("type") == "choice":
        values = [c.get("value") for c in question.get("choices") or [] if isinstance(c, dict)]
        rest = 0.1 / (len(values) - 1) if len(values) > 1 else 0.0
        probabilities = [{"value": v, "probability": 0.9 if i == 0 else rest} for i, v in enumerate(values)]
        first = values[0] if values else ""
        return {
            "name": name,
            "type": "choice",
            "choice": first,
            "probabilities": probabilities,
            "confidence": 0.9,
        }
    if question.get("type") == "score":
        return {"name": name, "type": "score", "score": 0.5, "confidence": 0.8}
    return {"name": name, "type": "predicate", "probability": 0.75}


def answer(turn: Turn, request: RecordedRequest) -> dict[str, Any]:
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    questions = [q for q in body.get("questions") or [] if isinstance(q, dict)]
    answers = [_made_up(question) for question in questions]
    if turn.classifier_answers is not None:
        answers = [{"name": name, **value} for name, value in turn.classifier_answers.items()]
    return {
        "id": f"dec_{request.seed()[:16]}",
        "object": "decision",
        "model": body.get("model"),
        "answers": answers,
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output},
    }


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    raise AssertionError("Decisions answers are whole JSON bodies (answer), never streamed")

"""TypeSafe's System One classifier API (``…/systemone``) and Cloudflare Workers AI's ``…/run``
for the fake LLM server.

Each request is answered at once (one JSON body): every question of the request gets an answer in
System One's wire form (``choice``, ``score``, or ``noul`` for a bool question), and ``usage`` holds
the turn's input and output token counts. A turn's ``classifier_answers`` (wire form, by question id)
replace the made-up ones, so a test can script exact or malformed answers. The made-up answers are
fixed: a choice picks the first criterion at 0.9 (the rest share 0.1) with confidence 0.9, a score
is 0.5 with confidence 0.8, and a bool is 0.75. Cloudflare's answer is wrapped in its envelope:
``{success, result}`` for ``@cf/`` models, with a ``{state: "Completed", result}`` run record for
the others, as the service does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest, Turn

MALFORMED_FRAME = b"{not json"


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "status": status}}


def _made_up(question: Any) -> dict[str, Any]:
    kind = question.get("type") if isinstance(question, dict) else None
    criteria = question.get("criteria") if isinstance(question, dict) else None
    if kind == "choice" and isinstance(criteria, dict) and criteria:
        names = list(criteria)
        rest = 0.1 / (len(names) - 1) if len(names) > 1 else 0.0
        probabilities = {name: 0.9 if index == 0 else rest for index, name in enumerate(names)}
        return {"type": "choice", "choice": names[0], "probabilities": probabilities, "confidence": 0.9}
    if kind == "score":
        return {"type": "score", "score": 0.5, "confidence": 0.8}
    return {"type": "noul", "noul": 0.75}


def answer(turn: Turn, request: RecordedRequest) -> dict[str, Any]:
    body: dict[str, Any] = request.body if isinstance(request.body, dict) else {}
    cloudflare = request.path.endswith("/run")
    inner = body.get("input") if cloudflare else body
    questions = inner.get("questions") if isinstance(inner, dict) else None
    answers = {key: _made_up(question) for key, question in (questions or {}).items()}
    if turn.classifier_answers is not None:
        answers = dict(turn.classifier_answers)
    output: dict[str, Any] = {
        "answers": answers,
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output},
    }
    if not cloudflare:
        return output
    model = str(body.get("model", ""))
    if model.startswith("@cf/"):
        return {"success": True, "errors": [], "result": {"model": model, **output}}
    return {"success": True, "errors": [], "result": {"state": "Completed", "result": output}}


def render(turn: Turn, request: RecordedRequest) -> Iterator[bytes]:
    raise AssertionError("System One answers are whole JSON bodies (answer), never streamed")

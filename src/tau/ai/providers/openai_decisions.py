"""pi 1.6's ``openai-decisions`` classifier API: OpenAI's Decisions API (GPT-6 Luna).

``POST {baseUrl}/decisions`` with ``{model, input, questions}`` and bearer auth (an OpenAI API key).
The state goes as compact JSON text (written as JavaScript writes it); with images, ``input`` is one user message holding the state as
``input_text`` and the images as ``input_image`` data URLs (at most 128). Questions are a list:
``choice`` keeps its type with ``choices: [{value, description}]``, ``score`` has ``levels: [{label}]``,
and ``bool`` becomes a ``predicate`` whose instructions end with the meanings of true and false. The
answer is ``{answers: [{name, type, ...}], usage: {input_tokens, output_tokens}}``; a ``refusal``
answer fails the call. A 504 (the gateway's time limit for very large inputs) is not retried.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tau.ai.classifier_models import ClassifierModel
from tau.ai.classify import (
    BoolAnswer,
    ChoiceAnswer,
    ClassifierAnswer,
    ClassifierContext,
    ClassifierResult,
    ScoreAnswer,
    record_classifier_failure,
)
from tau.ai.js_json import js_json
from tau.ai.options import StreamOptions
from tau.ai.providers.system_one import classifier_usage, number, post_for_json, request_model
from tau.ai.stream_writer import ProviderError
from tau.ai.transport.http import HttpStatusError, apply_payload_hook, bearer, merge_headers
from tau.ai.types import JsonObject

__all__ = ["build_request", "classify", "parse_answers"]

LABEL = "OpenAI Decisions"
MAX_IMAGES = 128


def _predicate_instructions(question: JsonObject) -> str:
    criteria = question.get("criteria") or {}
    meanings = [
        f"True means: {criteria['true']}" if criteria.get("true") else "",
        f"False means: {criteria['false']}" if criteria.get("false") else "",
    ]
    shown = [line for line in meanings if line]
    instructions = str(question.get("instructions", ""))
    return f"{instructions}\n\n" + "\n".join(shown) if shown else instructions


def _wire_question(name: str, question: JsonObject) -> JsonObject:
    if question.get("type") == "choice":
        return {
            "type": "choice",
            "name": name,
            "instructions": question["instructions"],
            "choices": [
                {"value": value, "description": description} if description else {"value": value}
                for value, description in question["criteria"].items()
            ],
        }
    if question.get("type") == "score":
        return {
            "type": "score",
            "name": name,
            "instructions": question["instructions"],
            "levels": [{"label": label} for label in question["criteria"]],
        }
    return {"type": "predicate", "name": name, "instructions": _predicate_instructions(question)}


def build_request(model: ClassifierModel, context: ClassifierContext) -> tuple[str, JsonObject]:
    """The URL and the JSON body."""
    state = js_json(context.state)  # as pi writes it: 1 for 1.0, 1e-7 for 1e-07
    wire_input: Any = state
    if context.images:
        if len(context.images) > MAX_IMAGES:
            raise ProviderError(f"{LABEL} accepts at most {MAX_IMAGES} images, got {len(context.images)}")
        wire_input = [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": state},
                    *[
                        {"type": "input_image", "image_url": f"data:{image.mime_type};base64,{image.data}"}
                        for image in context.images
                    ],
                ],
            }
        ]
    body: JsonObject = {
        "model": model.id,
        "input": wire_input,
        "questions": [_wire_question(name, question) for name, question in context.questions.items()],
    }
    return model.base_url.rstrip("/") + "/decisions", body


def _answer(key: str, question: JsonObject, answer: JsonObject) -> ClassifierAnswer:
    if answer.get("type") == "refusal":
        raise ProviderError(f"{LABEL} refused to answer {key}")
    kind = question.get("type")
    if kind == "choice":
        if answer.get("type") != "choice" or not isinstance(answer.get("choice"), str):
            raise ProviderError(f"{LABEL} did not return a choice answer for {key}")
        entries = answer.get("probabilities")
        if not isinstance(entries, list):
            raise ProviderError(f"{LABEL} returned invalid probabilities for {key}")
        probabilities: dict[str, float] = {}
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("value"), str):
                raise ProviderError(f"{LABEL} returned invalid probabilities for {key}")
            value = entry["value"]
            probabilities[value] = number(LABEL, entry.get("probability"), f"probability for {key}.{value}")
        return ChoiceAnswer(
            choice=answer["choice"],
            probabilities=probabilities,
            confidence=number(LABEL, answer.get("confidence"), f"confidence for {key}"),
        )
    if kind == "score":
        if answer.get("type") != "score":
            raise ProviderError(f"{LABEL} did not return a score answer for {key}")
        return ScoreAnswer(
            score=number(LABEL, answer.get("score"), f"score for {key}"),
            confidence=number(LABEL, answer.get("confidence"), f"confidence for {key}"),
        )
    if answer.get("type") != "predicate":
        raise ProviderError(f"{LABEL} did not return a predicate answer for {key}")
    return BoolAnswer(probability=number(LABEL, answer.get("probability"), f"probability for {key}"))


def parse_answers(value: Any, context: ClassifierContext) -> dict[str, ClassifierAnswer]:
    """One answer per question of ``context``, matched by ``name``."""
    if not isinstance(value, list):
        raise ProviderError(f"{LABEL} returned an unexpected response")
    by_name = {
        item["name"]: item for item in value if isinstance(item, dict) and isinstance(item.get("name"), str)
    }
    answers: dict[str, ClassifierAnswer] = {}
    for key, question in context.questions.items():
        answer = by_name.get(key)
        if answer is None:
            raise ProviderError(f"{LABEL} did not return an answer for {key}")
        answers[key] = _answer(key, question, answer)
    return answers


async def classify(
    model: ClassifierModel, context: ClassifierContext, options: StreamOptions
) -> ClassifierResult:
    result = ClassifierResult(
        api=model.api, provider=model.provider, model=model.id, timestamp=int(time.time() * 1000)
    )
    signal = options.signal
    try:
        if signal is not None and signal.aborted:
            raise ProviderError("Request was aborted")
        if not options.api_key:
            raise ProviderError(f"No API key for provider: {model.provider}")
        url, body = build_request(model, context)
        target = request_model(model)
        body = await apply_payload_hook(body, target, options)
        headers = merge_headers(bearer(options.api_key), model.headers, options.headers)

        answer = await post_for_json(
            target,
            url,
            headers=headers,
            body=body,
            options=options,
            label=LABEL,
            should_retry=lambda status, _: status != 504,
        )
        if not isinstance(answer, dict):
            raise ProviderError(f"{LABEL} returned an unexpected response")
        # Set before the answers are read: a request with malformed or refused answers was billed.
        result.usage = classifier_usage(answer.get("usage"), model)
        result.answers = parse_answers(answer.get("answers"), context)
    except (HttpStatusError, ProviderError, OSError, asyncio.CancelledError) as exc:
        timed_out = isinstance(exc, HttpStatusError) and exc.status == 504
        record_classifier_failure(
            result,
            exc,
            signal,
            LABEL,
            http_message=(
                f"{LABEL} error (504): the request timed out at the gateway. Very large inputs (above "
                "roughly 600K tokens) currently exceed its time limit."
            )
            if timed_out
            else None,
        )
    return result

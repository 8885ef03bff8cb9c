"""pi 1.6's System One classifier APIs: ``typesafe-system-one`` and ``cloudflare-workers-ai-system-one``.

TypeSafe's protocol (served by TypeSafe, OpenRouter, Vercel AI Gateway, OpenCode and GitHub Copilot):
``POST {baseUrl}/systemone`` with ``{model, state, questions}`` and bearer auth; the answer is
``{answers: {<id>: ...}, usage: {input_tokens, output_tokens}}``. Public ``bool`` questions and
answers are ``noul`` on the wire. Cloudflare Workers AI takes the same request as ``{model, input}``
at ``POST {baseUrl}/run`` and wraps the answer in its API envelope (``{success, result}``, for
third-party models with a run record ``{state: "Completed", result}`` inside).

Images go in the service's form, from the model's ``compat.imageInput`` or, when unset, detected
from the provider and base URL: ``assets`` (named ``<image-N>`` and referenced before the state;
TypeSafe wants its opt-in header ``TypeSafe-Danger-Zone-Images``), ``images`` (Clef: data URLs, at
most four), or ``state-image-urls`` (OpenRouter: ``image_url`` parts before the state).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from tau.ai.abort import Aborted, until_aborted
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
from tau.ai.cost import calculate_cost
from tau.ai.js_json import js_values
from tau.ai.options import StreamOptions
from tau.ai.stream_writer import ProviderError
from tau.ai.transport.http import HttpStatusError, apply_payload_hook, bearer, merge_headers, open_stream
from tau.ai.types import ImageContent, JsonObject, Model, Usage

__all__ = ["build_request", "classifier_usage", "classify", "number", "parse_answers", "request_model"]

IMAGE_OPT_IN_HEADERS = {"TypeSafe-Danger-Zone-Images": "true"}
ASSET_FORMATS = {"image/png": "png", "image/jpeg": "jpeg"}
DATA_URL_TYPES = frozenset({"image/png", "image/jpeg", "image/webp"})
MAX_DATA_URL_IMAGES = 4
CLOUDFLARE = "cloudflare-workers-ai-system-one"


def _label(model: ClassifierModel) -> str:
    return "Cloudflare Workers AI" if model.api == CLOUDFLARE else "System One API"


def _detected_compat(model: ClassifierModel) -> tuple[str, bool]:
    """(image input form, send TypeSafe's opt-in header) when the model's ``compat`` sets neither."""
    if model.api == CLOUDFLARE:
        return ("images" if model.id.startswith("@cf/cloudflare/clef") else "assets"), False
    if model.provider == "openrouter" or "openrouter.ai" in model.base_url:
        return "state-image-urls", False
    return "assets", True


def _wire_questions(context: ClassifierContext) -> JsonObject:
    return {
        key: {**question, "type": "noul"} if question.get("type") == "bool" else dict(question)
        for key, question in context.questions.items()
    }


def _add_images(
    label: str, model: ClassifierModel, form: str, images: list[ImageContent], request: JsonObject
) -> None:
    if form == "images":
        if len(images) > MAX_DATA_URL_IMAGES:
            raise ProviderError(
                f"{label} accepts at most {MAX_DATA_URL_IMAGES} images for {model.id}, got {len(images)}"
            )
        for image in images:
            if image.mime_type not in DATA_URL_TYPES:
                raise ProviderError(
                    f"{label} accepts PNG, JPEG, and WebP images for {model.id}, got {image.mime_type}"
                )
        request["images"] = [f"data:{image.mime_type};base64,{image.data}" for image in images]
        return
    if form == "state-image-urls":
        parts: list[Any] = [
            {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}
            for image in images
        ]
        request["state"] = [*parts, request["state"]]
        return
    assets: JsonObject = {}
    for index, image in enumerate(images):
        fmt = ASSET_FORMATS.get(image.mime_type)
        if fmt is None:
            raise ProviderError(f"{label} accepts PNG and JPEG images for {model.id}, got {image.mime_type}")
        assets[f"<image-{index + 1}>"] = {"type": "image", "format": fmt, "data_base64": image.data}
    request["assets"] = assets
    request["state"] = [*assets, request["state"]]


def build_request(model: ClassifierModel, context: ClassifierContext) -> tuple[str, JsonObject, bool]:
    """The URL, the JSON body, and whether TypeSafe's image opt-in header goes with it."""
    label = _label(model)
    # The state's whole numbers go as pi (JavaScript) writes them: 1, not 1.0.
    request: JsonObject = {"state": js_values(context.state), "questions": _wire_questions(context)}
    opt_in = False
    if context.images:
        if "image" not in model.input:
            raise ProviderError(f"{label} does not support image input for {model.id}")
        form, detected_opt_in = _detected_compat(model)
        compat = model.compat or {}
        form = str(compat.get("imageInput") or form)
        opt_in = bool(compat.get("sendImageOptInHeader", detected_opt_in))
        _add_images(label, model, form, context.images, request)
    base = model.base_url.rstrip("/")
    if model.api == CLOUDFLARE:
        return f"{base}/run", {"model": model.id, "input": request}, opt_in
    return f"{base}/systemone", {"model": model.id, **request}, opt_in


def _unwrap(model: ClassifierModel, body: Any) -> JsonObject:
    label = _label(model)
    if not isinstance(body, dict):
        raise ProviderError(f"{label} returned an unexpected response")
    if model.api != CLOUDFLARE:
        return body
    if body.get("success") is False:
        errors = body.get("errors")
        messages = (
            [e["message"] for e in errors or [] if isinstance(e, dict) and isinstance(e.get("message"), str)]
            if isinstance(errors, list)
            else []
        )
        raise ProviderError(
            f"{label} error: {'; '.join(messages)}" if messages else f"{label} request failed"
        )
    result = body.get("result")
    if not isinstance(result, dict):
        raise ProviderError(f"{label} returned an unexpected response")
    if "answers" in result:
        return result
    if result.get("state") != "Completed":
        state = result.get("state")
        shown = "undefined" if state is None else state if isinstance(state, str) else json.dumps(state)
        raise ProviderError(f"{label} run did not complete (state: {shown})")
    inner = result.get("result")
    if not isinstance(inner, dict):
        raise ProviderError(f"{label} returned an unexpected response")
    return inner


def number(label: str, value: Any, what: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value != value
        or value
        in (
            float("inf"),
            float("-inf"),
        )
    ):
        raise ProviderError(f"{label} returned an invalid {what}")
    return value


def parse_answers(label: str, value: Any, context: ClassifierContext) -> dict[str, ClassifierAnswer]:
    """One answer per question of ``context``, checked against the question's type."""
    if not isinstance(value, dict):
        raise ProviderError(f"{label} returned an unexpected response")
    answers: dict[str, ClassifierAnswer] = {}
    for key, question in context.questions.items():
        answer = value.get(key)
        if not isinstance(answer, dict):
            raise ProviderError(f"{label} did not return an answer for {key}")
        kind = question.get("type")
        if kind == "choice":
            if answer.get("type") != "choice" or not isinstance(answer.get("choice"), str):
                raise ProviderError(f"{label} did not return a choice answer for {key}")
            probabilities = answer.get("probabilities")
            if not isinstance(probabilities, dict):
                raise ProviderError(f"{label} returned invalid probabilities for {key}")
            answers[key] = ChoiceAnswer(
                choice=answer["choice"],
                probabilities={
                    name: number(label, p, f"probability for {key}.{name}")
                    for name, p in probabilities.items()
                },
                confidence=number(label, answer.get("confidence"), f"confidence for {key}"),
            )
        elif kind == "score":
            if answer.get("type") != "score":
                raise ProviderError(f"{label} did not return a score answer for {key}")
            answers[key] = ScoreAnswer(
                score=number(label, answer.get("score"), f"score for {key}"),
                confidence=number(label, answer.get("confidence"), f"confidence for {key}"),
            )
        else:
            if answer.get("type") != "noul":
                raise ProviderError(f"{label} did not return a bool answer for {key}")
            answers[key] = BoolAnswer(probability=number(label, answer.get("noul"), f"probability for {key}"))
    return answers


def classifier_usage(value: Any, model: ClassifierModel) -> Usage | None:
    """``{input_tokens, output_tokens}`` priced from the catalogue; missing or malformed: none."""
    if not isinstance(value, dict) or ("input_tokens" not in value and "output_tokens" not in value):
        return None

    def count(raw: Any) -> int:
        ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw == raw and raw > 0
        return int(raw) if ok and raw != float("inf") else 0

    usage = Usage(input=count(value.get("input_tokens")), output=count(value.get("output_tokens")))
    usage.total_tokens = usage.input + usage.output
    calculate_cost(request_model(model), usage)
    return usage


def request_model(model: ClassifierModel) -> Model:
    """The model as the HTTP layer, the payload hooks and the pricing take it."""
    return Model(
        id=model.id,
        api=model.api,
        provider=model.provider,
        base_url=model.base_url,
        name=model.name,
        input=list(model.input),
        cost=model.cost,
        headers=model.headers,
    )


async def post_for_json(
    target: Model,
    url: str,
    *,
    headers: dict[str, str],
    body: JsonObject,
    options: StreamOptions,
    label: str,
    should_retry: Callable[[int, str], bool] | None = None,
) -> Any:
    """POST ``body`` and read the whole answer as JSON, given up on the caller's abort: the one
    request of every classifier API. A body that is not JSON, and an abort, fail as
    ``ProviderError``; an HTTP error status is ``HttpStatusError``."""

    async def exchange() -> Any:
        response = await open_stream(
            target, url, headers=headers, body=body, options=options, should_retry=should_retry
        )
        try:
            raw = await response.aread()
        finally:
            await response.aclose()
        try:
            return json.loads(raw)
        except ValueError:
            raise ProviderError(f"{label} returned an unexpected response") from None

    try:
        return await until_aborted(exchange(), options.signal)
    except Aborted:
        raise ProviderError("Request was aborted") from None


async def classify(
    model: ClassifierModel, context: ClassifierContext, options: StreamOptions
) -> ClassifierResult:
    result = ClassifierResult(
        api=model.api, provider=model.provider, model=model.id, timestamp=int(time.time() * 1000)
    )
    label = _label(model)
    signal = options.signal
    try:
        if signal is not None and signal.aborted:
            raise ProviderError("Request was aborted")
        if not options.api_key:
            raise ProviderError(f"No API key for provider: {model.provider}")
        url, body, opt_in = build_request(model, context)
        target = request_model(model)
        body = await apply_payload_hook(body, target, options)
        headers = merge_headers(
            bearer(options.api_key), model.headers, IMAGE_OPT_IN_HEADERS if opt_in else None, options.headers
        )

        answer = await post_for_json(target, url, headers=headers, body=body, options=options, label=label)
        output = _unwrap(model, answer)
        # Set before the answers are read: a request with malformed answers was still billed.
        result.usage = classifier_usage(output.get("usage"), model)
        result.answers = parse_answers(label, output.get("answers"), context)
    except (HttpStatusError, ProviderError, OSError, asyncio.CancelledError) as exc:
        record_classifier_failure(result, exc, signal, label)
    return result

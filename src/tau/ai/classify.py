"""Classification: ``classify(model, context, options)`` for the catalogue's classifier models.

A classifier model answers typed questions about JSON ``state`` (and images, for models whose
``input`` holds ``"image"``): a ``choice`` among named options, a ``bool`` probability, or a
``score`` against criteria, each with its probabilities or confidence. As pi-ai's ``classify``, it
never raises for a provider failure: the result says ``stop_reason="error"`` (or ``"aborted"``)
with an ``error_message`` and no answers. When the service reports token counts, ``usage`` carries
them priced from the catalogue. The wire protocol is chosen by ``model.api``; tau speaks pi 1.6's
System One APIs (``typesafe-system-one``, ``cloudflare-workers-ai-system-one``) in
``tau.ai.providers.system_one``, OpenAI's Decisions API (``openai-decisions``) in
``tau.ai.providers.openai_decisions``, and llama.cpp chat models as classifiers
(``llama-cpp-classify``, answers read from next-token probabilities) in
``tau.ai.providers.llama_cpp_classify``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal, TypeAlias

from msgspec import Struct, field

from tau.ai.base_url_env import fill_base_url, missing_variable_message, unfilled_variable
from tau.ai.classifier_models import ClassifierModel
from tau.ai.options import StreamOptions
from tau.ai.types import ImageContent, JsonObject, Usage

if TYPE_CHECKING:
    from tau.ai.abort import AbortSignal

__all__ = [
    "CLASSIFIER_APIS",
    "BoolAnswer",
    "ChoiceAnswer",
    "ClassifierAnswer",
    "ClassifierContext",
    "ClassifierResult",
    "ClassifyFunction",
    "ScoreAnswer",
    "classifier_context_from_json",
    "classifier_error_result",
    "classify",
    "record_classifier_failure",
]

CLASSIFIER_APIS: dict[str, str] = {
    "typesafe-system-one": "tau.ai.providers.system_one",
    "cloudflare-workers-ai-system-one": "tau.ai.providers.system_one",
    "openai-decisions": "tau.ai.providers.openai_decisions",
    "llama-cpp-classify": "tau.ai.providers.llama_cpp_classify",
}
"""Classifier api -> the module whose ``async classify(model, context, options)`` speaks it."""

DEFAULT_CLASSIFY_RETRIES = 2
"""Retries of a failed request when the caller sets none (pi's classifier default)."""

ClassifierStopReason = Literal["stop", "error", "aborted"]
QUESTION_TYPES = ("choice", "score", "bool")


class ClassifierContext(Struct):
    """The state to judge, the questions by id (pi's ``{type, instructions, criteria}`` objects,
    kept as they are), and images judged with the state."""

    state: JsonObject
    questions: dict[str, JsonObject]
    images: list[ImageContent] = field(default_factory=list)


class ChoiceAnswer(Struct):
    choice: str
    probabilities: dict[str, float]
    confidence: float

    def to_json(self) -> JsonObject:
        return {
            "type": "choice",
            "choice": self.choice,
            "probabilities": dict(self.probabilities),
            "confidence": self.confidence,
        }


class ScoreAnswer(Struct):
    score: float
    confidence: float

    def to_json(self) -> JsonObject:
        return {"type": "score", "score": self.score, "confidence": self.confidence}


class BoolAnswer(Struct):
    probability: float

    def to_json(self) -> JsonObject:
        return {"type": "bool", "probability": self.probability}


ClassifierAnswer = ChoiceAnswer | ScoreAnswer | BoolAnswer


class ClassifierResult(Struct):
    """What a classification returned: one answer per question id."""

    api: str
    provider: str
    model: str
    answers: dict[str, ClassifierAnswer] = field(default_factory=dict)
    stop_reason: ClassifierStopReason = "stop"
    error_message: str | None = None
    usage: Usage | None = None
    timestamp: int = 0

    def to_json(self) -> JsonObject:
        """pi's ``ClassifierResult`` (camelCase keys)."""
        out: JsonObject = {
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "answers": {key: answer.to_json() for key, answer in self.answers.items()},
            "stopReason": self.stop_reason,
            "timestamp": self.timestamp,
        }
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        return out


def classifier_context_from_json(data: JsonObject) -> ClassifierContext:
    """pi's ``{state, questions, images?}``; a malformed one is refused with a ``ValueError``
    naming the first fault."""
    state = data.get("state")
    if not isinstance(state, dict):
        raise ValueError("context.state must be a JSON object")
    questions = data.get("questions")
    if not isinstance(questions, dict) or not questions:
        raise ValueError("context.questions must be a non-empty object of questions by id")
    checked: dict[str, JsonObject] = {}
    for key, question in questions.items():
        if not isinstance(question, dict) or question.get("type") not in QUESTION_TYPES:
            raise ValueError(
                f'context.questions.{key} must be a question of type "choice", "score" or "bool"'
            )
        if not isinstance(question.get("instructions"), str):
            raise ValueError(f"context.questions.{key}.instructions must be a string")
        criteria = question.get("criteria")
        if question["type"] == "score":
            if not isinstance(criteria, list) or not all(isinstance(item, str) for item in criteria):
                raise ValueError(f"context.questions.{key}.criteria must be an array of strings")
        elif not isinstance(criteria, dict) or not all(isinstance(item, str) for item in criteria.values()):
            raise ValueError(f"context.questions.{key}.criteria must be an object of strings")
        elif question["type"] == "bool" and set(criteria) != {"true", "false"}:
            raise ValueError(f'context.questions.{key}.criteria must have "true" and "false"')
        checked[str(key)] = question
    images: list[ImageContent] = []
    raw_images = data.get("images")
    if raw_images is not None:
        if not isinstance(raw_images, list):
            raise ValueError("context.images must be an array of image blocks")
        for index, block in enumerate(raw_images):
            if (
                not isinstance(block, dict)
                or block.get("type") != "image"
                or not isinstance(block.get("data"), str)
                or not isinstance(block.get("mimeType"), str)
            ):
                raise ValueError(f"context.images[{index}] must be an image block")
            images.append(ImageContent(block["data"], block["mimeType"]))
    return ClassifierContext(state=state, questions=checked, images=images)


def classifier_error_result(
    model: ClassifierModel, message: str, *, aborted: bool = False
) -> ClassifierResult:
    """The result of a classification that failed before (or while) reaching the provider."""
    return ClassifierResult(
        api=model.api,
        provider=model.provider,
        model=model.id,
        stop_reason="aborted" if aborted else "error",
        error_message=message,
        timestamp=int(time.time() * 1000),
    )


ClassifyFunction: TypeAlias = Callable[
    [ClassifierModel, "ClassifierContext", StreamOptions], "Awaitable[ClassifierResult] | ClassifierResult"
]
"""A classifier api's implementation from outside tau (an extension's ``register_provider(...,
classifiers={api: function})``, pi's ``classifiers``): ``function(model, context, options)``,
async or not, returning a ``ClassifierResult``."""


def record_classifier_failure(
    result: ClassifierResult,
    exc: BaseException,
    signal: AbortSignal | None,
    label: str,
    *,
    http_message: str | None = None,
) -> None:
    """Make a classifier API's failure ``result``'s outcome, as pi-ai's classifiers report it: an
    HTTP error as ``<label> error (<status>): <body>`` (or ``http_message``), any other failure
    by its text, ``aborted`` when the caller's signal was; the answers are dropped. A
    cancellation the signal did not ask for is raised again."""
    from tau.ai.transport.http import HttpStatusError

    aborted = signal is not None and signal.aborted
    result.answers = {}
    if isinstance(exc, asyncio.CancelledError):
        if not aborted:
            raise exc
        result.stop_reason = "aborted"
        result.error_message = "Request was aborted"
        return
    result.stop_reason = "aborted" if aborted else "error"
    if isinstance(exc, HttpStatusError):
        result.error_message = http_message or f"{label} error ({exc.status}): {exc.body or exc}"
    else:
        result.error_message = str(exc) or type(exc).__name__


async def classify(
    model: ClassifierModel,
    context: ClassifierContext,
    options: StreamOptions | None = None,
    *,
    implementation: ClassifyFunction | None = None,
) -> ClassifierResult:
    """Classify with ``model``; ``options.api_key`` is the credential (resolve it with the model
    registry's ``classify``, which also applies models.json's base URL and headers).
    ``implementation`` speaks ``model.api`` instead of tau's own module for it (an extension's).
    Failures come back as an error result, never raised."""
    options = options if options is not None else StreamOptions(max_retries=DEFAULT_CLASSIFY_RETRIES)
    aborted = options.signal is not None and options.signal.aborted
    if implementation is None:
        module_path = CLASSIFIER_APIS.get(model.api)
        if module_path is None:
            return classifier_error_result(model, f"Unsupported classifier API: {model.api}", aborted=aborted)
        try:
            module = importlib.import_module(module_path)
        except ImportError as exc:
            return classifier_error_result(
                model, f"Could not load the classifier for api {model.api!r}: {exc}"
            )
        implementation = module.classify
    model = fill_base_url(model, options.extra.get("env"))
    unfilled = unfilled_variable(model)
    if unfilled is not None:
        return classifier_error_result(model, missing_variable_message(model.provider, unfilled))
    try:
        result = implementation(model, context, options)
        if inspect.isawaitable(result):
            result = await result
    except Exception as error:  # an extension's classifier failing is its result, as in pi
        aborted = options.signal is not None and options.signal.aborted
        return classifier_error_result(model, str(error) or type(error).__name__, aborted=aborted)
    if not isinstance(result, ClassifierResult):
        return classifier_error_result(
            model,
            f"The classifier for api {model.api!r} returned {type(result).__name__}, not a ClassifierResult",
        )
    return result

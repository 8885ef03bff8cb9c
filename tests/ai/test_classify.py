"""Classification (issue #32): tau's System One request and its reading of the answer, against the
fake server (TypeSafe's ``/systemone`` and Cloudflare's ``/ai/run``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.ai import StreamOptions
from tau.ai.classifier_models import ClassifierModel, find_classifier_model
from tau.ai.classify import (
    BoolAnswer,
    ChoiceAnswer,
    ClassifierContext,
    ClassifierResult,
    ScoreAnswer,
    classifier_context_from_json,
    classify,
)
from tau.ai.types import ImageContent
from tau.testing.fake_llm import PIXEL_PNG, FakeLLMServer, Fault, ScriptedUsage, Turn

QUESTIONS: dict[str, Any] = {
    "mood": {"type": "choice", "instructions": "The mood?", "criteria": {"calm": "quiet", "angry": "loud"}},
    "urgent": {"type": "bool", "instructions": "Urgent?", "criteria": {"true": "now", "false": "later"}},
    "quality": {"type": "score", "instructions": "How good?", "criteria": ["clear", "kind"]},
}
CONTEXT = classifier_context_from_json({"state": {"message": "please fix it"}, "questions": QUESTIONS})


def model_at(server: FakeLLMServer, provider: str, model_id: str, path: str) -> ClassifierModel:
    model = find_classifier_model(provider, model_id)
    assert model is not None
    model.base_url = server.url(path)
    return model


def run(model: ClassifierModel, context: ClassifierContext, key: str | None = "sk-test") -> ClassifierResult:
    return asyncio.run(classify(model, context, StreamOptions(api_key=key)))


def test_typesafe_request_and_answers() -> None:
    with FakeLLMServer() as server:
        server.add(Turn(usage=ScriptedUsage(input=1_000_000, output=3)))
        model = model_at(server, "openrouter", "~typesafe/jev-latest", "/api/v1")
        result = run(model, CONTEXT)
        request = server.requests[0]
    assert result.stop_reason == "stop" and result.error_message is None
    assert request.path == "/api/v1/systemone"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body == {
        "model": "~typesafe/jev-latest",
        "state": {"message": "please fix it"},
        "questions": {**QUESTIONS, "urgent": {**QUESTIONS["urgent"], "type": "noul"}},
    }
    assert result.answers == {
        "mood": ChoiceAnswer("calm", {"calm": 0.9, "angry": 0.1}, 0.9),
        "urgent": BoolAnswer(0.75),
        "quality": ScoreAnswer(0.5, 0.8),
    }
    assert result.usage is not None and (result.usage.input, result.usage.output) == (1_000_000, 3)
    assert result.usage.cost.input == pytest.approx(0.042) and result.usage.cost.total == pytest.approx(0.042)
    as_json = result.to_json()
    assert as_json["answers"]["urgent"] == {"type": "bool", "probability": 0.75}
    assert as_json["stopReason"] == "stop" and as_json["usage"]["totalTokens"] == 1_000_003


def test_images_go_in_each_services_form() -> None:
    with_image = ClassifierContext(CONTEXT.state, CONTEXT.questions, [ImageContent(PIXEL_PNG, "image/png")])
    with FakeLLMServer() as server:
        for _ in range(3):
            server.add(Turn())
        openrouter = run(model_at(server, "openrouter", "~typesafe/jev-latest", "/api/v1"), with_image)
        typesafe = run(model_at(server, "typesafe", "jev-latest", "/v1"), with_image)
        clef = run(
            model_at(server, "cloudflare-workers-ai", "@cf/cloudflare/clef", "/accounts/a/ai"), with_image
        )
        requests = server.requests
    assert [r.stop_reason for r in (openrouter, typesafe, clef)] == ["stop"] * 3
    url = f"data:image/png;base64,{PIXEL_PNG}"
    assert requests[0].body["state"] == [{"type": "image_url", "image_url": {"url": url}}, CONTEXT.state]
    assert "typesafe-danger-zone-images" not in requests[0].headers
    assert requests[1].body["assets"] == {
        "<image-1>": {"type": "image", "format": "png", "data_base64": PIXEL_PNG}
    }
    assert requests[1].body["state"] == ["<image-1>", CONTEXT.state]
    assert requests[1].headers["typesafe-danger-zone-images"] == "true"
    assert requests[2].path == "/accounts/a/ai/run"
    assert requests[2].body["model"] == "@cf/cloudflare/clef"
    assert requests[2].body["input"]["images"] == [url]
    assert clef.answers["urgent"] == BoolAnswer(0.75)


def test_cloudflare_run_record_is_unwrapped() -> None:
    with FakeLLMServer() as server:
        server.add(Turn())
        result = run(model_at(server, "cloudflare-workers-ai", "typesafe/jev", "/accounts/a/ai"), CONTEXT)
    assert result.stop_reason == "stop" and result.answers["quality"] == ScoreAnswer(0.5, 0.8)


def test_failures_are_error_results() -> None:
    text_only = find_classifier_model("opencode", "jev-1.13")
    assert text_only is not None
    with_image = ClassifierContext(CONTEXT.state, CONTEXT.questions, [ImageContent(PIXEL_PNG, "image/png")])
    with FakeLLMServer() as server:
        server.add(Turn(fault=Fault("status", status=400, body={"error": "bad questions"})))
        server.add(Turn(classifier_answers={"mood": {"type": "score", "score": 1, "confidence": 1}}))
        refused = run(model_at(server, "typesafe", "jev-latest", "/v1"), CONTEXT)
        malformed = run(model_at(server, "typesafe", "jev-latest", "/v1"), CONTEXT)
        text_only.base_url = server.url("/v1")
        no_images = run(text_only, with_image)
        no_key = run(model_at(server, "typesafe", "jev-latest", "/v1"), CONTEXT, key=None)
        sent = len(server.requests)
    assert refused.stop_reason == "error" and refused.answers == {}
    assert refused.error_message == 'System One API error (400): {"error": "bad questions"}'
    assert malformed.error_message == "System One API did not return a choice answer for mood"
    assert malformed.usage is not None  # billed although its answers were malformed
    assert no_images.error_message == "System One API does not support image input for jev-1.13"
    assert no_key.error_message == "No API key for provider: typesafe"
    assert sent == 2
    unknown = ClassifierModel(id="x", api="llama-cpp-classify", provider="p", base_url="http://127.0.0.1:9")
    assert run(unknown, CONTEXT).error_message == "Unsupported classifier API: llama-cpp-classify"


def test_context_shape_is_checked() -> None:
    with pytest.raises(ValueError, match=r"context\.state"):
        classifier_context_from_json({"state": [], "questions": QUESTIONS})
    with pytest.raises(ValueError, match=r"context\.questions\.q"):
        classifier_context_from_json({"state": {}, "questions": {"q": {"type": "maybe"}}})
    with pytest.raises(ValueError, match=r"context\.images\[0\]"):
        classifier_context_from_json({"state": {}, "questions": QUESTIONS, "images": [{"type": "text"}]})

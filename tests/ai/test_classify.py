"""Classification (issue #32): tau's System One request and its reading of the answer, against the
fake server (TypeSafe's ``/systemone`` and Cloudflare's ``/run``), and side by side with pi 1.6's own
pi-ai classifiers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pi16 import by_case, pi16_ai_package

from tau.ai import AbortController, StreamOptions
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
    unknown = ClassifierModel(id="x", api="media-classifier", provider="p", base_url="http://127.0.0.1:9")
    assert run(unknown, CONTEXT).error_message == "Unsupported classifier API: media-classifier"


def test_context_shape_is_checked() -> None:
    with pytest.raises(ValueError, match=r"context\.state"):
        classifier_context_from_json({"state": [], "questions": QUESTIONS})
    with pytest.raises(ValueError, match=r"context\.questions\.q"):
        classifier_context_from_json({"state": {}, "questions": {"q": {"type": "maybe"}}})
    with pytest.raises(ValueError, match=r"context\.images\[0\]"):
        classifier_context_from_json({"state": {}, "questions": QUESTIONS, "images": [{"type": "text"}]})


PNG_IMAGE = {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}


def custom_model(
    provider: str, model_id: str, api: str = "typesafe-system-one", **compat: Any
) -> dict[str, Any]:
    """A custom provider's classifier model (pi's JSON), images allowed, ``compat`` when given."""
    model: dict[str, Any] = {
        "type": "classifier",
        "id": model_id,
        "name": model_id,
        "api": api,
        "provider": provider,
        "baseUrl": "",
        "input": ["text", "image"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 64000,
    }
    return model | ({"compat": compat} if compat else {})


PARITY_CASES: list[dict[str, Any]] = [
    {"case": "openrouter", "provider": "openrouter", "id": "~typesafe/jev-latest"},
    {"case": "openrouter-image", "provider": "openrouter", "id": "~typesafe/jev-latest", "images": True},
    {"case": "typesafe-image", "provider": "typesafe", "id": "jev-latest", "images": True},
    {"case": "clef-image", "provider": "cloudflare-workers-ai", "id": "@cf/cloudflare/clef", "images": True},
    {"case": "cloudflare-run", "provider": "cloudflare-workers-ai", "id": "typesafe/jev"},
    {"case": "copilot", "provider": "github-copilot", "id": "microsoft-decision-1"},
    {"case": "luna", "provider": "openai", "id": "gpt-6-luna"},
    {"case": "luna-image", "provider": "openai", "id": "gpt-6-luna", "images": True},
    {
        "case": "luna-numbers",
        "provider": "openai",
        "id": "gpt-6-luna",
        "state": {"score": 1.0, "ratio": 0.25, "tiny": 1e-7, "big": 1e21, "huge": 1e16, "text": "é"},
    },
    {"case": "luna-refusal", "provider": "openai", "id": "gpt-6-luna"},
    {"case": "luna-timeout", "provider": "openai", "id": "gpt-6-luna"},
    {"case": "malformed", "provider": "typesafe", "id": "jev-latest"},
    {"case": "refused", "provider": "typesafe", "id": "jev-latest"},
    {"case": "text-only-image", "provider": "opencode", "id": "jev-1.13", "images": True},
    {"case": "no-key", "provider": "typesafe", "id": "jev-latest", "apiKey": ""},
    # Custom providers: the image form detected from the provider and model id, or set by compat.
    {"case": "proxy-detected", "model": custom_model("my-proxy", "jev"), "images": True},
    {
        "case": "proxy-images",
        "model": custom_model("my-proxy", "clef", imageInput="images", sendImageOptInHeader=False),
        "images": True,
    },
    {
        "case": "proxy-state-urls",
        "model": custom_model("my-proxy", "jev", imageInput="state-image-urls"),
        "images": True,
    },
    {"case": "proxy-openrouter", "model": custom_model("openrouter", "acme/judge"), "images": True},
    {
        "case": "cf-proxy-clef",
        "model": custom_model("my-cf", "@cf/cloudflare/clef-flash", "cloudflare-workers-ai-system-one"),
        "images": True,
    },
    {
        "case": "cf-proxy-jev",
        "model": custom_model("my-cf", "typesafe/jev", "cloudflare-workers-ai-system-one"),
        "images": True,
    },
]
PARITY_TURNS: dict[str, Turn] = {
    "malformed": Turn(classifier_answers={"mood": {"type": "choice", "choice": "calm", "probabilities": {}}}),
    "refused": Turn(fault=Fault("status", status=400, body={"error": "questions must not be empty"})),
    "luna-refusal": Turn(
        classifier_answers={"mood": {"type": "refusal"}}, usage=ScriptedUsage(input=300_000)
    ),
    "luna-timeout": Turn(fault=Fault("status", status=504, body="<html>gateway</html>")),
}


def parity_cases() -> list[dict[str, Any]]:
    cases = []
    for case in PARITY_CASES:
        state = case.get("state", {"message": "please fix it"})
        context: dict[str, Any] = {"state": state, "questions": QUESTIONS}
        if case.get("images"):
            context["images"] = [PNG_IMAGE]
        cases.append(
            {key: value for key, value in case.items() if key not in ("images", "state")}
            | {"context": context}
        )
    return cases


def run_pi_classify(server: FakeLLMServer) -> dict[str, Any]:
    node, pi_ai = pi16_ai_package()
    request = {"piAi": str(pi_ai), "baseUrl": server.url("/v1"), "apiKey": "sk-key", "cases": parity_cases()}
    ran = subprocess.run(
        [str(node), str(Path(__file__).parents[1] / "helpers" / "pi16_classify.mjs")],
        input=json.dumps(request),
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/nonexistent"),
            "PI_OFFLINE": "1",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    result: dict[str, Any] = json.loads(ran.stdout)
    return result


async def run_tau_classify(server: FakeLLMServer) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for case in parity_cases():
        model = (
            ClassifierModel.from_json(case["model"])
            if "model" in case
            else find_classifier_model(case["provider"], case["id"])
        )
        assert model is not None
        model.base_url = server.url("/v1")
        options = StreamOptions(
            api_key=case.get("apiKey", "sk-key") or None, headers={"x-parity-case": case["case"]}
        )
        result = await classify(model, classifier_context_from_json(case["context"]), options)
        answer = result.to_json()
        answer.pop("timestamp")
        results[case["case"]] = answer
    return results


def test_the_requests_and_results_match_pi_16() -> None:
    def turn_for(request: Any) -> Turn:
        return PARITY_TURNS.get(request.headers["x-parity-case"], Turn())

    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        for server in (tau_server, pi_server):
            server.add(*[turn_for] * len(PARITY_CASES))
        pi = run_pi_classify(pi_server)
        tau = asyncio.run(run_tau_classify(tau_server))

    tau_requests, pi_requests = by_case(tau_server.requests), by_case(pi_server.requests)
    assert sorted(pi_requests) == sorted(tau_requests)
    assert len(pi_requests) == len(PARITY_CASES) - 2  # no request without a key or for a text-only model
    for case, pi_request in pi_requests.items():
        tau_request = tau_requests[case]
        assert tau_request.path == pi_request.path, case
        assert tau_request.body == pi_request.body, case
        for header in ("authorization", "content-type", "x-parity-case", "typesafe-danger-zone-images"):
            assert tau_request.headers.get(header) == pi_request.headers.get(header), (case, header)
        for header in ("copilot-integration-id", "editor-version"):
            assert tau_request.headers.get(header) == pi_request.headers.get(header), (case, header)
    assert tau == pi
    assert (
        pi["refused"]["errorMessage"]
        == 'System One API error (400): {"error": "questions must not be empty"}'
    )
    assert pi["cloudflare-run"]["stopReason"] == "stop"
    assert pi_requests["typesafe-image"].headers["typesafe-danger-zone-images"] == "true"
    assert pi_requests["luna"].path == "/v1/decisions" and pi["luna"]["stopReason"] == "stop"
    assert pi_requests["luna-numbers"].body["input"] == (
        '{"score":1,"ratio":0.25,"tiny":1e-7,"big":1e+21,"huge":10000000000000000,"text":"é"}'
    )
    assert pi["luna-refusal"]["errorMessage"] == "OpenAI Decisions refused to answer mood"
    assert pi["luna-refusal"]["usage"]["cost"]["input"] == pytest.approx(0.06)  # the long-input tier
    assert pi["luna-timeout"]["errorMessage"].startswith(
        "OpenAI Decisions error (504): the request timed out"
    )
    # A custom System One provider: detected as TypeSafe (assets and the opt-in header) unless its
    # compat says otherwise; OpenRouter by provider id; Clef on Workers AI by model id.
    assert "assets" in pi_requests["proxy-detected"].body
    assert pi_requests["proxy-detected"].headers["typesafe-danger-zone-images"] == "true"
    assert "typesafe-danger-zone-images" not in pi_requests["proxy-images"].headers
    assert pi_requests["proxy-images"].body["images"] == [f"data:image/png;base64,{PIXEL_PNG}"]
    assert pi_requests["proxy-state-urls"].body["state"][0]["type"] == "image_url"
    assert pi_requests["proxy-state-urls"].headers["typesafe-danger-zone-images"] == "true"
    assert "typesafe-danger-zone-images" not in pi_requests["proxy-openrouter"].headers
    assert pi_requests["cf-proxy-clef"].body["input"]["images"] == [f"data:image/png;base64,{PIXEL_PNG}"]
    assert "assets" in pi_requests["cf-proxy-jev"].body["input"]


def test_an_abort_while_classifying_ends_the_call_as_aborted() -> None:
    async def main() -> tuple[ClassifierResult, float]:
        with FakeLLMServer() as server:
            server.add(Turn(fault=Fault("stall", seconds=30)))
            model = model_at(server, "typesafe", "jev-latest", "/v1")
            controller = AbortController()
            asyncio.get_running_loop().call_later(0.3, controller.abort)
            started = asyncio.get_running_loop().time()
            result = await classify(model, CONTEXT, StreamOptions(api_key="k", signal=controller.signal))
            return result, asyncio.get_running_loop().time() - started

    result, took = asyncio.run(main())
    assert result.stop_reason == "aborted" and result.answers == {}
    assert result.error_message == "Request was aborted"
    assert took < 5

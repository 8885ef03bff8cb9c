"""llama.cpp router models as classifiers (issue #32), side by side with pi 1.6 against the fake
router: the router's loaded models listed as pi's llama.cpp provider lists them (decision models
through ``typesafe-system-one`` at ``/v1/systemone``, chat models through ``llama-cpp-classify``),
and each classification's requests (``/tokenize``, ``/apply-template``, ``/completion``) and answers
as pi-ai's; then ``ModelRegistry.classify`` with the router's models."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_llama_router import FakeLlamaRouter
from pi16 import pi16_ai_package

from tau.accounts.auth_storage import AuthStorage
from tau.accounts.model_registry import ModelRegistry
from tau.ai import StreamOptions
from tau.ai.classifier_models import ClassifierModel
from tau.ai.classify import classifier_context_from_json, classify
from tau.llama_cpp.client import RouterModel
from tau.llama_cpp.extension import PROVIDER, provider_config
from tau.testing.fake_llm import PIXEL_PNG

DECISION = {"input_modalities": ["text", "image"], "output_modalities": ["decisions"]}
MODELS = {"qwen": "loaded", "thinker": "loaded", "deep": "sleeping", "jev": "loaded", "cold": "unloaded"}
QUESTIONS: dict[str, Any] = {
    "mood": {"type": "choice", "instructions": "The mood?", "criteria": {"calm": "quiet", "angry": ""}},
    "urgent": {"type": "bool", "instructions": "Urgent?", "criteria": {"true": "now", "false": "later"}},
    "quality": {"type": "score", "instructions": "How good?", "criteria": ["poor", "fair", "good"]},
}
STATE = {"message": "please fix it", "attempts": 2.0, "ratio": 0.5, "tags": [], "meta": {}}
IMAGE = {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}
CASES: list[dict[str, Any]] = [
    {"case": "chat", "id": "qwen", "questions": QUESTIONS},
    {"case": "thinking", "id": "thinker", "questions": {"urgent": QUESTIONS["urgent"]}},
    {"case": "deep", "id": "deep", "questions": QUESTIONS},
    {"case": "warm", "id": "qwen", "questions": QUESTIONS, "temperature": 2.5},
    {"case": "cold", "id": "qwen", "questions": QUESTIONS, "temperature": 0},
    {"case": "image", "id": "qwen", "questions": QUESTIONS, "images": True},
    {
        "case": "one-option",
        "id": "qwen",
        "questions": {"q": {"type": "choice", "instructions": "?", "criteria": {"only": ""}}},
    },
    {"case": "decision", "id": "jev", "questions": QUESTIONS, "images": True},
]


def router() -> FakeLlamaRouter:
    return FakeLlamaRouter(
        MODELS, architectures={"jev": DECISION}, thinking=frozenset({"thinker"}), deep=frozenset({"deep"})
    )


def registry(tmp_path: Path, url: str, catalog: list[dict[str, Any]]) -> ModelRegistry:
    (tmp_path / "models.json").write_text('{"providers": {}}')
    models = ModelRegistry(AuthStorage(tmp_path / "auth.json"), tmp_path / "models.json")
    models.register_provider(PROVIDER, provider_config(url, None, [RouterModel(m) for m in catalog]))
    return models


def context_of(case: dict[str, Any]) -> dict[str, Any]:
    context: dict[str, Any] = {"state": STATE, "questions": case["questions"]}
    return context | ({"images": [IMAGE]} if case.get("images") else {})


def node(helper: str, request: dict[str, Any]) -> Any:
    node_path, _ = pi16_ai_package()
    ran = subprocess.run(
        [str(node_path), str(Path(__file__).parents[1] / "helpers" / helper)],
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
    return json.loads(ran.stdout)


def pi_listing(url: str, catalog: list[dict[str, Any]]) -> list[dict[str, Any]]:
    _, pi_ai = pi16_ai_package()
    request = {"piCodingAgent": str(pi_ai.parent / "pi-coding-agent"), "serverUrl": url, "catalog": catalog}
    listing: list[dict[str, Any]] = node("pi16_llama_classifiers.mjs", request)
    return listing


def by_case(recorded: list[tuple[str, dict[str, str], dict[str, Any]]]) -> dict[str, list[str]]:
    """Each case's requests as sorted ``path body`` lines (a question's lookups run concurrently)."""
    out: dict[str, list[str]] = {}
    for path, headers, body in recorded:
        out.setdefault(headers["x-parity-case"], []).append(f"{path} {json.dumps(body, sort_keys=True)}")
        assert headers.get("authorization") == "Bearer local", path
    return {case: sorted(lines) for case, lines in out.items()}


def rounded(value: Any) -> Any:
    """Floats to 12 significant digits: JavaScript's and C's ``exp`` may differ in the last bit."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def test_router_classifiers_are_listed_and_answer_as_pi_16s(tmp_path: Path) -> None:
    with router() as tau_router, router() as pi_router:
        catalog = tau_router.catalog()
        models = registry(tmp_path, tau_router.url, catalog)
        listed = [m.to_json() for m in models.get_models_of_type("classifier", PROVIDER)]
        assert listed == pi_listing(tau_router.url, catalog)

        async def tau_run() -> dict[str, Any]:
            results = {}
            for case in CASES:
                model = models.get_model_of_type("classifier", PROVIDER, case["id"])
                assert isinstance(model, ClassifierModel)
                options = StreamOptions(
                    api_key="local",
                    headers={"x-parity-case": case["case"]},
                    temperature=case.get("temperature"),
                )
                result = (
                    await classify(model, classifier_context_from_json(context_of(case)), options)
                ).to_json()
                result.pop("timestamp")
                results[case["case"]] = result
            return results

        tau = asyncio.run(tau_run())
        pi_models = {model["id"]: model for model in pi_listing(pi_router.url, catalog)}
        pi = node(
            "pi16_classify.mjs",
            {
                "piAi": str(pi16_ai_package()[1]),
                "baseUrl": f"{pi_router.url}/v1",  # as pi's llama.cpp login resolves it for every model
                "apiKey": "local",
                "cases": [
                    {"case": c["case"], "model": pi_models[c["id"]], "context": context_of(c)}
                    | ({"temperature": c["temperature"]} if "temperature" in c else {})
                    for c in CASES
                ],
            },
        )
        tau_requests, pi_requests = (
            by_case(tau_router.classify_requests),
            by_case(pi_router.classify_requests),
        )

    assert [m["id"] for m in listed] == ["qwen", "thinker", "deep", "jev"]  # loaded or sleeping
    assert [m["api"] for m in listed] == ["llama-cpp-classify"] * 3 + ["typesafe-system-one"]
    assert tau_requests == pi_requests
    assert rounded(tau) == rounded(pi)
    # What the cases show, in pi's own results.
    assert pi["chat"]["stopReason"] == "stop" and pi["chat"]["answers"]["mood"]["choice"] == "calm"
    assert pi["chat"]["answers"]["urgent"]["probability"] == pytest.approx(0.679178699175393)
    assert any(line.startswith("/completion") and '"n_probs": 4096' in line for line in pi_requests["deep"])
    assert pi["deep"]["stopReason"] == "stop"
    assert any("</think>" in line for line in pi_requests["thinking"] if line.startswith("/completion"))
    assert pi["cold"]["errorMessage"] == "Temperature must be a positive number, got 0"
    assert pi["image"]["errorMessage"] == "llama.cpp classification does not support image input"
    assert pi["one-option"]["errorMessage"] == "A choice question needs 2 to 62 options, got 1"
    assert {"cold", "image", "one-option"}.isdisjoint(pi_requests)
    (decision,) = pi_requests["decision"]
    assert decision.startswith("/v1/systemone ") and '"images": ["data:image/png;base64,' in decision
    assert pi["decision"]["usage"]["input"] == 40


def test_the_registry_classifies_with_the_routers_models(tmp_path: Path) -> None:
    with router() as fake:
        models = registry(tmp_path, fake.url, fake.catalog())
        context = {"state": STATE, "questions": {"urgent": QUESTIONS["urgent"]}}
        chat = asyncio.run(models.classify({"provider": PROVIDER, "id": "qwen"}, context))
        warm = asyncio.run(models.classify({"provider": PROVIDER, "id": "qwen"}, context, temperature=3.0))
        image = asyncio.run(
            models.classify({"provider": PROVIDER, "id": "qwen"}, context | {"images": [IMAGE]})
        )
        decision = asyncio.run(
            models.classify({"provider": PROVIDER, "id": "jev"}, context | {"images": [IMAGE]})
        )
        paths = [path for path, _, _ in fake.classify_requests]
        assert models.get_model_of_type("chat", PROVIDER, "jev") is None  # decision-only: no chat
        assert models.get_model_of_type("chat", PROVIDER, "qwen") is not None
        assert models.get_model_of_type("classifier", PROVIDER, "cold") is None
        available = [m.id for m in models.get_available_of_type("classifier", PROVIDER)]
    assert chat.stop_reason == "stop" and chat.answers["urgent"].to_json()["probability"] == pytest.approx(
        0.679178699175393
    )
    assert warm.answers["urgent"].to_json()["probability"] == pytest.approx(0.5621765008857981)  # 0.75 / 3
    assert image.error_message == "Model llama.cpp/qwen does not accept image input"
    assert decision.stop_reason == "stop" and decision.to_json()["answers"]["urgent"]["probability"] == 0.75
    assert paths.count("/v1/systemone") == 1 and "/completion" in paths
    assert available == ["qwen", "thinker", "deep", "jev"]

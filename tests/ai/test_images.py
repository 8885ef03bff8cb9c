"""Image generation (issue #32): the catalogue's image models are pi 1.6's, and tau's
``openrouter-images`` request and its reading of OpenRouter's answer match pi 1.6's own pi-ai,
side by side against the fake server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pi16 import by_case, pi16_ai_package

from tau.ai import (
    AbortController,
    ImageModel,
    ImagesContext,
    ImagesResult,
    StreamOptions,
    find_image_model,
    generate_images,
    get_image_models,
)
from tau.ai.image_models import get_image_providers
from tau.ai.images import images_context_from_json
from tau.ai.providers.openrouter_images import parse_response
from tau.testing.fake_llm import (
    PIXEL_PNG,
    FakeLLMServer,
    Fault,
    RecordedRequest,
    ScriptedImage,
    ScriptedUsage,
    Turn,
)

GEMINI = "google/gemini-2.5-flash-image"  # writes text too: modalities ["image", "text"]
FLUX = "black-forest-labs/flux.2-pro"  # images only
JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDA=="

TURNS: dict[str, Turn] = {
    "text-and-images": Turn(
        text="Two foxes.",
        images=[ScriptedImage(PIXEL_PNG), ScriptedImage(JPEG, "image/jpeg")],
        usage=ScriptedUsage(input=20, output=1290, cache_read=3, cache_write=2),
        response_id="gen-fox",
    ),
    "reference-image": Turn(images=[ScriptedImage(PIXEL_PNG)]),
    "surrogate": Turn(text="", images=[]),
    "refused": Turn(
        fault=Fault("status", status=401, body={"error": {"message": "No auth credentials found"}})
    ),
    "no-key": Turn(text="never sent"),
}

CASES: list[dict[str, Any]] = [
    {
        "case": "text-and-images",
        "provider": "openrouter",
        "id": GEMINI,
        "input": [{"type": "text", "text": "A red fox"}, {"type": "text", "text": "in the snow"}],
    },
    {
        "case": "reference-image",
        "provider": "openrouter",
        "id": FLUX,
        "input": [
            {"type": "image", "data": JPEG, "mimeType": "image/jpeg"},
            {"type": "text", "text": "The same fox, as a watercolor"},
        ],
    },
    {
        "case": "surrogate",
        "provider": "openrouter",
        "id": GEMINI,
        "input": [{"type": "text", "text": "broken \ud83d pair and a whole 🦊"}],
    },
    {"case": "refused", "provider": "openrouter", "id": FLUX, "input": [{"type": "text", "text": "fox"}]},
    {
        "case": "no-key",
        "provider": "openrouter",
        "id": FLUX,
        "input": [{"type": "text", "text": "fox"}],
        "apiKey": "",
    },
]


def turn_for(request: RecordedRequest) -> Turn:
    return TURNS[request.headers["x-parity-case"]]


def run_pi(server: FakeLLMServer) -> dict[str, Any]:
    node, pi_ai = pi16_ai_package()
    request = {"piAi": str(pi_ai), "baseUrl": server.url("/api/v1"), "apiKey": "or-key", "cases": CASES}
    ran = subprocess.run(
        [str(node), str(Path(__file__).parents[1] / "helpers" / "pi16_images.mjs")],
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


async def run_tau(server: FakeLLMServer) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for case in CASES:
        model = find_image_model(case["provider"], case["id"])
        assert model is not None
        model.base_url = server.url("/api/v1")
        options = StreamOptions(
            api_key=case.get("apiKey", "or-key") or None, headers={"x-parity-case": case["case"]}
        )
        result = await generate_images(model, images_context_from_json({"input": case["input"]}), options)
        answer = result.to_json()
        answer.pop("timestamp")
        results[case["case"]] = answer
    return results


def test_the_requests_and_results_match_pi_16() -> None:
    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        for server in (tau_server, pi_server):
            server.add(*[turn_for] * len(CASES))
        pi = run_pi(pi_server)
        tau = asyncio.run(run_tau(tau_server))

    tau_requests, pi_requests = by_case(tau_server.requests), by_case(pi_server.requests)
    assert (
        sorted(pi_requests)
        == sorted(tau_requests)
        == ["reference-image", "refused", "surrogate", "text-and-images"]
    )
    for case, pi_request in pi_requests.items():
        tau_request = tau_requests[case]
        assert tau_request.path == pi_request.path == "/api/v1/chat/completions", case
        assert tau_request.body == pi_request.body, case
        for header in ("authorization", "content-type", "x-parity-case"):
            assert tau_request.headers[header] == pi_request.headers[header], (case, header)
    # An intended difference: tau's error line is the provider's message, as for its chat models;
    # pi's is the error object as JSON.
    assert pi["refused"].pop("errorMessage") == '401: {"message":"No auth credentials found"}'
    assert tau["refused"].pop("errorMessage") == "401 No auth credentials found"
    assert tau == pi
    assert pi_requests["text-and-images"].body["modalities"] == ["image", "text"]
    assert pi_requests["reference-image"].body["modalities"] == ["image"]
    assert [block["type"] for block in pi["text-and-images"]["output"]] == ["text", "image", "image"]
    assert pi["text-and-images"]["usage"]["cacheWrite"] == 2
    assert pi["no-key"] == tau["no-key"] and pi["no-key"]["stopReason"] == "error"


def test_the_catalogue_holds_pi_16s_image_models() -> None:
    _node, pi_ai = pi16_ai_package()
    groups = json.loads((pi_ai / "dist" / "providers" / "data" / "openrouter.json").read_text())
    theirs = {
        entry["id"]: entry
        for group in groups.values()
        for entry in group.values()
        if entry.get("type") == "image"
    }
    ours = {model.id: model.to_json() for model in get_image_models()}
    assert ours == theirs
    assert get_image_providers() == ["openrouter"]
    assert get_image_models("anthropic") == []
    assert find_image_model("openrouter", "anthropic/claude-sonnet-4") is None


def test_a_found_model_is_a_copy() -> None:
    model = find_image_model("openrouter", GEMINI)
    assert model is not None and model.input_limits is not None
    model.input_limits["images"] = {}
    model.base_url = "http://127.0.0.1:1"
    again = find_image_model("openrouter", GEMINI)
    assert again is not None and again.base_url == "https://openrouter.ai/api/v1"
    assert again.input_limits is not None and "resize" in again.input_limits["images"]


def test_an_abort_while_generating_ends_the_call_as_aborted() -> None:
    async def main() -> ImagesResult:
        with FakeLLMServer() as server:
            server.add(Turn(fault=Fault("stall", seconds=30)))
            model = ImageModel(
                id=FLUX, api="openrouter-images", provider="openrouter", base_url=server.url("/v1")
            )
            controller = AbortController()
            asyncio.get_running_loop().call_later(0.3, controller.abort)
            return await generate_images(
                model,
                ImagesContext(images_context_from_json({"input": [{"type": "text", "text": "x"}]}).input),
                StreamOptions(api_key="k", signal=controller.signal),
            )

    result = asyncio.run(main())
    assert (result.stop_reason, result.error_message, result.output) == ("aborted", "Request was aborted", [])


def test_an_unknown_api_and_a_bad_context_are_errors_not_exceptions() -> None:
    model = ImageModel(id="m", api="dall-e", provider="p", base_url="http://127.0.0.1:1")
    result = asyncio.run(generate_images(model, ImagesContext([]), StreamOptions(api_key="k")))
    assert result.stop_reason == "error"
    assert (
        result.error_message == "No API provider registered for api: dall-e (image apis: openrouter-images)"
    )
    try:
        images_context_from_json({"input": [{"type": "image", "data": "x"}]})
    except ValueError as error:
        assert str(error) == "context.input[0] must be a text or image block"
    else:
        raise AssertionError("a block without mimeType was taken")


def test_only_base64_data_urls_become_images() -> None:
    model = find_image_model("openrouter", FLUX)
    assert model is not None
    result = ImagesResult(api=model.api, provider=model.provider, model=model.id)
    answer = {
        "id": "gen-1",
        "choices": [
            {
                "message": {
                    "content": "",
                    "images": [
                        {"type": "image_url", "image_url": {"url": "https://example.com/fox.png"}},
                        {"type": "image_url", "image_url": "data:image/webp;base64,UklGRg=="},
                        {"type": "image_url", "image_url": {"url": "data:image/png,plain"}},
                    ],
                }
            }
        ],
    }
    parse_response(answer, model, result)
    assert [block.to_json() for block in result.output] == [
        {"type": "image", "data": "UklGRg==", "mimeType": "image/webp"}
    ]
    assert result.response_id == "gen-1" and result.usage is None

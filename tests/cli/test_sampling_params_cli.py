"""models.json ``samplingParams`` and ``samplingParamsByThinkingLevel``: the real `tau` sends them as
the real pi 1.6 does (merged into the body of an OpenAI-compatible request, the level's over the
model's, ``modelOverrides`` merged key by key), against the fake server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command
from tau_command import TauCommand

from tau.testing.fake_llm import Turn

SAMPLED = ("temperature", "top_p", "top_k", "min_p")


def write_models(tau: TauCommand, api: str) -> None:
    base = tau.server.url("/v1")
    models = {
        "providers": {
            "local": {
                "baseUrl": base,
                "api": api,
                "apiKey": "local-key",
                "models": [
                    {
                        "id": "sampler",
                        "reasoning": True,
                        "contextWindow": 100000,
                        "maxTokens": 4096,
                        "samplingParams": {"temperature": 1.0, "top_p": 0.95},
                        "samplingParamsByThinkingLevel": {
                            "off": {"temperature": 0.7, "top_p": 0.8},
                            "high": {"top_k": 20},
                        },
                    }
                ],
                "modelOverrides": {"sampler": {"samplingParamsByThinkingLevel": {"high": {"min_p": 0.05}}}},
            }
        }
    }
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


def sampled(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in SAMPLED if key in body}


def tau_body(tau: TauCommand, thinking: str) -> dict[str, Any]:
    tau.server.add(Turn(text="ok"))
    result = tau.run("--model", "local/sampler", "--thinking", thinking, "--no-tools", "-p", "hi")
    assert result.returncode == 0, result.stderr
    return tau.server.requests[-1].body


def pi_body(tau: TauCommand, pi_dir: Path, thinking: str) -> dict[str, Any]:
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    tau.server.add(Turn(text="ok"))
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    ran = subprocess.run(
        [*pi16_command(), "--model", "local/sampler", "--thinking", thinking, "--no-tools", "-p", "hi"],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return tau.server.requests[-1].body


@pytest.mark.parametrize(
    ("thinking", "expected"),
    [
        ("off", {"temperature": 0.7, "top_p": 0.8}),
        ("high", {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.05}),
        ("low", {"temperature": 1.0, "top_p": 0.95}),
    ],
)
def test_completions_requests_carry_the_models_sampling_params_as_pi_sends_them(
    tau: TauCommand, tmp_path: Path, thinking: str, expected: dict[str, Any]
) -> None:
    write_models(tau, "openai-completions")
    ours = tau_body(tau, thinking)
    assert sampled(ours) == expected
    assert sampled(pi_body(tau, tmp_path / "pi", thinking)) == expected


def test_responses_requests_carry_them_too(tau: TauCommand, tmp_path: Path) -> None:
    write_models(tau, "openai-responses")
    expected = {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.05}
    assert sampled(tau_body(tau, "high")) == expected
    assert sampled(pi_body(tau, tmp_path / "pi", "high")) == expected


def test_other_apis_ignore_them_as_pi_does(tau: TauCommand) -> None:
    write_models(tau, "anthropic-messages")
    tau.server.add(Turn(text="ok"))
    result = tau.run("--model", "local/sampler", "--thinking", "off", "--no-tools", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert sampled(tau.server.requests[-1].body) == {}


def test_a_sampling_level_that_is_no_thinking_level_is_a_config_error(tau: TauCommand) -> None:
    write_models(tau, "openai-completions")
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["samplingParamsByThinkingLevel"] = {"huge": {"top_k": 1}}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    result = tau.run("--model", "local/sampler", "--no-tools", "-p", "hi")
    assert result.returncode != 0
    assert "samplingParamsByThinkingLevel" in result.stderr and "huge" in result.stderr
    assert "Traceback" not in result.stderr

"""Command-line outputs scripts read, byte for byte as the real pi 1.6 prints them: ``--list-models``
(pi's table, number format and fuzzy search) and ``auth check --json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pi16 import pi16_command
from tau_command import TauCommand

MODELS = {
    "providers": {
        "local": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "k",
            "models": [
                {"id": "fake-model"},
                {"id": "big-model", "contextWindow": 1048576, "maxTokens": 65536, "reasoning": True},
                {"id": "vision-mini", "contextWindow": 200000, "maxTokens": 8192, "input": ["text", "image"]},
            ],
        },
        "Acme": {
            "baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions",
            "apiKey": "k",
            "models": [{"id": "Rocket-2", "contextWindow": 1500000, "maxTokens": 500}],
        },
    }
}


def _pi(tau: TauCommand, pi_dir: Path, *args: str) -> str:
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text(json.dumps(MODELS))
    env = {**tau.env, "PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    ran = subprocess.run(
        [*pi16_command(), *args], cwd=tau.work, env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_list_models_prints_pi_16s_table(tau: TauCommand, tmp_path: Path) -> None:
    (tau.agent_dir / "models.json").write_text(json.dumps(MODELS))
    for search in ([], ["model"], ["local big"], ["rocket"], ["nothing-like-it"]):
        ours = tau.run("--list-models", *search)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == _pi(tau, tmp_path / "pi", "--list-models", *search), search


def test_auth_check_json_is_pi_16s_for_every_kind_of_key(tau: TauCommand, tmp_path: Path) -> None:
    """``authType`` names the kind of credential (pi's ``api_key``/``oauth``), not its source."""
    (tau.agent_dir / "models.json").write_text(json.dumps(MODELS))
    cases = [
        ({"ANTHROPIC_API_KEY": "sk-env"}, "anthropic", None),
        ({}, "local", None),  # models.json's apiKey
        ({}, "openai", {"openai": {"type": "api_key", "key": "sk-stored"}}),
    ]
    for env, provider, stored in cases:
        pi_dir = tmp_path / f"pi-{provider}"
        for folder in (tau.agent_dir, pi_dir):
            folder.mkdir(exist_ok=True)
            (folder / "auth.json").unlink(missing_ok=True)
            if stored:
                (folder / "auth.json").write_text(json.dumps(stored))
        tau.env.update(env)
        ours = tau.run("auth", "check", "--provider", provider, "--json", "--credentials")
        assert ours.stdout == _pi(
            tau, pi_dir, "auth", "check", "--provider", provider, "--json", "--credentials"
        )
        for name in env:
            del tau.env[name]

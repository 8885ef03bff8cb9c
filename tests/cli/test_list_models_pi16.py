"""``tau --list-models [search]`` prints pi 1.6's table byte for byte: the same models, order, number
format (``16.4K``, ``1M``) and padding, and pi's line when a search matches nothing."""

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

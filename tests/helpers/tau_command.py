"""Run the real `tau` command against the fake LLM server, with its own agent dir (tests only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tau.testing.fake_llm import FakeLLMServer


@dataclass
class TauCommand:
    agent_dir: Path
    work: Path
    server: FakeLLMServer
    env: dict[str, str]

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            cwd=self.work,
            env=self.env,
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tau", *args],
            cwd=self.work,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))


MODEL = ["--provider", "local", "--model", "fake-model"]


def tau_command(tmp_path: Path) -> Iterator[TauCommand]:
    agent_dir = tmp_path / "agent"
    work = tmp_path / "work"
    agent_dir.mkdir()
    work.mkdir()
    with FakeLLMServer() as server:
        models = {
            "providers": {
                "local": {
                    "baseUrl": server.url("/v1"),
                    "api": "openai-completions",
                    "apiKey": "local-key",
                    "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(models))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TAU_SESSION_DIR"}
        env["TAU_AGENT_DIR"] = str(agent_dir)
        yield TauCommand(agent_dir=agent_dir, work=work, server=server, env=env)

"""A Radius session pi 1.6 wrote, continued by pi 1.6 and by tau (issue #32): both send the gateway
the recorded transcript byte for byte (pi's system message with its prompt sections and tools, the
question, the tool call, its result, the answer), then the new question. tau, whose prompt differs
from pi's, first records and sends its own sections and tools as one system message in place;
pi, whose prompt has not changed, records none. Both run as real processes against the fake server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pi16 import pi16_command

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn

MODEL = ("--provider", "radius", "--model", "claude-opus-5:high")
TOKEN = "radius-token-1"


def run_pi(pi: list[str], pi_dir: Path, work: Path, *args: str) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "PI_OFFLINE": "1",
        "PI_CODING_AGENT_DIR": str(pi_dir),
        "HOME": str(pi_dir),
    }
    ran = subprocess.run(
        [*pi, *MODEL, *args], cwd=work, env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr


def run_tau(agent_dir: Path, work: Path, *args: str) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TAU_", "PI_")) and not k.endswith("_API_KEY")
    }
    env.update(TAU_AGENT_DIR=str(agent_dir), RADIUS_API_KEY=TOKEN, HOME=str(agent_dir))
    ran = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr


def test_tau_continues_a_pi16_radius_session_with_the_transcript_pi_sends(tmp_path: Path) -> None:
    pi = pi16_command()
    work, pi_dir, tau_dir = tmp_path / "work", tmp_path / "pi", tmp_path / "tau"
    for folder in (work, pi_dir, tau_dir):
        folder.mkdir()
    (work / "notes.txt").write_text("the answer is 42\n")
    with FakeLLMServer() as fake:
        models = json.dumps({"providers": {"radius": {"baseUrl": fake.url("/pi/v1")}}})
        (pi_dir / "models.json").write_text(models)
        (tau_dir / "models.json").write_text(models)
        login = {
            "type": "oauth",
            "refresh": "r",
            "access": TOKEN,
            "expires": int(time.time() * 1000) + 3_600_000,
        }
        (pi_dir / "auth.json").write_text(json.dumps({"radius": login}))
        read = ScriptedToolCall("read", {"path": "notes.txt"}, id="call_1")
        fake.add(Turn(tool_calls=[read]), Turn(text="It is 42."))
        run_pi(pi, pi_dir, work, "-p", "What do my notes say?")
        [session] = sorted((pi_dir / "sessions").rglob("*.jsonl"))
        copy = Path(shutil.copy(session, tmp_path / "copy.jsonl"))
        recorded = [
            json.loads(line)["message"]
            for line in session.read_text().splitlines()
            if json.loads(line)["type"] == "message"
        ]
        fake.add(Turn(text="Done."), Turn(text="Done."))
        run_pi(pi, pi_dir, work, "-c", "-p", "Thanks.")
        run_tau(tau_dir, work, "--session", str(copy), "-p", "Thanks.")
        by_pi: dict[str, Any] = fake.requests[-2].body
        by_tau: dict[str, Any] = fake.requests[-1].body
    assert [m["role"] for m in recorded] == ["system", "user", "assistant", "toolResult", "assistant"]
    pi_sent, tau_sent = by_pi["context"]["messages"], by_tau["context"]["messages"]
    assert pi_sent[: len(recorded)] == tau_sent[: len(recorded)] == recorded
    assert [m["role"] for m in pi_sent[len(recorded) :]] == ["user"]
    change, question = tau_sent[len(recorded) :]
    assert change["role"] == "system" and change["sections"]  # tau's own prompt, in place
    assert question["content"] == pi_sent[-1]["content"]
    assert (
        by_tau["options"]
        == by_pi["options"]
        == {"reasoning": "high", "sessionId": by_pi["options"]["sessionId"]}
    )
    assert fake.requests[-1].headers["authorization"] == fake.requests[-2].headers["authorization"]

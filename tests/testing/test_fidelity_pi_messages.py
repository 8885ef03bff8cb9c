"""pi-messages has no vendor SDK: its reference client is pi itself. The real pi 1.6, signed in to the
Radius gateway, must read the fake's pi-messages stream (thinking, text, a tool call it runs, the
gateway's usage and cost) and send the tool's result back on the same protocol."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from pi16 import pi16_command

from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn


def test_pi_runs_a_tool_loop_over_the_fakes_pi_messages_stream(tmp_path: Path) -> None:
    pi = pi16_command()
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    with FakeLLMServer() as fake:
        fake.add(
            Turn(
                thinking="Read the notes.",
                text="Looking.",
                tool_calls=[ScriptedToolCall("read", {"path": "notes.txt"}, id="call_1")],
                usage=ScriptedUsage(input=120, output=30),
            ),
            Turn(text="It is 42."),
        )
        (tmp_path / "models.json").write_text(
            json.dumps({"providers": {"radius": {"baseUrl": fake.url("/pi/v1")}}})
        )
        login = {
            "type": "oauth",
            "refresh": "r",
            "access": "radius-at-1",
            "expires": int(time.time() * 1000) + 3_600_000,
        }
        (tmp_path / "auth.json").write_text(json.dumps({"radius": login}))
        env = {
            "PATH": "/usr/bin:/bin",
            "PI_OFFLINE": "1",
            "PI_CODING_AGENT_DIR": str(tmp_path),
            "HOME": str(tmp_path),
        }
        ran = subprocess.run(
            [*pi, "--provider", "radius", "--model", "balanced", "--mode", "json", "-p", "What do my notes say?"],
            cwd=tmp_path, env=env, input="", capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        requests = fake.requests
    assert ran.returncode == 0, ran.stderr
    events = [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]
    ends = [
        e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    first, last = ends
    assert [block["type"] for block in first["content"]] == ["thinking", "text", "toolCall"]
    assert first["content"][2] == {
        "type": "toolCall",
        "id": "call_1",
        "name": "read",
        "arguments": {"path": "notes.txt"},
    }
    assert (first["stopReason"], first["usage"]["input"], first["usage"]["cost"]["total"]) == (
        "toolUse",
        120,
        0.01,
    )
    assert (last["content"], last["stopReason"]) == ([{"type": "text", "text": "It is 42."}], "stop")
    assert [r.api for r in requests] == ["pi-messages", "pi-messages"]
    assert requests[1].headers["authorization"] == "Bearer radius-at-1"
    result = requests[1].body["context"]["messages"][-1]
    assert (result["role"], result["toolCallId"], result["content"][0]["text"]) == (
        "toolResult",
        "call_1",
        "the answer is 42\n",
    )

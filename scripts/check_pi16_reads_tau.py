"""Check by hand that pi 1.x continues a session file tau wrote and sends tau's conversation.

Usage: python scripts/check_pi16_reads_tau.py PI_CLI_JS [NODE]   (the same arguments as
gen_pi16_fixtures.py). tau writes a session of two turns (a tool call and an answer) against
the fake server; pi continues that file with one more prompt; then tau continues the same
original file with the same prompt. Prints both requests' messages side by side and exits 1 if
the conversation pi sent (all but system messages) differs from the one tau sent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tau.testing.fake_llm import FakeLLMServer, text_turn, tool_turn


def conversation(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] not in ("system", "developer")]


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cli, node = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "node"
    root = Path(tempfile.mkdtemp(prefix="tau-pi16-check-"))
    work, tau_dir, pi_dir = root / "work", root / "tau", root / "pi"
    for folder in (work, tau_dir, pi_dir):
        folder.mkdir()
    (work / "notes.txt").write_text("the answer is 42\n")
    turns = [
        tool_turn("read", {"path": "notes.txt"}, id="call_1"),
        text_turn("42."),
        text_turn("Done."),
        text_turn("Done."),
    ]
    with FakeLLMServer(turns) as server:
        models = {"providers": {"local": {"baseUrl": server.url("/v1"), "api": "openai-completions", "apiKey": "k",
                                          "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}]}}}  # fmt: skip
        for folder in (tau_dir, pi_dir):
            (folder / "models.json").write_text(json.dumps(models))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        model = ["--provider", "local", "--model", "fake-model"]
        tau = [sys.executable, "-m", "tau", *model]
        run([*tau, "-p", "What do my notes say?"], work, env | {"TAU_AGENT_DIR": str(tau_dir)})
        [written] = sorted((tau_dir / "sessions").rglob("*.jsonl"))
        for_tau = shutil.copy(written, root / "for_tau.jsonl")
        pi_env = env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir)}
        run([node, cli, *model, "--session", str(written), "-p", "Thanks, that is all."], work, pi_env)
        run(
            [*tau, "--session", str(for_tau), "-p", "Thanks, that is all."],
            work,
            env | {"TAU_AGENT_DIR": str(tau_dir)},
        )
        pi_body, tau_body = server.requests[2].body, server.requests[3].body
    print("pi sent: ", json.dumps(conversation(pi_body))[:2000])
    print("tau sent:", json.dumps(conversation(tau_body))[:2000])
    print("pi's system prompt starts:", json.dumps(pi_body["messages"][0]["content"][:120]))
    print("pi's tools:", [t["function"]["name"] for t in pi_body.get("tools", [])])
    print("session file after pi:", written)
    if conversation(pi_body) != conversation(tau_body):
        sys.exit("DIFFERENT: pi did not send tau's conversation")
    print("SAME conversation")


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"{cmd[0]} failed ({done.returncode}): {done.stderr.strip()}")


if __name__ == "__main__":
    main()

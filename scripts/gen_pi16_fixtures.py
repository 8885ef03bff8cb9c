"""Regenerate the pi 1.x interop fixtures under tests/session/fixtures/pi16/ with a real pi.

Usage: python scripts/gen_pi16_fixtures.py PI_CLI_JS [NODE]

PI_CLI_JS is the ``dist/bundle/cli.js`` of an installed ``@earendil-works/pi-coding-agent``
(``npm install @earendil-works/pi-coding-agent@1.6.0`` in any folder); NODE defaults to ``node``.
pi runs offline against tau's FakeLLMServer (provider ``local``, openai-completions). It writes a
session of two turns (a tool call and an answer), then continues it with a third prompt. The
script keeps the session as pi left it after the first run (``session.jsonl``), the same file after
pi continued it (``continued.jsonl``) and the body of the request pi sent for the third prompt
(``continue_request.json``): what a continuation of ``session.jsonl`` should send.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tau.testing.fake_llm import FakeLLMServer, text_turn, tool_turn

OUT = Path(__file__).resolve().parent.parent / "tests" / "session" / "fixtures" / "pi16"
# Fixed paths, so the fixtures do not depend on where they were made.
WORK = Path("/tmp/tau-pi16-fixture/work")
AGENT = Path("/tmp/tau-pi16-fixture/agent")


def run_pi(node: str, cli: str, server: FakeLLMServer, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(PI_OFFLINE="1", PI_CODING_AGENT_DIR=str(AGENT), HOME=str(AGENT.parent))
    cmd = [node, cli, "--provider", "local", "--model", "fake-model", *args]
    done = subprocess.run(cmd, cwd=WORK, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"pi failed ({done.returncode}): {done.stderr.strip()}")


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cli, node = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "node"
    shutil.rmtree(WORK.parent, ignore_errors=True)
    WORK.mkdir(parents=True)
    AGENT.mkdir(parents=True)
    (WORK / "notes.txt").write_text("the answer is 42\n")
    turns = [
        tool_turn("read", {"path": "notes.txt"}, id="call_1"),
        text_turn("The notes say 42."),
        text_turn("Done."),
    ]
    with FakeLLMServer(turns) as server:
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
        (AGENT / "models.json").write_text(json.dumps(models))
        run_pi(node, cli, server, "-p", "What do my notes say?")
        files = sorted((AGENT / "sessions").rglob("*.jsonl"))
        if len(files) != 1:
            sys.exit(f"expected one session file, found {len(files)}")
        first = files[0].read_text()
        run_pi(node, cli, server, "-c", "-p", "Thanks, that is all.")
        requests = [r.body for r in server.requests]
    if len(requests) != 3:
        sys.exit(f"expected three requests, the fake server got {len(requests)}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "session.jsonl").write_text(first)
    (OUT / "continued.jsonl").write_text(files[0].read_text())
    (OUT / "first_request.json").write_text(json.dumps(requests[0], indent=2) + "\n")
    (OUT / "continue_request.json").write_text(json.dumps(requests[2], indent=2) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()

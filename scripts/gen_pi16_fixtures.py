"""Regenerate the pi 1.x interop fixtures under tests/session/fixtures/pi16/ with a real pi.

Usage: python scripts/gen_pi16_fixtures.py PI_CLI_JS [NODE]

PI_CLI_JS is the ``dist/bundle/cli.js`` of an installed ``@earendil-works/pi-coding-agent``
(``npm install @earendil-works/pi-coding-agent@1.6.0`` in any folder); NODE defaults to ``node``.
pi runs offline against tau's FakeLLMServer (provider ``local``, openai-completions). It writes a
session of two turns (a tool call and an answer), then continues it with a third prompt. The
script keeps the session as pi left it after the first run (``session.jsonl``), the same file after
pi continued it (``continued.jsonl``) and the body of the request pi sent for the third prompt
(``continue_request.json``): what a continuation of ``session.jsonl`` should send.

pi's own prose (its prompt sections, system prompt and tool descriptions) is replaced by
placeholders before anything is written: the fixtures keep pi's format, not its text.
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
    (OUT / "session.jsonl").write_text(scrub_session(first))
    (OUT / "continued.jsonl").write_text(scrub_session(files[0].read_text()))
    (OUT / "first_request.json").write_text(json.dumps(scrub_request(requests[0]), indent=2) + "\n")
    (OUT / "continue_request.json").write_text(json.dumps(scrub_request(requests[2]), indent=2) + "\n")
    print(f"wrote {OUT}")


def scrub_descriptions(value: Any) -> Any:
    """``value`` with every ``description`` text replaced by a placeholder."""
    if isinstance(value, dict):
        return {
            k: "(description)" if k == "description" and isinstance(v, str) else scrub_descriptions(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub_descriptions(v) for v in value]
    return value


def scrub_session(text: str) -> str:
    """A session file with the texts of its system messages' sections and tools replaced."""
    lines = []
    for line in text.splitlines():
        entry = json.loads(line)
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "system":
            sections = message.get("sections") or {}
            message["sections"] = {k: None if v is None else f"({k} section)" for k, v in sections.items()}
            entry["message"] = scrub_descriptions(message)
        lines.append(json.dumps(entry, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def scrub_request(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with its system prompt and tool descriptions replaced."""
    body = scrub_descriptions(body)
    for message in body.get("messages", []):
        if message.get("role") in ("system", "developer"):
            message["content"] = "(system prompt)"
    return body


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()

"""A session the real pi 1.6 writes in the test (a tool call and its answer, against the fake server),
continued once by pi 1.6 and once by the real tau from the same file: tau sends the conversation pi
sends. (test_pi16_interop.py checks the same on files pi wrote earlier, kept as fixtures.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command, run_pi16
from tau_command import MODEL, tau_command

from tau.session import SessionManager
from tau.testing.fake_llm import text_turn, tool_turn

PROMPT = "Thanks, that is all."


@dataclass
class Continued:
    pi_request: dict[str, Any]
    tau_request: dict[str, Any]
    written: str  # the file as pi wrote it
    tau_file: Path  # tau's continuation of it


@pytest.fixture(scope="module")
def continued(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Continued]:
    pi = pi16_command()
    for tau in tau_command(tmp_path_factory.mktemp("pi16-writes")):
        (tau.work / "notes.txt").write_text("the answer is 42\n")
        pi_dir = tau.work.parent / "pi-agent"
        tau.server.add(tool_turn("read", {"path": "notes.txt"}, id="call_1"), text_turn("The notes say 42."))
        run_pi16(pi, tau, pi_dir, "-p", "What do my notes say?")
        [written] = sorted((pi_dir / "sessions").rglob("*.jsonl"))
        for_pi = Path(shutil.copy(written, tau.work.parent / "for-pi.jsonl"))
        for_tau = Path(shutil.copy(written, tau.work.parent / "for-tau.jsonl"))

        tau.server.add(text_turn("Done."), text_turn("Done."))
        run_pi16(pi, tau, pi_dir, "--session", str(for_pi), "-p", PROMPT)
        done = tau.run(*MODEL, "--session", str(for_tau), "-p", PROMPT)
        assert done.returncode == 0, done.stderr
        *_, pi_request, tau_request = (r.body for r in tau.server.requests)
        yield Continued(pi_request, tau_request, written.read_text(), for_tau)


def test_tau_continuing_a_file_pi16_just_wrote_sends_what_pi16_sends(continued: Continued) -> None:
    # After the leading system prompt (each tool states its own) the messages are the same, byte for byte.
    pi_messages, tau_messages = continued.pi_request["messages"], continued.tau_request["messages"]
    assert pi_messages[0]["role"] == tau_messages[0]["role"] == "system"
    assert json.dumps(tau_messages[1:]) == json.dumps(pi_messages[1:])
    assert [m["role"] for m in tau_messages[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    rest = {k: v for k, v in continued.pi_request.items() if k not in ("messages", "tools")}
    assert {k: v for k, v in continued.tau_request.items() if k not in ("messages", "tools")} == rest


def test_tau_only_appends_to_the_file_pi16_wrote(continued: Continued) -> None:
    assert continued.tau_file.read_text().startswith(continued.written)
    assert SessionManager.open(str(continued.tau_file)).warnings == []

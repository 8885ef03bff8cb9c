"""A session the real tau wrote (a tool call, a compaction), continued by the real pi 1.6: pi sends the
conversation tau wrote, and tau then reads back what pi appended. Everything runs against the fake
server. pi comes from ``.ci/pi16`` (installed by ``scripts/check``) or ``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command, run_pi16
from tau_command import MODEL, TauCommand, tau_command

from tau.session import SessionManager
from tau.testing.fake_llm import ScriptedUsage, Turn, text_turn, tool_turn

PI_PROMPT = "Thanks, that is all."
TAU_PROMPT = "One more thing."


@dataclass
class Interop:
    tau_requests: list[dict[str, Any]]  # tau writing the session, then continuing it after pi
    pi_request: dict[str, Any]
    written: str  # the file as tau left it
    session: Path


def conversation(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages sent, without the system prompt (each tool sends its own) and with the compaction
    summary cut to its ``<summary>`` block (each tool words its own sentence before it)."""
    sent = [m for m in body["messages"] if m["role"] not in ("system", "developer")]
    [summary] = sent[0]["content"]
    return [
        {**sent[0], "content": [{**summary, "text": summary["text"][summary["text"].index("<summary>") :]}]},
        *sent[1:],
    ]


@pytest.fixture(scope="module")
def interop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interop]:
    pi = pi16_command()
    for tau in tau_command(tmp_path_factory.mktemp("pi16")):
        yield run_both(tau, pi)


def run_both(tau: TauCommand, pi: list[str]) -> Interop:
    (tau.work / "notes.txt").write_text("the answer is 42\n")
    # A small window makes tau compact before the second prompt; pi gets a large one so it does not.
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["contextWindow"] = 4000
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    settings = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(
        Turn(text="Ready. " * 150, usage=ScriptedUsage(input=3500, output=600)),
        text_turn("## Goal\nRead the notes."),
        tool_turn("read", {"path": "notes.txt"}, id="call_1"),
        text_turn("It is 42."),
    )
    done = tau.run(*MODEL, "-p", "Hello.", "What do my notes say?")
    assert done.returncode == 0, done.stderr
    [session] = tau.session_files()
    written = session.read_text()

    pi_dir = tau.work.parent / "pi-agent"
    pi_dir.mkdir()
    models["providers"]["local"]["models"][0]["contextWindow"] = 100000
    (pi_dir / "models.json").write_text(json.dumps(models))
    tau.server.add(text_turn("Done."))
    run_pi16(pi, tau, pi_dir, "--session", str(session), "-p", PI_PROMPT)

    tau.server.add(text_turn("Still 42."))
    done = tau.run(*MODEL, "--session", str(session), "-p", TAU_PROMPT)
    assert done.returncode == 0, done.stderr
    bodies = [r.body for r in tau.server.requests]
    return Interop(
        tau_requests=bodies[:4] + bodies[5:], pi_request=bodies[4], written=written, session=session
    )


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_pi16_continuing_a_tau_session_sends_the_history_tau_itself_sent(interop: Interop) -> None:
    sent = conversation(interop.pi_request)
    # tau's last request of its own run (after the tool result), then tau's answer and pi's prompt.
    assert sent[:-2] == conversation(interop.tau_requests[3])
    assert sent[-2:] == [
        {"role": "assistant", "content": "It is 42."},
        {"role": "user", "content": [{"type": "text", "text": PI_PROMPT}]},
    ]


def test_pi16_sends_tau_compaction_summary_and_tool_call_in_place_of_the_compacted_turn(
    interop: Interop,
) -> None:
    summary, kept, question, call, result, *_ = conversation(interop.pi_request)
    [text] = summary["content"]
    assert summary["role"] == "user" and text["text"].endswith("## Goal\nRead the notes.\n</summary>")
    assert "Hello." not in json.dumps(interop.pi_request["messages"])  # compacted away
    assert kept["role"] == "assistant" and kept["content"].startswith("Ready.")
    assert question["content"] == [{"type": "text", "text": "What do my notes say?"}]
    [tool_call] = call["tool_calls"]
    assert (tool_call["id"], tool_call["function"]["name"]) == ("call_1", "read")
    assert json.loads(tool_call["function"]["arguments"]) == {"path": "notes.txt"}
    assert result == {"role": "tool", "content": "the answer is 42\n", "tool_call_id": "call_1"}


def test_pi16_only_appends_to_the_file_tau_wrote(interop: Interop) -> None:
    after = interop.session.read_text()
    assert after.startswith(interop.written)
    tau_entries = lines(interop.written)
    pi_entries = lines(after[len(interop.written) :])[:3]  # then tau's own continuation
    assert pi_entries[0]["parentId"] == tau_entries[-1]["id"]
    assert [e["message"]["role"] for e in pi_entries] == ["system", "user", "assistant"]


def test_tau_reads_back_what_pi16_appended_and_continues_from_it(interop: Interop) -> None:
    assert SessionManager.open(str(interop.session)).warnings == []
    continued = interop.tau_requests[-1]
    assert conversation(continued) == [
        *conversation(interop.pi_request),
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": [{"type": "text", "text": TAU_PROMPT}]},
    ]
    # pi's recorded prompt sections do not leak into tau's: tau sends the prompt it sent before.
    assert continued["messages"][0] == interop.tau_requests[0]["messages"][0]
    assert [t["function"]["name"] for t in continued["tools"]] == ["read", "bash", "edit", "write"]

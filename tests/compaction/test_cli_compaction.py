"""Compaction through the real ``tau -p`` against the fake HTTP server: the history is compacted and
the task goes on; a crash mid-compaction and a damaged compaction line leave a usable session."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.session.entries import CompactionEntry
from tau.session.manager import SessionManager
from tau.testing.fake_llm import Fault, ScriptedUsage, Turn

WINDOW = 4000  # threshold: 4000 - 1000 reserve = 3000 reported tokens


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    for command in tau_command(tmp_path):
        models = json.loads((command.agent_dir / "models.json").read_text())
        models["providers"]["local"]["models"][0]["contextWindow"] = WINDOW
        (command.agent_dir / "models.json").write_text(json.dumps(models))
        settings = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}}
        (command.agent_dir / "settings.json").write_text(json.dumps(settings))
        yield command


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def sent_text(body: Any) -> str:
    return json.dumps(body["messages"])


def big_turn(text: str = "first reply " + "x" * 2000) -> Turn:
    return Turn(text=text, usage=ScriptedUsage(input=3500, output=600))


def test_a_long_task_is_compacted_and_goes_on(tau: TauCommand) -> None:
    tau.server.add(big_turn(), Turn(text="## Goal\nthe summary"), Turn(text="second reply"))
    result = tau.run(*MODEL, "-p", "first task", "second task")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "second reply\n"

    summarizer, follow_up = tau.server.requests[1:]
    assert "tools" not in summarizer.body or not summarizer.body["tools"]
    assert "first task" in sent_text(summarizer.body)
    assert "<summary>" in sent_text(follow_up.body) and "the summary" in sent_text(follow_up.body)
    assert "second task" in sent_text(follow_up.body)

    [session] = tau.session_files()
    kinds = [line["type"] for line in lines(session)]
    assert kinds.count("compaction") == 1
    assert kinds.index("compaction") < len(kinds) - 2  # the second exchange follows it


def test_an_overflow_is_compacted_and_the_same_request_continues(tau: TauCommand) -> None:
    tau.server.add(Turn(text="setup done " + "y" * 2000))
    assert tau.run(*MODEL, "-p", "set things up").returncode == 0
    too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
    tau.server.add(
        Turn(fault=Fault("status", status=400, body=too_long)),
        Turn(text="## Goal\ncompacted"),
        Turn(text="recovered"),
    )
    result = tau.run(*MODEL, "-c", "-p", "now the real work")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    retried = tau.server.last_request.body
    assert "now the real work" in sent_text(retried) and "compacted" in sent_text(retried)
    [session] = tau.session_files()
    roles = [line["message"]["role"] for line in lines(session) if line["type"] == "message"]
    assert roles == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]  # the failed reply stays on disk
    assert [line["type"] for line in lines(session)].count("compaction") == 1


def test_kill_9_during_a_compaction_leaves_a_session_that_reopens(tau: TauCommand) -> None:
    tau.server.add(big_turn(), Turn(text="never", fault=Fault("stall", seconds=20)))
    process = tau.popen(*MODEL, "-p", "first task")
    deadline = time.time() + 20
    while len(tau.server.requests) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert len(tau.server.requests) == 2, "the summariser request never arrived"
    os.kill(process.pid, signal.SIGKILL)
    process.wait(10)

    [session] = tau.session_files()
    before = lines(session)
    assert [line["type"] for line in before].count("compaction") == 0
    assert SessionManager.open(str(session)).warnings == []

    tau.server.add(Turn(text="## Goal\nsummary after the crash"), Turn(text="carried on"))
    result = tau.run(*MODEL, "-c", "-p", "go on")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "carried on\n"
    after = lines(session)
    assert after[: len(before)] == before and [line["type"] for line in after].count("session") == 1
    assert [line["type"] for line in after].count("compaction") == 1  # compacted before the prompt


def test_a_damaged_compaction_line_is_skipped_with_a_warning(tau: TauCommand) -> None:
    tau.server.add(big_turn(), Turn(text="## Goal\nthe summary"))
    assert tau.run(*MODEL, "-p", "first task").returncode == 0
    [session] = tau.session_files()
    text = session.read_text().splitlines()
    assert json.loads(text[-1])["type"] == "compaction"
    session.write_text("\n".join(text[:-1]) + "\n" + text[-1][: len(text[-1]) // 2])  # cut mid-write

    manager = SessionManager.open(str(session))
    assert any("skipped a line" in warning for warning in manager.warnings)
    assert not any(isinstance(e, CompactionEntry) for e in manager.get_entries())
    roles = [m.role for m in manager.build_session_context().messages]
    assert roles == ["user", "assistant"]  # everything else intact

    tau.server.add(Turn(text="## Goal\nagain"), Turn(text="fine"))
    result = tau.run(*MODEL, "-c", "-p", "next")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine\n"
    assert "first task" in json.dumps(tau.server.requests[-2].body["messages"])


def test_a_compaction_entry_without_an_id_is_skipped_and_later_entries_load(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    from tau.ai.types import AssistantMessage, TextContent, UserMessage

    manager.append_message(UserMessage("hello"))
    manager.append_message(AssistantMessage([TextContent("hi")], api="x", provider="p", model="m"))
    path = manager.get_session_file()
    assert path is not None
    with open(path, "a", encoding="utf-8") as f:
        f.write(
            json.dumps({"type": "compaction", "summary": "lost", "firstKeptEntryId": "x", "tokensBefore": 1})
            + "\n"
        )
    reopened = SessionManager.open(path)
    assert any("skipped an entry" in warning for warning in reopened.warnings)
    assert [m.role for m in reopened.build_session_context().messages] == ["user", "assistant"]

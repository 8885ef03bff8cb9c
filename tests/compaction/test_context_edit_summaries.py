"""Compaction and branch summaries summarise the conversation as its context edits left it (pi 1.6):
an omitted message is not sent to the summariser, a replaced one is sent as replaced."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.ai.types import AssistantMessage, TextContent, UserMessage
from tau.compaction import prepare_branch_entries
from tau.modes.rpc_client import RpcClient
from tau.session.manager import SessionManager
from tau.testing.fake_llm import Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def _message(id: str, role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        message |= {
            "api": "openai-completions", "provider": "local", "model": "fake-model", "stopReason": "stop",
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0, "cost": zero},
        }  # fmt: skip
    return {"type": "message", "id": id, "message": message}


def _edit(id: str, target: str, replacement: Any) -> dict[str, Any]:
    return {"type": "context_edit", "id": id, "targetId": target, "replacement": replacement}


def _session_file(tau: TauCommand) -> Path:
    """A pi 1.x session whose first question was replaced and whose first answer was omitted."""
    entries = [
        _message("u1", "user", "ORIGINAL QUESTION " + "q" * 400),
        _message("a1", "assistant", "OMITTED ANSWER " + "a" * 400),
        _message("u2", "user", "second question " + "q" * 400),
        _message("a2", "assistant", "second answer " + "a" * 400),
        _edit("x1", "u1", {"content": "REPLACED QUESTION"}),
        _edit("x2", "a1", None),
        _message("u3", "user", "third question"),
        _message("a3", "assistant", "third answer"),
    ]
    header = {"type": "session", "version": 3, "id": "pi-s1", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(tau.work)}  # fmt: skip
    lines, parent = [header], None
    for entry in entries:
        lines.append({**entry, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"})
        parent = entry["id"]
    path = tau.work.parent / "pi-session.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_compaction_summarises_the_edited_conversation(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    session = _session_file(tau)
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "--session", str(session)]
    tau.server.add(Turn(text="## Goal\nthe summary"), Turn(text="## Goal\nthe prefix"))
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        data = await rpc.call("compact")
    assert "the summary" in data["summary"]
    sent = "".join(json.dumps(request.body) for request in tau.server.requests)
    assert "REPLACED QUESTION" in sent and "second question" in sent
    assert "ORIGINAL QUESTION" not in sent
    assert "OMITTED ANSWER" not in sent


def test_a_branch_summary_leaves_out_what_an_edit_omitted(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    first = manager.append_message(UserMessage("ORIGINAL QUESTION"))
    answer = manager.append_message(
        AssistantMessage([TextContent("OMITTED ANSWER")], api="x", provider="p", model="m")
    )
    manager.append_context_edit(first, {"content": "REPLACED QUESTION"})
    manager.append_context_edit(answer, None)
    [message] = prepare_branch_entries(manager.get_entries()).messages
    assert isinstance(message, UserMessage)
    assert message.content == "REPLACED QUESTION"

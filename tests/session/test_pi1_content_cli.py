"""Content pi 1.x writes into session files, through the real `tau` continuing such a file: context
edits shape what is sent (an edit of a missing entry is ignored with a warning), usage records and
the usage of summaries count in the RPC totals, and an AGENTS.override.md takes its folder's AGENTS.md place."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def _usage(input: int, output: int, cost: float) -> dict[str, Any]:
    return {
        "input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }  # fmt: skip


def _message(id: str, role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1}
    if role == "assistant":
        message |= {"api": "openai-completions", "provider": "local", "model": "fake-model",
                    "stopReason": "stop", "usage": _usage(10, 5, 0.5)}  # fmt: skip
    return {"type": "message", "id": id, "message": message}


def _pi_session(tau: TauCommand, entries: list[dict[str, Any]] | None = None) -> Path:
    entries = entries or [
        _message("u1", "user", "first question"),
        _message("a1", "assistant", "A WRONG ANSWER"),
        {"type": "context_edit", "id": "x1", "targetId": "a1", "replacement": None},
        {"type": "context_edit", "id": "x2", "targetId": "gone", "replacement": None},
        _message("u2", "user", "SECRET-TOKEN-123"),
        {"type": "context_edit", "id": "x3", "targetId": "u2", "replacement": {"content": "[redacted]"}},
        _message("a2", "assistant", "second answer"),
        {"type": "usage", "id": "w1", "kind": "cache_warm", "provider": "local", "model": "fake-model",
         "usage": _usage(100, 0, 2.0)},
    ]  # fmt: skip
    header = {"type": "session", "version": 3, "id": "pi-s", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(tau.work)}  # fmt: skip
    lines, parent = [header], None
    for entry in entries:
        lines.append({**entry, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z"})
        parent = entry["id"]
    path = tau.work.parent / "pi.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_continuing_a_file_with_context_edits_sends_the_edited_conversation(tau: TauCommand) -> None:
    session = _pi_session(tau)
    tau.server.add(Turn(text="third answer"))
    result = tau.run(*MODEL, "--session", str(session), "-p", "next question")
    assert result.returncode == 0, result.stderr
    sent = [m for m in tau.server.last_request.body["messages"] if m["role"] != "system"]
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in sent]
    assert texts == ["first question", "[redacted]", "second answer", "next question"]
    warnings = [line for line in result.stderr.splitlines() if "context edit" in line]
    assert warnings == [
        f"tau: warning: {session}: context edit x2 targets entry gone, which is not in the file; ignored"
    ]


async def test_usage_records_count_in_the_rpc_session_totals(tau: TauCommand) -> None:
    session = _pi_session(tau)
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "--session", str(session)]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        stats = await rpc.call("get_session_stats")
    assert stats["tokens"]["input"] == 10 + 10 + 100  # both replies and the cache-warming record
    assert stats["cost"] == 0.5 + 0.5 + 2.0


async def test_the_usage_of_compaction_and_branch_summaries_counts_in_the_rpc_session_totals(
    tau: TauCommand,
) -> None:
    session = _pi_session(tau, [
        _message("u1", "user", "first question"),
        _message("a1", "assistant", "first answer"),
        {"type": "compaction", "id": "c1", "summary": "s", "firstKeptEntryId": "a1", "tokensBefore": 15,
         "usage": _usage(100, 20, 2.0)},
        {"type": "branch_summary", "id": "b1", "fromId": "c1", "summary": "t", "usage": _usage(7, 3, 4.0)},
    ])  # fmt: skip
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "--session", str(session)]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        stats = await rpc.call("get_session_stats")
    assert (stats["tokens"]["input"], stats["tokens"]["output"]) == (10 + 100 + 7, 5 + 20 + 3)
    assert stats["cost"] == 0.5 + 2.0 + 4.0
    # the file's messages, the compacted question too (pi 1.6), not the context left after it
    assert (stats["userMessages"], stats["assistantMessages"], stats["totalMessages"]) == (1, 1, 2)


def test_an_agents_override_md_reaches_the_model_in_place_of_agents_md(tau: TauCommand) -> None:
    (tau.work / "AGENTS.md").write_text("the ordinary instructions")
    (tau.work / "AGENTS.override.md").write_text("the overriding instructions")
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    system = json.dumps(tau.server.last_request.body["messages"][0])
    assert "the overriding instructions" in system
    assert "the ordinary instructions" not in system

"""A session handed from one API to another through the real `tau` process (tests only): the local
OpenAI-compatible model reads a file, then the API under test continues the session, reads a
second file itself and answers."""

from __future__ import annotations

import json
from typing import Any

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn


def read_turn(path: str, call_id: str | None = None) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("read", {"path": path}, id=call_id)])


def add_providers(tau: TauCommand, providers: dict[str, Any]) -> None:
    """Add (or replace) providers in the agent dir's models.json."""
    path = tau.agent_dir / "models.json"
    config = json.loads(path.read_text())
    config["providers"].update(providers)
    path.write_text(json.dumps(config))


def hand_off(tau: TauCommand, *target: str, api: str) -> list[RecordedRequest]:
    """Run the local turn, then continue with ``target``; return the target's requests."""
    (tau.work / "first.txt").write_text("alpha-content")
    (tau.work / "second.txt").write_text("beta-content")
    tau.server.add(read_turn("first.txt", "call_local_1"), Turn(text="Read the first."))
    first = tau.run(*MODEL, "-p", "read first.txt")
    assert first.returncode == 0, first.stderr
    tau.server.add(read_turn("second.txt"), Turn(text="Both files read."))
    result = tau.run(*target, "-c", "-p", "now read second.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Both files read.\n"
    requests = [r for r in tau.server.requests if r.api == api]
    assert len(requests) == 2
    assert "alpha-content" in json.dumps(requests[0].body)  # the other API's tool result came along
    assert "beta-content" in json.dumps(requests[1].body)  # and this API's own tool ran
    return requests

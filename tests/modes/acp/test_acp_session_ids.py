"""ACP ``session/load`` takes a session id, never a path (issue #30 §2): a file elsewhere whose header
carries its own path as its id is not opened."""

from __future__ import annotations

import json

from acp import PROTOCOL_VERSION
from acp_client import RawAcp
from tau_command import TauCommand


def test_a_session_id_that_is_a_path_to_a_planted_file_is_not_found(tau: TauCommand) -> None:
    planted = tau.work.parent / "planted" / "forged.jsonl"
    planted.parent.mkdir()
    header = {
        "type": "session",
        "version": 3,
        "id": str(planted),
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": str(tau.work),
    }
    message = {
        "type": "message",
        "id": "a1b2c3d4",
        "parentId": None,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "forged turn"}], "timestamp": 0},
    }
    before = json.dumps(header) + "\n" + json.dumps(message) + "\n"
    planted.write_text(before)
    raw = RawAcp(tau)
    raw.call("initialize", {"protocolVersion": PROTOCOL_VERSION})
    for session_id in (str(planted), "../planted/forged.jsonl", "..", "a\\b"):
        load = {"cwd": str(tau.work), "sessionId": session_id, "mcpServers": []}
        error = raw.call("session/load", load)["error"]
        assert (error["code"], error["data"]) == (-32002, {"uri": session_id})
    raw.close()
    assert planted.read_text() == before
    assert tau.session_files() == []

"""RPC mode fed garbage: every line gets a response (an error for a bad one), stdout stays JSON lines,
no traceback, and end of input ends tau with exit 0. One real process takes all the lines."""

from __future__ import annotations

import json
from typing import Any

from fault_campaign import TALLY, Campaign, Outcome
from tau_command import MODEL

COMMANDS = [
    "prompt", "steer", "follow_up", "abort", "clear_queue", "new_session", "get_state", "get_messages",
    "set_model", "cycle_model", "get_available_models", "set_thinking_level", "cycle_thinking_level",
    "get_available_thinking_levels", "set_steering_mode", "set_follow_up_mode", "compact",
    "set_auto_compaction", "set_auto_retry", "abort_retry", "bash", "abort_bash", "get_session_stats",
    "export_html", "switch_session", "fork", "clone", "get_fork_messages", "get_entries", "get_tree",
    "get_last_assistant_text", "set_session_name", "get_commands",
]  # fmt: skip

# Every field any command reads, each of a wrong type.
WRONG_FIELDS: dict[str, Any] = {
    "message": 5,
    "images": "not a list",
    "provider": {"a": 1},
    "modelId": [1],
    "level": 7,
    "mode": None,
    "customInstructions": ["x"],
    "enabled": "yes",
    "command": {"rm": True},
    "outputPath": 5,
    "sessionPath": 5,
    "entryId": [],
    "name": {"n": 1},
    "since": "yesterday",
    "excludeFromContext": "no",
}

GARBAGE_LINES: list[bytes] = [
    b"not json",
    b"{",
    b"[]",
    b"null",
    b"42",
    b'"prompt"',
    b"{}",
    b'{"type": 5}',
    b'{"type": null}',
    b'{"type": "teleport"}',
    b'{"type": "prompt"}',
    b'{"type": ["prompt"]}',
    b'{"id": {"nested": 1}, "type": "get_state"}',
    b'{"type": "get_state", "id": ' + b"9" * 400 + b"}",
    b"\xff\xfe\x00\x01 binary",
    b'{"type": "prompt", "message": "\xff"}',
    b"[" * 50_000 + b"]" * 50_000,
    b'{"type": "get_state", "x": "' + b"a" * 2_000_000 + b'"}',
    b'{"type":"extension_ui_response","id":"nobody-asked","value":5}',
    b'{"type":"extension_ui_response"}',
]


def command_lines() -> list[bytes]:
    lines = list(GARBAGE_LINES)
    for command in COMMANDS:
        lines.append(json.dumps({"type": command, "id": f"{command}-bare"}).encode())
        lines.append(json.dumps({"type": command, "id": f"{command}-wrong", **WRONG_FIELDS}).encode())
    return lines


def test_garbage_commands_each_get_an_answer(campaign: Campaign) -> None:
    lines = command_lines()
    outcome = campaign.process("--mode", "rpc", *MODEL, stdin=b"\n".join(lines) + b"\n", timeout=60)
    TALLY.bad_inputs += len(lines) - 1
    campaign.check(Outcome(outcome.code, outcome.stdout, outcome.stderr, hung=outcome.hung), codes=(0,))
    out = [json.loads(line) for line in outcome.stdout.splitlines() if line.strip()]
    assert all(isinstance(item, dict) for item in out)
    responses = [item for item in out if item.get("type") == "response"]
    ids = [r.get("id") for r in responses]
    for command in COMMANDS:
        assert f"{command}-bare" in ids and f"{command}-wrong" in ids, command
    # extension_ui_response lines answer nobody: the rest each get a response.
    assert len(responses) >= len(lines) - 2
    for path in campaign.session_files():
        for line in path.read_text().splitlines():
            assert isinstance(json.loads(line), dict)

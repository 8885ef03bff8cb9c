"""Damaged session files: tau opens them, skips what it cannot read, loses nothing, never crashes."""

from __future__ import annotations

import json
import os

import pytest
from fault_campaign import Campaign, count_lost, damaged_session, reopen_and_continue
from tau_command import MODEL

from tau.testing.fake_llm import Turn

ENTRY = {"id": "e1", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}


def entry(kind: str, **fields: object) -> bytes:
    return json.dumps({"type": kind, **ENTRY, **fields}).encode()


def message(msg: object) -> bytes:
    return entry("message", message=msg)


# Lines that are not session entries, or are entries with impossible fields. Each goes into the
# middle of a real session, between its user message and the reply.
BAD_LINES: dict[str, bytes] = {
    "open-brace": b"{",
    "close-brace": b"}",
    "half-object": b'{"type":"message","id":"x","parentId":',
    "json-array": b"[]",
    "json-null": b"null",
    "json-number": b"42",
    "json-string": b'"message"',
    "json-true": b"true",
    "nan-literal": b'{"type":"message","x":NaN}',
    "infinity-literal": b'{"type":"message","x":Infinity}',
    "trailing-comma": b'{"type":"message",}',
    "single-quotes": b"{'type': 'message'}",
    "two-objects-on-a-line": b'{"type":"label"}{"type":"label"}',
    "empty-object": b"{}",
    "type-number": b'{"type":5,"id":"x"}',
    "type-null": b'{"type":null}',
    "type-unknown": entry("teleport"),
    "type-list": b'{"type":["message"]}',
    "id-number": b'{"type":"message","id":5,"parentId":null,"timestamp":"t","message":{"role":"user","content":"x"}}',
    "id-missing": b'{"type":"message","parentId":null,"message":{"role":"user","content":"x"}}',
    "id-duplicate-of-header": entry("label", id="x", targetId="x", label="dup"),
    "parent-self": json.dumps(
        {"type": "label", "id": "loop", "parentId": "loop", "timestamp": "t", "targetId": "loop"}
    ).encode(),
    "parent-unknown": entry("session_info", parentId="nowhere", name="orphan"),
    "parent-number": entry("session_info", parentId=7, name="x"),
    "timestamp-number": entry("session_info", timestamp=1.5, name="x"),
    "timestamp-garbage": entry("session_info", timestamp="yesterday-ish", name="x"),
    "message-missing": entry("message"),
    "message-null": message(None),
    "message-string": message("hello"),
    "message-list": message([1, 2]),
    "role-missing": message({"content": "x"}),
    "role-unknown": message({"role": "wizard", "content": "x"}),
    "role-number": message({"role": 3, "content": "x"}),
    "user-content-number": message({"role": "user", "content": 5}),
    "user-content-null": message({"role": "user", "content": None}),
    "user-content-object": message({"role": "user", "content": {"text": "x"}}),
    "user-content-list-of-numbers": message({"role": "user", "content": [1, 2, 3]}),
    "user-block-type-unknown": message({"role": "user", "content": [{"type": "hologram"}]}),
    "user-text-block-without-text": message({"role": "user", "content": [{"type": "text"}]}),
    "user-text-block-text-number": message({"role": "user", "content": [{"type": "text", "text": 5}]}),
    "user-image-bad-base64": message(
        {"role": "user", "content": [{"type": "image", "data": "!!!", "mimeType": "image/png"}]}
    ),
    "user-image-no-mime": message({"role": "user", "content": [{"type": "image", "data": "AAAA"}]}),
    "assistant-content-string": message({"role": "assistant", "content": "x"}),
    "assistant-usage-strings": message(
        {"role": "assistant", "content": [], "usage": {"input": "ten", "output": None, "cost": "free"}}
    ),
    "assistant-usage-negative": message(
        {"role": "assistant", "content": [], "usage": {"input": -5, "output": -1, "totalTokens": -6}}
    ),
    "assistant-stop-reason-unknown": message({"role": "assistant", "content": [], "stopReason": "gave-up"}),
    "assistant-tool-call-arguments-string": message(
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "read", "arguments": "{"}]}
    ),
    "assistant-tool-call-no-name": message(
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "arguments": {}}]}
    ),
    "assistant-thinking-number": message(
        {"role": "assistant", "content": [{"type": "thinking", "thinking": 1}]}
    ),
    "tool-result-orphan": message(
        {"role": "toolResult", "toolCallId": "nope", "toolName": "read", "content": [], "isError": False}
    ),
    "tool-result-content-string": message(
        {"role": "toolResult", "toolCallId": "c", "toolName": "read", "content": "x", "isError": "yes"}
    ),
    "bash-execution-fields-wrong": message(
        {"role": "bashExecution", "command": 5, "output": None, "exitCode": "x"}
    ),
    "custom-message-content-number": entry("custom_message", customType="x", content=5, display="yes"),
    "thinking-level-unknown": entry("thinking_level_change", thinkingLevel="ludicrous"),
    "thinking-level-number": entry("thinking_level_change", thinkingLevel=9),
    "model-change-numbers": entry("model_change", provider=1, modelId=2),
    "model-change-unknown-model": entry("model_change", provider="nowhere", modelId="nothing"),
    "compaction-unknown-first-kept": entry(
        "compaction", summary="s", firstKeptEntryId="missing", tokensBefore=10
    ),
    "compaction-summary-number": entry("compaction", summary=5, firstKeptEntryId=None, tokensBefore="x"),
    "branch-summary-no-from": entry("branch_summary", summary="s"),
    "label-target-unknown": entry("label", targetId="ghost", label="boo"),
    "label-number": entry("label", targetId="e1", label=5),
    "session-info-name-object": entry("session_info", name={"a": 1}),
    "custom-entry-data-huge-nesting-shallow": entry("custom", customType="x", data=[[[[[[[[[[1]]]]]]]]]]),
    "second-header": b'{"type":"session","version":3,"id":"other","timestamp":"t","cwd":"/"}',
    "lone-surrogate-escape": message({"role": "user", "content": "\ud800"}),
    "nul-bytes": b"\x00\x00\x00",
    "nul-inside-json-string": b'{"type":"session_info","name":"a\\u0000b","id":"n","parentId":null,"timestamp":"t"}',
    "invalid-utf8": b'{"type":"session_info","name":"\xff\xfe\xfa"}',
    "invalid-utf8-bare": b"\xc3\x28\xa0\xa1\xe2\x28\xa1",
    "utf8-bom": b"\xef\xbb\xbf" + entry("session_info", name="bom"),
    "carriage-return": entry("session_info", name="crlf") + b"\r",
    "control-characters": b"\x1b[2J\x1b[31mred\x07",
    "binary-noise": bytes(range(256)) * 4,
    "only-spaces-and-tabs": b" \t \t ",
    "huge-number": b'{"type":"session_info","name":"x","n":' + b"9" * 5000 + b"}",
    "huge-string-2mb": entry("session_info", name="x" * 2_000_000),
    "huge-line-not-json-8mb": b"x" * 8_000_000,
    "many-keys": json.dumps({"type": "custom", **ENTRY, **{f"k{i}": i for i in range(20_000)}}).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_damaged_line_is_skipped_and_kept(campaign: Campaign, name: str) -> None:
    path, before = damaged_session(campaign, BAD_LINES[name])
    reopen_and_continue(campaign, path, before)


# Whole files that are not sessions: tau starts afresh in the same path and keeps the old bytes
# beside it (``<file>.invalid``), or reads what it can.
WHOLE_FILES: dict[str, bytes] = {
    "empty": b"",
    "only-newlines": b"\n\n\n\n",
    "binary": os.urandom(0) + bytes((i * 37 + 11) % 256 for i in range(65_536)),
    "a-png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 200,
    "gzip": b"\x1f\x8b\x08\x00" + b"\x00" * 100,
    "json-array-of-entries": b'[{"type":"session","version":3,"id":"x"}]',
    "header-without-id": b'{"type":"session","version":3}\n',
    "header-id-number": b'{"type":"session","version":3,"id":5,"timestamp":"t","cwd":"/"}\n',
    "header-version-99": b'{"type":"session","version":99,"id":"v99","timestamp":"t","cwd":"."}\n',
    "header-version-string": b'{"type":"session","version":"3","id":"vs","timestamp":"t","cwd":"."}\n',
    "header-cwd-number": b'{"type":"session","version":3,"id":"cn","timestamp":"t","cwd":5}\n',
    "header-only-no-newline": b'{"type":"session","version":3,"id":"nn","timestamp":"t","cwd":"."}',
    "entry-before-header": entry("session_info", name="first")
    + b'\n{"type":"session","version":3,"id":"late","timestamp":"t","cwd":"."}\n',
    "crlf-line-endings": b'{"type":"session","version":3,"id":"crlf","timestamp":"t","cwd":"."}\r\n'
    + entry("session_info", name="x")
    + b"\r\n",
    "text-file": b"hello, this is not a session\nat all\n",
}


@pytest.mark.parametrize("name", sorted(WHOLE_FILES))
def test_a_file_that_is_not_a_session_is_opened_or_refused_without_losing_it(
    campaign: Campaign, name: str
) -> None:
    path = campaign.work / "odd.jsonl"
    data = WHOLE_FILES[name]
    path.write_bytes(data)
    campaign.server.add(Turn(text="answer"))
    outcome = campaign.run_check(*MODEL, "--session", str(path), "-p", "question", max_error_lines=20)
    after = path.read_bytes()
    backups = sorted(campaign.work.glob("odd.jsonl.invalid*"))
    blank = not data.strip()
    kept = blank or after.startswith(data) or any(b.read_bytes() == data for b in backups)
    assert kept, f"the old content is gone: {after[:300]!r}"
    # Either tau opens it (keeping the old content) or refuses it in one line, leaving it untouched.
    assert outcome.code == 0 or (outcome.code == 1 and after == data), outcome.stderr


# Old (version 1 and 2) files are migrated in place: every line stays, gaining ids and parents.
OLD_FILES: dict[str, bytes] = {
    "v1-bad-entries": b'{"type":"session","id":"old","timestamp":"t","cwd":"."}\n'
    + b'{"type":"message","message":5}\n{"type":"message"}\n{"type":7}\n[1]\n',
    "version-negative": b'{"type":"session","version":-1,"id":"vn","timestamp":"t","cwd":"."}\n'
    + message({"role": "user", "content": 5})
    + b"\n",
    "v2-broken-tree": b'{"type":"session","version":2,"id":"v2","timestamp":"t","cwd":"."}\n'
    + entry("message", id="a", parentId="a", message={"role": "user", "content": "x"})
    + b"\n"
    + entry("compaction", id="b", parentId="zz", summary=3, firstKeptEntryIndex="x")
    + b"\n",
}


@pytest.mark.parametrize("name", sorted(OLD_FILES))
def test_an_old_damaged_file_is_migrated_keeping_every_line(campaign: Campaign, name: str) -> None:
    path = campaign.work / "old.jsonl"
    data = OLD_FILES[name]
    path.write_bytes(data)
    campaign.server.add(Turn(text="answer"))
    outcome = campaign.run_check(*MODEL, "--session", str(path), "-p", "question", max_error_lines=20)
    assert outcome.code == 0
    after = path.read_bytes().split(b"\n")
    for line in data.split(b"\n"):
        old = parse(line)
        if isinstance(old, dict):
            for key in ("version", "id", "parentId"):  # what a migration sets
                old.pop(key, None)
            assert any(_holds(parse(new), old) for new in after), f"lost {line!r}"
        elif line.strip():
            assert line in after, f"lost {line!r}"


def parse(line: bytes) -> object:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _holds(new: object, old: dict[str, object]) -> bool:
    return isinstance(new, dict) and all(new.get(k) == v for k, v in old.items())


def test_many_damaged_lines_in_one_file_in_a_real_process(campaign: Campaign) -> None:
    """Every damaged line at once, through the real ``tau`` process."""
    path = campaign.seed_session()
    lines = path.read_bytes().split(b"\n")
    bad = [line for name, line in sorted(BAD_LINES.items()) if len(line) < 100_000]
    data = b"\n".join([*lines[:2], *bad, *lines[2:]])
    path.write_bytes(data)
    campaign.server.add(Turn(text="second answer"))
    outcome = campaign.process_check(
        *MODEL, "--session", str(path), "-p", "second question", max_error_lines=200
    )
    assert outcome.code == 0
    assert "first question" in json.dumps(campaign.server.last_request.body["messages"])
    assert count_lost(data, path.read_bytes()) == 0

"""Reading damaged files: skipped lines are reported and kept; invalid files are recovered, not lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.session import IdSource, SessionFileError, SessionManager, UnknownEntry
from tau.session.jsonl import read_session_file

Copy = Callable[[str], Path]


def test_a_malformed_middle_line_is_skipped_with_a_warning(
    fixture_copy: Copy, ids: IdSource
) -> None:  # 13.14
    manager = SessionManager.open(str(fixture_copy("corrupt_lines.jsonl")), ids=ids)
    assert [e.id for e in manager.get_entries()] == ["aa11bb22", "cc33dd44"]
    assert [m.role for m in manager.build_session_context().messages] == ["user", "assistant"]
    assert len(manager.warnings) == 2  # the damaged middle line and the cut-off last line
    assert ":3:" in manager.warnings[0]


def test_damaged_lines_are_never_removed_and_appends_start_on_a_fresh_line(
    fixture_copy: Copy, ids: IdSource, msg: Any
) -> None:
    path = fixture_copy("corrupt_lines.jsonl")
    before = path.read_bytes()
    manager = SessionManager.open(str(path), ids=ids)
    assert path.read_bytes() == before
    new_id = manager.append_message(msg.user("and the tests?"))
    after = path.read_bytes()
    assert after.startswith(before + b"\n")
    assert json.loads(after.decode().splitlines()[-1])["id"] == new_id
    reopened = SessionManager.open(str(path), ids=ids)
    assert [e.id for e in reopened.get_entries()] == ["aa11bb22", "cc33dd44", new_id]


def test_a_file_without_a_header_is_recovered_with_a_fresh_header_at_the_same_path(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.15
    path = fixture_copy("headerless.jsonl")
    original = path.read_bytes()
    manager = SessionManager.open(str(path), ids=ids)
    assert manager.get_entries() == [] and manager.get_session_file() == str(path)
    header = read_jsonl(path)
    assert len(header) == 1 and header[0]["type"] == "session" and header[0]["id"] == manager.get_session_id()
    assert Path(f"{path}.invalid").read_bytes() == original  # the old content is kept aside, not lost
    assert SessionManager.open(str(path), ids=ids).get_session_id() == manager.get_session_id()


def test_an_empty_file_is_recovered_the_same_way(tmp_path: Path, ids: IdSource, msg: Any) -> None:  # 13.16
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    manager = SessionManager.open(str(path), ids=ids)
    assert len(path.read_text().splitlines()) == 1
    assert not Path(f"{path}.invalid").exists()
    manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    types = [json.loads(line)["type"] for line in path.read_text().splitlines()]
    assert types == ["session", "message", "message"]  # exactly one header, no duplicates
    assert SessionManager.open(str(path), ids=ids).get_session_id() == manager.get_session_id()


def test_reading_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match=r"Session file not found: .*nope\.jsonl"):
        read_session_file(str(tmp_path / "nope.jsonl"))


def test_a_garbage_first_line_before_the_header_is_tolerated(tmp_path: Path, ids: IdSource) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        "\x00\x00garbage\n"
        '{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"session_info","id":"11111111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"n"}\n'
    )
    manager = SessionManager.open(str(path), ids=ids)
    assert manager.get_session_id() == "abc" and manager.get_session_name() == "n"


def test_crlf_line_endings_and_blank_lines_are_harmless(tmp_path: Path, ids: IdSource) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(
        b'{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\r\n\r\n'
        b'{"type":"thinking_level_change","id":"11111111","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","thinkingLevel":"low"}\r\n'
    )
    manager = SessionManager.open(str(path), ids=ids)
    assert manager.build_session_context().thinking_level == "low"
    assert manager.warnings == []


def test_unknown_entry_types_and_unreadable_messages_stay_in_the_tree(tmp_path: Path, ids: IdSource) -> None:
    future = {"type": "checkpoint", "id": "22222222", "parentId": "11111111", "timestamp": "t", "sha": "abc"}
    odd = {
        "type": "message",
        "id": "33333333",
        "parentId": "22222222",
        "timestamp": "t",
        "message": {"role": "alien"},
    }
    path = tmp_path / "s.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "abc", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"},
        {"type": "message", "id": "11111111", "parentId": None, "timestamp": "t", "message": {"role": "user", "content": "hi", "timestamp": 1}},
        future,
        odd,
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    manager = SessionManager.open(str(path), ids=ids)
    checkpoint, alien = manager.get_entries()[1:]
    assert isinstance(checkpoint, UnknownEntry) and checkpoint.type == "checkpoint"
    assert checkpoint.to_json() == future and alien.to_json() == odd
    assert [e.id for e in manager.get_branch()] == ["11111111", "22222222", "33333333"]
    assert [m.role for m in manager.build_session_context().messages] == ["user"]


def test_content_blocks_of_unknown_types_are_dropped_from_the_message_not_the_message(
    tmp_path: Path, ids: IdSource
) -> None:
    path = tmp_path / "s.jsonl"
    message = {
        "role": "user",
        "content": [{"type": "text", "text": "hi"}, {"type": "audio", "data": "…"}],
        "timestamp": 1,
    }
    header = {
        "type": "session",
        "version": 3,
        "id": "abc",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    entry = {"type": "message", "id": "11111111", "parentId": None, "timestamp": "t", "message": message}
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    manager = SessionManager.open(str(path), ids=ids)
    [user] = manager.build_session_context().messages
    assert user.to_json()["content"] == [{"type": "text", "text": "hi"}]
    assert manager.get_entries()[0].to_json() == entry  # the file keeps the block


def test_entries_without_an_id_are_reported_and_left_in_the_file(tmp_path: Path, ids: IdSource) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","parentId":null,"timestamp":"t","message":{"role":"user","content":"x","timestamp":1}}\n'
    )
    before = path.read_bytes()
    manager = SessionManager.open(str(path), ids=ids)
    assert manager.get_entries() == [] and "without a string id" in manager.warnings[0]
    assert path.read_bytes() == before


def test_an_opened_session_keeps_its_cwd_unless_overridden(fixture_copy: Copy, ids: IdSource) -> None:
    path = str(fixture_copy("v3_session.jsonl"))
    assert SessionManager.open(path, ids=ids).get_cwd() == "/home/dana/src/weather-cli"
    assert SessionManager.open(path, cwd_override="/elsewhere", ids=ids).get_cwd() == "/elsewhere"
    assert SessionManager.open(path, ids=ids).get_session_dir() == str(Path(path).parent)


def test_a_line_with_an_escaped_lone_surrogate_is_read_and_written_back(
    tmp_path: Path, ids: IdSource
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"custom","customType":"e","data":"\\ud800","id":"11111111","parentId":null,"timestamp":"t"}\n'
    )
    manager = SessionManager.open(str(path), ids=ids)
    assert manager.warnings == [] and len(manager.get_entries()) == 1
    from tau.session.jsonl import dump_line

    assert dump_line(manager.get_entries()[0].to_json()).endswith(
        b'"data":"\\ud800","id":"11111111","parentId":null,"timestamp":"t"}\n'
    )


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        (
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}, "stray", {"type": "audio"}],
             "api": "a", "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 1},
            [{"type": "text", "text": "ok"}],
        ),
        (
            {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False, "timestamp": 1,
             "content": [{"type": "audio"}, {"type": "text", "text": "out"}]},
            [{"type": "text", "text": "out"}],
        ),
    ],
)  # fmt: skip
def test_replies_and_tool_results_keep_their_readable_blocks(
    tmp_path: Path, ids: IdSource, message: dict[str, Any], kept: list[dict[str, Any]]
) -> None:
    path = tmp_path / "s.jsonl"
    header = {
        "type": "session",
        "version": 3,
        "id": "abc",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    entry = {"type": "message", "id": "11111111", "parentId": None, "timestamp": "t", "message": message}
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    [read] = SessionManager.open(str(path), ids=ids).build_session_context().messages
    assert read.to_json()["content"] == kept

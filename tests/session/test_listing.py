"""Names, the session listing, -c, and --session <id prefix>."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tau.session import (
    IdSource,
    SessionManager,
    SessionNotFoundError,
    build_session_info,
    default_session_dir,
    find_most_recent_session,
    find_session,
    list_all_sessions,
    list_sessions,
)


def write_session(path: Path, entries: list[dict[str, Any]], header: dict[str, Any] | None = None) -> Path:
    header = header or {
        "type": "session",
        "version": 3,
        "id": path.stem,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in [header, *entries]))
    return path


def message(entry_id: str, role: str, text: str, ts: int | None, parent: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"role": role, "content": [{"type": "text", "text": text}]}
    if role == "toolResult":
        body.update(toolCallId="c", toolName="read", isError=False)
    if ts is not None:
        body["timestamp"] = ts
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-02T00:00:00.000Z",
        "message": body,
    }


def test_session_name_is_the_latest_and_an_empty_one_clears_it(ids: IdSource) -> None:  # 13.39
    manager = SessionManager.in_memory("/p", ids=ids)
    assert manager.get_session_name() is None
    manager.append_session_info("  First  ")
    manager.append_session_info("Second")
    assert manager.get_session_name() == "Second"
    manager.append_session_info("   ")
    assert manager.get_session_name() is None


def test_modified_is_the_newest_message_time_then_the_header_time(tmp_path: Path) -> None:  # 13.40
    path = write_session(
        tmp_path / "a.jsonl",
        [message("00000001", "user", "hi", 1_767_300_000_000), message("00000002", "assistant", "yo", 1_767_300_005_000, "00000001"),
         message("00000003", "toolResult", "out", 1_767_399_999_999, "00000002")],
    )  # fmt: skip
    os.utime(path, (0, 0))
    info = build_session_info(str(path))
    assert info is not None
    assert info.modified == datetime.fromtimestamp(1_767_300_005, tz=UTC)  # tool results do not count
    empty = write_session(tmp_path / "b.jsonl", [])
    empty_info = build_session_info(str(empty))
    assert empty_info is not None and empty_info.modified == datetime(2026, 1, 1, tzinfo=UTC)
    no_ts = write_session(tmp_path / "c.jsonl", [message("00000001", "user", "hi", None)])
    no_ts_info = build_session_info(str(no_ts))
    assert no_ts_info is not None and no_ts_info.modified == datetime(2026, 1, 2, tzinfo=UTC)


def test_first_message_and_message_count(tmp_path: Path) -> None:  # 13.41
    path = write_session(
        tmp_path / "a.jsonl",
        [message("00000001", "toolResult", "x", 1), {"type": "custom", "customType": "e", "id": "00000002", "parentId": None, "timestamp": "t"},
         {"type": "message", "id": "00000003", "parentId": None, "timestamp": "t", "message": {"role": "bashExecution", "command": "ls", "output": "", "exitCode": 0, "cancelled": False, "truncated": False, "timestamp": 2}}],
    )  # fmt: skip
    info = build_session_info(str(path))
    assert info is not None and info.first_message == "(no messages)" and info.message_count == 2
    path = write_session(
        tmp_path / "b.jsonl",
        [message("00000001", "assistant", "hello", 1), message("00000002", "user", "first question", 2),
         message("00000003", "user", "second", 3),
         {"type": "session_info", "id": "00000004", "parentId": None, "timestamp": "t", "name": " Named "}],
    )  # fmt: skip
    info = build_session_info(str(path))
    assert info is not None
    assert (info.first_message, info.message_count, info.name) == ("first question", 3, "Named")
    assert info.all_messages_text == "hello first question second"


def test_the_v3_fixture_lists_like_pi(fixture_copy: Callable[[str], Path]) -> None:
    path = fixture_copy("v3_session.jsonl")
    info = build_session_info(str(path))
    assert info is not None
    assert info.id == "019ad4f2-7c31-7e58-b1a0-5f2c8d9e4b71" and info.cwd == "/home/dana/src/weather-cli"
    assert info.name == "Chart labels: tick step fix"
    assert info.parent_session_path is not None and info.parent_session_path.endswith(".jsonl")
    assert info.message_count == 13
    assert info.first_message == "Here is the chart that renders wrong; the y axis labels overlap."
    assert info.created == datetime(2026, 1, 14, 10, 30, tzinfo=UTC)
    assert info.modified == datetime.fromtimestamp(1768388700.020, tz=UTC)


def test_list_sorts_by_activity_and_skips_invalid_files_and_list_all_scans_projects(
    tmp_path: Path,
) -> None:  # 13.42
    root = tmp_path / "agent"
    here = Path(default_session_dir("/work/a", str(root)))
    there = Path(default_session_dir("/work/b", str(root)))
    write_session(here / "old.jsonl", [message("00000001", "user", "old", 1_000)])
    write_session(here / "new.jsonl", [message("00000001", "user", "new", 9_000)])
    (here / "broken.jsonl").write_text('{"type":"message"}\n')
    (here / "notes.txt").write_text("ignored")
    write_session(there / "mid.jsonl", [message("00000001", "user", "mid", 5_000)])
    progress: list[tuple[int, int]] = []
    assert [i.first_message for i in list_sessions(str(here), lambda n, t: progress.append((n, t)))] == [
        "new",
        "old",
    ]
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert [i.first_message for i in list_all_sessions(str(root / "sessions"))] == ["new", "mid", "old"]
    assert list_sessions(str(tmp_path / "missing")) == []


def test_continue_recent_picks_the_newest_valid_file_by_mtime(tmp_path: Path, ids: IdSource) -> None:  # 13.43
    folder = tmp_path / "s"
    older = write_session(folder / "older.jsonl", [message("00000001", "user", "x", 99_999_999_999_999)])
    newer = write_session(folder / "newer.jsonl", [])
    (folder / "zz-no-header.jsonl").write_text('{"type":"message","id":"1"}\n')
    (folder / "zz.txt").write_text("{}")
    os.utime(older, (1_000, 1_000))
    os.utime(newer, (2_000, 2_000))
    os.utime(folder / "zz-no-header.jsonl", (3_000, 3_000))
    assert find_most_recent_session(str(folder)) == str(newer)
    manager = SessionManager.continue_recent("/p", str(folder), ids=ids)
    assert manager.get_session_file() == str(newer) and manager.get_session_id() == "newer"


def test_continue_recent_starts_fresh_when_there_is_nothing_to_continue(
    tmp_path: Path, ids: IdSource
) -> None:  # 13.43
    manager = SessionManager.continue_recent("/p", str(tmp_path / "none-yet"), ids=ids)
    assert manager.get_entries() == []
    assert os.path.dirname(manager.get_session_file() or "") == str(tmp_path / "none-yet")
    assert not Path(manager.get_session_file() or "").exists()


def test_session_argument_resolves_paths_local_then_global_prefixes(tmp_path: Path) -> None:  # 13.44
    agent = str(tmp_path / "agent")
    local_dir = Path(default_session_dir("/work/a", agent))
    other_dir = Path(default_session_dir("/work/b", agent))
    header = {"type": "session", "version": 3, "timestamp": "2026-01-01T00:00:00.000Z"}
    write_session(local_dir / "1.jsonl", [], {**header, "id": "abc-local", "cwd": "/work/a"})
    write_session(other_dir / "2.jsonl", [], {**header, "id": "abc-global", "cwd": "/work/b"})
    write_session(other_dir / "3.jsonl", [], {**header, "id": "xyz-global", "cwd": "/work/b"})
    found = find_session("abc", "/work/a", agent_dir=agent)
    assert (found.scope, found.path) == ("local", str(local_dir / "1.jsonl"))
    found = find_session("xyz", "/work/a", agent_dir=agent)
    assert (found.scope, found.cwd) == ("global", "/work/b")
    assert find_session("some/file.jsonl", "/work/a", agent_dir=agent).scope == "path"
    assert find_session("x.jsonl", "/work/a", agent_dir=agent).path == os.path.abspath("x.jsonl")
    with pytest.raises(SessionNotFoundError, match="No session found matching 'nomatch'"):
        find_session("nomatch", "/work/a", agent_dir=agent)


def test_listing_reads_only_what_it_needs_yet_counts_cut_off_lines_like_pi(tmp_path: Path) -> None:
    path = write_session(tmp_path / "a.jsonl", [message("00000001", "user", "q", 1)])
    with path.open("a") as f:
        f.write(
            '{"type":"message","id":"00000002","parentId":"00000001","timestamp":"t","message":{"role":"toolResult","content":[{"type":"te'
        )
    info = build_session_info(str(path))
    assert info is not None and info.message_count == 1


def test_listing_handles_entries_in_other_key_orders(tmp_path: Path) -> None:
    entry = {
        "message": {"timestamp": 5, "content": "reordered", "role": "user"},
        "type": "message",
        "id": "1",
        "parentId": None,
    }
    path = write_session(tmp_path / "a.jsonl", [entry])
    info = build_session_info(str(path))
    assert info is not None and (info.first_message, info.message_count) == ("reordered", 1)

"""Loading pi's version 1 and 2 files: migrated in memory and rewritten on disk as pi does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.session import (
    CompactionEntry,
    CustomMessage,
    IdSource,
    MessageEntry,
    SessionManager,
    migrate_objects,
)

Copy = Callable[[str], Path]


def test_v1_entries_get_ids_and_a_linear_chain_and_the_file_is_rewritten(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.10
    path = fixture_copy("v1_session.jsonl")
    manager = SessionManager.open(str(path), ids=ids)
    entries = manager.get_entries()
    assert len(entries) == 11
    assert entries[0].parent_id is None
    assert [e.parent_id for e in entries[1:]] == [e.id for e in entries[:-1]]
    on_disk = read_jsonl(path)
    assert on_disk[0]["version"] == 3
    assert [o["id"] for o in on_disk[1:]] == [e.id for e in entries]
    assert manager.get_leaf_id() == entries[-1].id


def test_v1_migration_appends_new_keys_and_keeps_old_ones_in_place(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:
    path = fixture_copy("v1_session.jsonl")
    original = read_jsonl(path)
    SessionManager.open(str(path), ids=ids)
    migrated = read_jsonl(path)
    assert list(migrated[0]) == [*original[0], "version"]
    assert list(migrated[1]) == [*original[1], "id", "parentId"]
    # The message payloads are byte-for-byte what pi wrote (old usage without totalTokens included).
    assert migrated[2]["message"] == original[2]["message"]
    assert "totalTokens" not in migrated[2]["message"]["usage"]


def test_v1_compaction_index_becomes_the_id_of_that_raw_line(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.11
    path = fixture_copy("v1_session.jsonl")
    manager = SessionManager.open(str(path), ids=ids)
    compaction = next(e for e in manager.get_entries() if isinstance(e, CompactionEntry))
    line_7 = read_jsonl(path)[7]
    assert compaction.first_kept_entry_id == line_7["id"]
    assert line_7["message"]["content"][0]["text"] == "Fix it and add a test."
    on_disk = next(o for o in read_jsonl(path) if o["type"] == "compaction")
    assert "firstKeptEntryIndex" not in on_disk
    assert list(on_disk)[-1] == "firstKeptEntryId"


def test_v2_hook_message_becomes_a_custom_message(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.12
    path = fixture_copy("v2_session.jsonl")
    original = read_jsonl(path)
    manager = SessionManager.open(str(path), ids=ids)
    hook = manager.get_entry("a4c8f213")
    assert isinstance(hook, MessageEntry) and isinstance(hook.message, CustomMessage)
    assert hook.message.custom_type == "todo-reminder"
    migrated = read_jsonl(path)
    assert migrated[0]["version"] == 3
    assert [o.get("id") for o in migrated] == [o.get("id") for o in original]  # v2 ids untouched
    assert migrated[8]["message"]["role"] == "custom"
    assert list(migrated[8]["message"]) == list(original[8]["message"])


def test_migration_is_idempotent_on_version_3(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.12
    path = fixture_copy("v3_session.jsonl")
    before = path.read_bytes()
    objects = read_jsonl(path)
    assert migrate_objects(objects, ids.entry_id) is False
    assert objects == read_jsonl(path)
    SessionManager.open(str(path), ids=ids)
    assert path.read_bytes() == before


def test_migrating_twice_changes_nothing_the_second_time(fixture_copy: Copy, ids: IdSource) -> None:
    path = fixture_copy("v1_session.jsonl")
    SessionManager.open(str(path), ids=ids)
    once = path.read_bytes()
    SessionManager.open(str(path), ids=ids)
    assert path.read_bytes() == once


def test_unknown_header_keys_survive_the_rewrite(
    fixture_copy: Copy, ids: IdSource, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:  # 13.13
    path = fixture_copy("v1_session.jsonl")
    manager = SessionManager.open(str(path), ids=ids)
    header = read_jsonl(path)[0]
    assert header["provider"] == "anthropic" and header["modelId"] == "claude-sonnet-4-5"
    assert header["thinkingLevel"] == "off" and header["branchedFrom"].endswith(".jsonl")
    assert manager.get_header().to_json() == header


def test_corrupt_lines_stay_in_place_when_a_migration_rewrites_the_file(
    tmp_path: Path, ids: IdSource
) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(
        '{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}\n'
        '{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}\n'
        "not json at all\n"
        '{"type":"thinking_level_change","timestamp":"2025-01-01T00:00:02.000Z","thinkingLevel":"low"}\n'
    )
    manager = SessionManager.open(str(path), ids=ids)
    lines = path.read_text().splitlines()
    assert lines[2] == "not json at all"
    assert json.loads(lines[0])["version"] == 3
    assert [e.parent_id for e in manager.get_entries()] == [None, manager.get_entries()[0].id]
    assert any("not a JSON object" in w for w in manager.warnings)


def test_a_v1_compaction_pointing_at_the_header_or_nowhere_keeps_no_first_kept_id(ids: IdSource) -> None:
    objects: list[dict[str, Any]] = [
        {"type": "session", "id": "s", "timestamp": "t", "cwd": "/"},
        {"type": "compaction", "timestamp": "t", "summary": "a", "firstKeptEntryIndex": 0, "tokensBefore": 1},
        {
            "type": "compaction",
            "timestamp": "t",
            "summary": "b",
            "firstKeptEntryIndex": 99,
            "tokensBefore": 1,
        },
    ]
    assert migrate_objects(objects, ids.entry_id)
    assert "firstKeptEntryId" not in objects[1] and "firstKeptEntryIndex" not in objects[1]
    assert "firstKeptEntryId" not in objects[2]


def test_a_header_with_an_unreadable_version_is_not_migrated(ids: IdSource) -> None:
    objects: list[dict[str, Any]] = [
        {"type": "session", "version": "3", "id": "s", "timestamp": "t", "cwd": "/"},
        {
            "type": "message",
            "id": "keepme00",
            "parentId": None,
            "timestamp": "t",
            "message": {"role": "user"},
        },
    ]
    assert migrate_objects(objects, ids.entry_id) is False
    assert objects[1]["id"] == "keepme00"

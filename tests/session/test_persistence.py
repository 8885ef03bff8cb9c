"""Writing: lazy file creation, one appended line per entry, pi's exact shapes and key order."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.session import IdSource, SessionManager

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

# The key order pi writes for each line type (optional keys where they go when present).
PI_KEY_ORDER = {
    "session": ["type", "version", "id", "timestamp", "cwd", "parentSession"],
    "message": ["type", "id", "parentId", "timestamp", "message"],
    "thinking_level_change": ["type", "id", "parentId", "timestamp", "thinkingLevel"],
    "model_change": ["type", "id", "parentId", "timestamp", "provider", "modelId"],
    "compaction": [
        "type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook",
    ],
    "branch_summary": ["type", "id", "parentId", "timestamp", "fromId", "summary", "details", "fromHook"],
    "custom": ["type", "customType", "data", "id", "parentId", "timestamp"],
    "custom_message": ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
    "label": ["type", "id", "parentId", "timestamp", "targetId", "label"],
    "session_info": ["type", "id", "parentId", "timestamp", "name"],
}  # fmt: skip


def assert_pi_key_order(obj: dict[str, Any]) -> None:
    expected = [k for k in PI_KEY_ORDER[obj["type"]] if k in obj]
    assert list(obj) == expected


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture
def manager(tmp_path: Path, ids: IdSource) -> SessionManager:
    return SessionManager.create("/home/dana/proj", str(tmp_path / "sessions"), ids=ids)


def test_no_file_before_the_first_assistant_message(manager: SessionManager, msg: Any) -> None:  # 13.2
    manager.append_message(msg.user("hello"))
    manager.append_model_change("openai", "gpt-4o")
    manager.append_custom_entry("my-ext", {"n": 1})
    path = manager.get_session_file()
    assert path is not None and not Path(path).exists()


def test_first_assistant_writes_one_header_and_every_earlier_entry_in_order(
    manager: SessionManager, msg: Any
) -> None:  # 13.3
    first = [
        manager.append_model_change("anthropic", "claude-sonnet-4-5"),
        manager.append_thinking_level_change("off"),
        manager.append_message(msg.user("hello")),
        manager.append_custom_entry("my-ext"),
    ]
    reply = manager.append_message(msg.assistant("hi"))
    lines = [json.loads(line) for line in lines_of(Path(manager.get_session_file() or ""))]
    assert [o["type"] for o in lines].count("session") == 1
    assert lines[0]["type"] == "session"
    assert [o["id"] for o in lines[1:]] == [*first, reply]


def test_later_appends_add_exactly_one_line_each_chained_to_the_previous_leaf(
    manager: SessionManager, msg: Any
) -> None:  # 13.4
    manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    path = Path(manager.get_session_file() or "")
    for n in range(5):
        before = len(lines_of(path))
        leaf = manager.get_leaf_id()
        new_id = manager.append_message(msg.user(f"q{n}"))
        written = lines_of(path)
        assert len(written) == before + 1
        assert json.loads(written[-1])["parentId"] == leaf
        assert json.loads(written[-1])["id"] == new_id
    all_ids = [json.loads(line)["id"] for line in lines_of(path)]
    assert len(set(all_ids)) == len(all_ids)


def test_appends_never_rewrite_earlier_bytes(manager: SessionManager, msg: Any) -> None:
    manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    path = Path(manager.get_session_file() or "")
    before = path.read_bytes()
    manager.append_label_change(manager.get_entries()[0].id, "start")
    assert path.read_bytes().startswith(before)


def test_in_memory_session_never_touches_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, msg: Any, ids: IdSource
) -> None:  # 13.5
    monkeypatch.chdir(tmp_path)
    manager = SessionManager.in_memory("/proj", ids=ids)
    user = manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    manager.append_label_change(user, "x")
    assert manager.get_session_file() is None
    assert not manager.is_persisted()
    assert [m.role for m in manager.build_session_context().messages] == ["user", "assistant"]
    assert manager.create_branched_session(user) is None
    assert list(tmp_path.iterdir()) == []


def test_new_header_is_version_3_with_string_id_iso_timestamp_and_cwd(
    manager: SessionManager, msg: Any
) -> None:  # 13.6
    manager.append_message(msg.assistant("a"))
    header = json.loads(lines_of(Path(manager.get_session_file() or ""))[0])
    assert header["version"] == 3 and isinstance(header["id"], str)
    assert ISO.match(header["timestamp"]) and header["cwd"] == "/home/dana/proj"
    assert "parentSession" not in header
    assert_pi_key_order(header)


def test_real_session_ids_are_uuid_v7(tmp_path: Path) -> None:
    session_id = SessionManager.create("/p", str(tmp_path)).get_session_id()
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", session_id)


def test_new_session_accepts_a_caller_id(manager: SessionManager, msg: Any) -> None:  # 13.7
    path = manager.new_session(id="my-custom-id")
    assert manager.get_session_id() == "my-custom-id"
    assert path is not None and path.endswith("_my-custom-id.jsonl")
    manager.append_message(msg.assistant("a"))
    assert json.loads(lines_of(Path(path))[0])["id"] == "my-custom-id"


def test_new_session_records_the_parent_session(manager: SessionManager, msg: Any) -> None:
    manager.new_session(parent_session="/old/file.jsonl")
    manager.append_message(msg.assistant("a"))
    header = json.loads(lines_of(Path(manager.get_session_file() or ""))[0])
    assert header["parentSession"] == "/old/file.jsonl"
    assert_pi_key_order(header)


def test_entry_ids_are_eight_lowercase_hex_chars_and_never_collide(tmp_path: Path, msg: Any) -> None:  # 13.8
    repeating = iter(["deadbeef-0000", "deadbeef-0000", "deadbeef-0000", "cafef00d-0000"] * 3)
    manager = SessionManager.in_memory("/p", ids=IdSource(random_uuid=lambda: next(repeating)))
    first = manager.append_message(msg.user("a"))
    second = manager.append_message(msg.user("b"))
    assert (first, second) == ("deadbeef", "cafef00d")
    real = SessionManager.in_memory("/p")
    for n in range(200):
        real.append_message(msg.user(str(n)))
    real_ids = [e.id for e in real.get_entries()]
    assert all(re.fullmatch(r"[0-9a-f]{8}", i) for i in real_ids)
    assert len(set(real_ids)) == len(real_ids)


def test_a_full_uuid_is_used_after_a_hundred_collisions(msg: Any) -> None:
    manager = SessionManager.in_memory(
        "/p", ids=IdSource(random_uuid=lambda: "abcdef01-2345-4678-8abc-def012345678")
    )
    manager.append_message(msg.user("a"))
    assert manager.append_message(msg.user("b")) == "abcdef01-2345-4678-8abc-def012345678"


def test_unset_optional_fields_are_left_out(manager: SessionManager, msg: Any) -> None:  # 13.9
    user = manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    manager.append_compaction("sum", user, 1234)
    manager.append_label_change(user, "tag")
    manager.append_label_change(user)
    manager.append_custom_entry("ext")
    manager.append_custom_message_entry("ext", "text", True)
    manager.branch_with_summary(user, "went elsewhere")
    objects = [json.loads(line) for line in lines_of(Path(manager.get_session_file() or ""))]
    compaction, label_set, label_clear, custom, custom_message, summary = objects[3:]
    assert set(compaction) == {
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
    }
    assert label_set["label"] == "tag" and "label" not in label_clear
    assert "data" not in custom and "details" not in custom_message
    assert "details" not in summary and "fromHook" not in summary


def test_every_line_has_pi_key_order_and_round_trips(
    manager: SessionManager, msg: Any, read_jsonl: Callable[[Path], list[dict[str, Any]]]
) -> None:
    user = manager.append_message(msg.user("q"))
    manager.append_thinking_level_change("high")
    manager.append_model_change("openai", "gpt-4o")
    manager.append_message(msg.tool_call("c1", "read", {"path": "a.py"}))
    manager.append_message(msg.tool_result("c1", "read", "print(1)"))
    manager.append_message(msg.assistant("done"))
    manager.append_compaction("sum", user, 99, {"readFiles": ["a.py"], "modifiedFiles": []}, True)
    manager.append_custom_entry("ext", {"k": [1, 2]})
    manager.append_custom_message_entry("ext", "hello", False, {"d": 1})
    manager.append_label_change(user, "start")
    manager.append_session_info("  My session  ")
    manager.branch_with_summary(None, "root summary", {"readFiles": [], "modifiedFiles": []}, False)
    path = Path(manager.get_session_file() or "")
    raw_lines = lines_of(path)
    for line, obj in zip(raw_lines, read_jsonl(path), strict=True):
        assert_pi_key_order(obj)
        assert json.dumps(obj, ensure_ascii=False, separators=(",", ":")) == line
    in_memory = [manager.get_header().to_json(), *(e.to_json() for e in manager.get_entries())]
    assert read_jsonl(path) == in_memory
    assert read_jsonl(path)[-2]["name"] == "My session"


def test_a_missing_session_path_is_written_there_once_the_model_answers(
    tmp_path: Path, msg: Any, ids: IdSource
) -> None:  # 13.17
    target = tmp_path / "picked" / "new.jsonl"
    manager = SessionManager.open(str(target), ids=ids)
    manager.append_message(msg.user("q"))
    assert not target.exists()
    manager.append_message(msg.assistant("a"))
    assert manager.get_session_file() == str(target)
    assert [json.loads(line)["type"] for line in lines_of(target)] == ["session", "message", "message"]


def test_non_ascii_text_is_written_as_is(manager: SessionManager, msg: Any) -> None:
    manager.append_message(msg.assistant("Grüße, 世界 — ✓"))
    text = Path(manager.get_session_file() or "").read_text(encoding="utf-8")
    assert "Grüße, 世界 — ✓" in text


def test_summary_messages_cannot_be_appended_as_messages(manager: SessionManager) -> None:
    from tau.session import BranchSummaryMessage

    with pytest.raises(TypeError):
        manager.append_message(BranchSummaryMessage("s", "root"))

"""New files from old ones: branched sessions (/fork, /clone), --fork, and /export of one branch."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.session import IdSource, LabelEntry, SessionFileError, SessionManager

Objects = Callable[[Path], list[dict[str, Any]]]


@pytest.fixture
def manager(tmp_path: Path, ids: IdSource) -> SessionManager:
    return SessionManager.create("/proj", str(tmp_path / "sessions"), ids=ids)


def test_branched_session_keeps_the_path_drops_labels_and_relabels_on_path_targets(
    manager: SessionManager, msg: Any, read_jsonl: Objects
) -> None:  # 13.34
    user = manager.append_message(msg.user("q"))
    answer = manager.append_message(msg.assistant("a"))
    manager.append_label_change(user, "start")
    manager.append_message(msg.user("q2"))
    side = manager.append_message(msg.assistant("side"))
    manager.append_label_change(side, "off-path")
    manager.branch(answer)
    manager.append_label_change(answer, "answer")
    leaf = manager.append_message(msg.user("q3"))
    old_file = manager.get_session_file()
    old_labels = {e.target_id: e for e in manager.get_entries() if isinstance(e, LabelEntry)}

    new_file = manager.create_branched_session(leaf)
    entries = manager.get_entries()
    assert [e.id for e in entries if not isinstance(e, LabelEntry)] == [user, answer, leaf]
    relabels = [e for e in entries if isinstance(e, LabelEntry)]
    assert [(e.target_id, e.label) for e in relabels] == [(user, "start"), (answer, "answer")]
    assert relabels[0].parent_id == leaf and relabels[1].parent_id == relabels[0].id
    assert relabels[0].timestamp == old_labels[user].timestamp  # 0.73 keeps the label's time
    assert manager.get_leaf_id() == relabels[-1].id
    assert new_file is not None and new_file != old_file
    lines = read_jsonl(Path(new_file))
    assert lines[0]["parentSession"] == old_file and lines[0]["id"] == manager.get_session_id()


def test_branched_session_without_an_assistant_is_written_lazily_once(
    manager: SessionManager, msg: Any, read_jsonl: Objects
) -> None:  # 13.35
    user = manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    manager.branch(user)
    manager.append_message(msg.user("other q"))
    new_file = Path(manager.create_branched_session(user) or "")
    assert not new_file.exists()
    manager.append_message(msg.user("more"))
    assert not new_file.exists()
    manager.append_message(msg.assistant("now"))
    lines = read_jsonl(new_file)
    assert [o["type"] for o in lines].count("session") == 1
    entry_ids = [o["id"] for o in lines[1:]]
    assert len(entry_ids) == len(set(entry_ids)) == 3


def test_branched_session_with_an_assistant_is_written_at_once(
    manager: SessionManager, msg: Any, read_jsonl: Objects
) -> None:  # 13.36
    manager.append_message(msg.user("q"))
    answer = manager.append_message(msg.assistant("a"))
    old_file = manager.get_session_file()
    new_file = Path(manager.create_branched_session(answer) or "")
    lines = read_jsonl(new_file)
    assert lines[0]["parentSession"] == old_file
    assert [o["type"] for o in lines] == ["session", "message", "message"]
    manager.append_message(msg.user("next"))
    assert len(read_jsonl(new_file)) == 4


def test_fork_from_copies_every_entry_with_the_same_ids_into_a_new_file(
    fixture_copy: Callable[[str], Path], tmp_path: Path, ids: IdSource, read_jsonl: Objects
) -> None:  # 13.37
    source = fixture_copy("v3_session.jsonl")
    before = source.read_bytes()
    forked = SessionManager.fork_from(str(source), "/new/cwd", str(tmp_path / "here"), ids=ids)
    path = Path(forked.get_session_file() or "")
    assert path.exists() and path.parent == tmp_path / "here"
    lines = read_jsonl(path)
    header = lines[0]
    assert header["cwd"] == "/new/cwd" and header["parentSession"] == str(source)
    assert header["id"] != read_jsonl(source)[0]["id"] == "019ad4f2-7c31-7e58-b1a0-5f2c8d9e4b71"
    assert lines[1:] == read_jsonl(source)[1:]
    assert forked.get_cwd() == "/new/cwd" and forked.get_leaf_id() == "47a6d0b8"
    assert source.read_bytes() == before


def test_fork_from_an_old_file_migrates_the_copy_only(
    fixture_copy: Callable[[str], Path], tmp_path: Path, ids: IdSource, read_jsonl: Objects
) -> None:
    source = fixture_copy("v1_session.jsonl")
    before = source.read_bytes()
    forked = SessionManager.fork_from(str(source), "/p", str(tmp_path / "f"), ids=ids)
    assert source.read_bytes() == before
    assert all("id" in o for o in read_jsonl(Path(forked.get_session_file() or ""))[1:])
    assert len(forked.build_session_context().messages) == 5


@pytest.mark.parametrize("content", ["", "not a session\n", '{"type":"message","id":"x"}\n'])
def test_fork_from_an_empty_or_invalid_source_names_it(tmp_path: Path, content: str) -> None:  # 13.38
    source = tmp_path / "bad.jsonl"
    source.write_text(content)
    with pytest.raises(SessionFileError, match=r"Cannot fork: .*bad\.jsonl"):
        SessionManager.fork_from(str(source), "/p", str(tmp_path / "out"))
    with pytest.raises(SessionFileError, match=r"missing\.jsonl"):
        SessionManager.fork_from(str(tmp_path / "missing.jsonl"), "/p", str(tmp_path / "out"))


def test_clone_of_the_current_leaf_duplicates_the_branch(
    manager: SessionManager, msg: Any
) -> None:  # 13.51 (session part)
    manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("a"))
    before = [e.to_json() for e in manager.get_branch()]
    manager.create_branched_session(manager.get_leaf_id() or "")
    assert [e.to_json() for e in manager.get_entries()] == before


def test_export_writes_one_branch_rechained_under_a_fresh_header(
    manager: SessionManager, msg: Any, tmp_path: Path, read_jsonl: Objects
) -> None:  # 13.52
    user = manager.append_message(msg.user("q"))
    manager.append_message(msg.assistant("left"))
    manager.branch(user)
    manager.append_custom_entry("ext")
    right = manager.append_message(msg.assistant("right"))
    out = Path(manager.export_branch(str(tmp_path / "export" / "x.jsonl")))
    lines = read_jsonl(out)
    assert lines[0]["id"] == manager.get_session_id() and lines[0]["type"] == "session"
    assert "parentSession" not in lines[0]
    assert [o["id"] for o in lines[1:]] == [e.id for e in manager.get_branch()]
    assert [o["parentId"] for o in lines[1:]] == [None, user, lines[2]["id"]]
    assert lines[-1]["id"] == right
    assert list(lines[3]) == list(manager.get_entry(right).to_json())  # type: ignore[union-attr]
    reopened = SessionManager.open(str(out))
    assert [m.role for m in reopened.build_session_context().messages] == ["user", "assistant"]


def test_the_branch_read_after_any_appends_and_moves_is_the_walk_from_its_leaf(
    manager: SessionManager, msg: Any
) -> None:
    import random

    from tau.session.context import path_to

    rng = random.Random(3)
    for step in range(300):
        choice = rng.random()
        entries = manager.get_entries()
        if choice < 0.15 and entries:
            manager.branch(rng.choice(entries).id)
        elif choice < 0.18:
            manager.reset_leaf()
        else:
            manager.append_message(msg.user(f"m{step}"))
        leaf = manager.get_leaf_id()
        by_id = {e.id: e for e in manager.get_entries()}
        expected = path_to(by_id[leaf], by_id) if leaf is not None else []
        assert [e.id for e in manager.get_branch()] == [e.id for e in expected]
        probe = rng.choice(list(by_id)) if by_id else None
        if probe is not None:
            assert [e.id for e in manager.get_branch(probe)] == [e.id for e in path_to(by_id[probe], by_id)]
        context = manager.build_session_context()
        assert len(context.messages) == len(expected)

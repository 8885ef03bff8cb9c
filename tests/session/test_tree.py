"""The tree view: roots, ordered children, orphans, labels; branching and its errors."""

from __future__ import annotations

from typing import Any

import pytest

from tau.session import BranchSummaryEntry, EntryNotFoundError, IdSource, SessionManager


@pytest.fixture
def manager(ids: IdSource) -> SessionManager:
    return SessionManager.in_memory("/p", ids=ids)


def test_a_linear_session_has_one_root(manager: SessionManager, msg: Any) -> None:  # 13.29
    for n in range(4):
        manager.append_message(msg.user(str(n)))
    [root] = manager.get_tree()
    depth, node = 1, root
    while node.children:
        [node] = node.children
        depth += 1
    assert depth == 4


def test_branching_gives_two_children_in_time_order_and_orphans_become_roots(
    manager: SessionManager, msg: Any
) -> None:  # 13.29
    root = manager.append_message(msg.user("root"))
    first = manager.append_message(msg.assistant("first"))
    manager.branch(root)
    second = manager.append_message(msg.assistant("second"))
    [tree] = manager.get_tree()
    assert [c.entry.id for c in tree.children] == [first, second]
    assert {e.id for e in manager.get_children(root)} == {first, second}
    orphan = manager.get_entries()[-1]
    orphan.parent_id = "gone0000"
    assert [n.entry.id for n in manager.get_tree()] == [root, second]


def test_children_are_sorted_by_timestamp_not_file_order(manager: SessionManager, msg: Any) -> None:
    root = manager.append_message(msg.user("root"))
    late = manager.append_message(msg.user("late"))
    manager.branch(root)
    early = manager.append_message(msg.user("early"))
    late_entry, early_entry = manager.get_entry(late), manager.get_entry(early)
    assert late_entry is not None and early_entry is not None
    late_entry.timestamp, early_entry.timestamp = early_entry.timestamp, late_entry.timestamp
    assert [c.entry.id for c in manager.get_tree()[0].children] == [early, late]


def test_a_very_deep_tree_needs_no_recursion(manager: SessionManager, msg: Any) -> None:
    for n in range(5000):
        manager.append_custom_entry("deep", n)
    assert len(manager.get_tree()) == 1
    assert len(manager.get_branch()) == 5000


def test_unknown_ids_raise_not_found(manager: SessionManager, msg: Any) -> None:  # 13.30
    manager.append_message(msg.user("x"))
    with pytest.raises(EntryNotFoundError, match="Entry missing not found"):
        manager.branch("missing")
    with pytest.raises(EntryNotFoundError, match="Entry missing not found"):
        manager.append_label_change("missing", "x")
    with pytest.raises(EntryNotFoundError):
        manager.branch_with_summary("missing", "s")
    with pytest.raises(EntryNotFoundError):
        manager.create_branched_session("missing")


def test_reset_leaf_makes_the_next_append_a_second_root(manager: SessionManager, msg: Any) -> None:  # 13.31
    manager.append_message(msg.user("a"))
    manager.reset_leaf()
    second = manager.append_message(msg.user("b"))
    assert manager.get_entry(second) is not None and manager.get_entry(second).parent_id is None  # type: ignore[union-attr]
    assert len(manager.get_tree()) == 2


def test_branch_with_summary_hangs_under_the_target_or_becomes_a_root(
    manager: SessionManager, msg: Any
) -> None:  # 13.32
    user = manager.append_message(msg.user("a"))
    reply = manager.append_message(msg.assistant("b"))
    # fromId is the leaf left behind (pi 1.6), "root" when there was none.
    under = manager.get_entry(manager.branch_with_summary(user, "s1"))
    assert isinstance(under, BranchSummaryEntry) and (under.parent_id, under.from_id) == (user, reply)
    root = manager.get_entry(manager.branch_with_summary(None, "s2", {"readFiles": []}, True))
    assert isinstance(root, BranchSummaryEntry) and (root.parent_id, root.from_id) == (None, under.id)
    manager.reset_leaf()
    from_nothing = manager.get_entry(manager.branch_with_summary(user, "s3"))
    assert isinstance(from_nothing, BranchSummaryEntry) and from_nothing.from_id == "root"
    manager.branch(root.id)
    assert root.to_json()["details"] == {"readFiles": []} and root.to_json()["fromHook"] is True
    assert manager.get_leaf_id() == root.id


def test_labels_set_overwrite_clear_and_never_reach_the_model(
    manager: SessionManager, msg: Any
) -> None:  # 13.33
    user = manager.append_message(msg.user("a"))
    manager.append_label_change(user, "one")
    assert manager.get_label(user) == "one"
    label_entry = manager.append_label_change(user, "two")
    assert manager.get_label(user) == "two"
    [node] = manager.get_tree()
    assert node.label == "two"
    assert node.label_timestamp == manager.get_entry(label_entry).timestamp  # type: ignore[union-attr]
    manager.append_label_change(user)
    assert manager.get_label(user) is None and manager.get_tree()[0].label is None
    manager.append_label_change(user, "")
    assert manager.get_label(user) is None
    assert [m.role for m in manager.build_session_context().messages] == ["user"]


def test_a_label_change_becomes_the_leaf(manager: SessionManager, msg: Any) -> None:
    user = manager.append_message(msg.user("a"))
    label = manager.append_label_change(user, "x")
    assert manager.get_leaf_id() == label and manager.get_leaf_entry() is manager.get_entry(label)


def test_labels_resolve_after_reload(fixture_copy: Any, ids: IdSource) -> None:
    manager = SessionManager.open(str(fixture_copy("v3_session.jsonl")), ids=ids)
    assert manager.get_label("d15a6c03") is None
    assert manager.get_label("8a3c5f97") == "diagnosis"
    assert manager.get_session_name() == "Chart labels: tick step fix"

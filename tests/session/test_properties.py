"""Properties of the tree projection over random append / branch sequences."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tau.ai.types import AssistantMessage, TextContent, UserMessage
from tau.session import LAST_ENTRY, SessionContext, SessionManager, build_session_context

Op = tuple[str, int]
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["user", "assistant", "custom", "custom_message", "label", "model", "thinking", "compaction",
             "branch", "reset", "branch_summary", "info"]
        ),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=40,
)  # fmt: skip


@dataclass
class Node:
    """The test's own model of an entry: its parent and what it contributes."""

    parent: str | None
    kind: str
    text: str = ""
    first_kept: str | None = None


def apply(manager: SessionManager, model: dict[str, Node], op: Op, step: int) -> None:
    kind, pick = op
    ids = list(model)
    target = ids[pick % len(ids)] if ids else None
    parent = manager.get_leaf_id()
    text = f"{kind}-{step}"
    if kind == "user":
        entry_id = manager.append_message(UserMessage([TextContent(text)], timestamp=step))
    elif kind == "assistant":
        reply = AssistantMessage([TextContent(text)], api="a", provider="p", model=f"m{step}", timestamp=step)
        entry_id = manager.append_message(reply)
    elif kind == "custom":
        entry_id = manager.append_custom_entry("ext", {"step": step})
    elif kind == "custom_message":
        entry_id = manager.append_custom_message_entry("ext", text, step % 2 == 0)
    elif kind == "label" and target is not None:
        entry_id = manager.append_label_change(target, text if step % 3 else None)
    elif kind == "model":
        entry_id = manager.append_model_change("prov", text)
    elif kind == "thinking":
        entry_id = manager.append_thinking_level_change(text)
    elif kind == "compaction":
        first_kept = target if target is not None and pick % 4 else "elsewhere"
        entry_id = manager.append_compaction(text, first_kept, step)
        model[entry_id] = Node(parent, kind, text, first_kept)
        return
    elif kind == "branch" and target is not None:
        manager.branch(target)
        return
    elif kind == "reset":
        manager.reset_leaf()
        return
    elif kind == "branch_summary":
        summary_parent = target if pick % 3 else None
        entry_id = manager.branch_with_summary(summary_parent, text if pick % 5 else "")
        model[entry_id] = Node(summary_parent, kind, text if pick % 5 else "")
        return
    elif kind == "info":
        entry_id = manager.append_session_info(text)
    else:
        return
    model[entry_id] = Node(parent, kind, text)


def expected_texts(model: dict[str, Node], leaf: str | None) -> list[str]:
    """pi's projection, computed from the test's model: path, latest compaction, kept range."""
    path: list[str] = []
    while leaf is not None:
        path.append(leaf)
        leaf = model[leaf].parent
    path.reverse()
    compactions = [i for i, entry_id in enumerate(path) if model[entry_id].kind == "compaction"]

    def emitted(ids: list[str]) -> list[str]:
        out = []
        for entry_id in ids:
            node = model[entry_id]
            if node.kind in ("user", "assistant", "custom_message") or (
                node.kind == "branch_summary" and node.text
            ):
                out.append(node.text)
        return out

    if not compactions:
        return emitted(path)
    k = compactions[-1]
    compaction = model[path[k]]
    before = path[:k]
    kept = before[before.index(compaction.first_kept) :] if compaction.first_kept in before else []
    return [compaction.text, *emitted(kept), *emitted(path[k + 1 :])]


def texts_of(context: SessionContext) -> list[str]:
    out = []
    for message in context.messages:
        data = message.to_json()
        if "summary" in data:
            out.append(data["summary"])
        elif isinstance(data["content"], str):
            out.append(data["content"])
        else:
            out.append(data["content"][0]["text"])
    return out


def as_json(context: SessionContext) -> Any:
    return [m.to_json() for m in context.messages], context.thinking_level, context.model


@settings(max_examples=60, deadline=None)
@given(OPS)
def test_the_context_is_always_the_projection_of_the_root_to_leaf_path(ops: list[Op]) -> None:
    manager = SessionManager.in_memory("/p")
    model: dict[str, Node] = {}
    for step, op in enumerate(ops):
        apply(manager, model, op, step)
        assert texts_of(manager.build_session_context()) == expected_texts(model, manager.get_leaf_id())
        branch = manager.get_branch()
        assert [e.id for e in branch][-1:] == ([manager.get_leaf_id()] if manager.get_leaf_id() else [])
        assert all(e.parent_id == (branch[i - 1].id if i else None) for i, e in enumerate(branch))


@settings(max_examples=40, deadline=None)
@given(OPS)
def test_reloading_the_file_gives_the_same_entries_and_context(ops: list[Op]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        manager = SessionManager.create("/p", folder)
        model: dict[str, Node] = {}
        for step, op in enumerate(ops):
            apply(manager, model, op, step)
        path = Path(manager.get_session_file() or "")
        if not any(node.kind == "assistant" for node in model.values()):
            assert not path.exists()
            return
        reopened = SessionManager.open(str(path))
        assert [e.to_json() for e in reopened.get_entries()] == [e.to_json() for e in manager.get_entries()]
        assert reopened.get_header().to_json() == manager.get_header().to_json()
        assert as_json(reopened.build_session_context()) == as_json(
            build_session_context(manager.get_entries(), LAST_ENTRY)
        )
        leaf = manager.get_leaf_id()
        if leaf is not None:
            reopened.branch(leaf)
            assert as_json(reopened.build_session_context()) == as_json(manager.build_session_context())
        assert {t: reopened.get_label(t) for t in model} == {t: manager.get_label(t) for t in model}
        assert reopened.get_session_name() == manager.get_session_name()


KEPT_OPS = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "custom_message", "model", "thinking", "compaction", "branch",
                         "branch_summary", "info", "system", "edit", "edit"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    max_size=40,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(KEPT_OPS)
def test_the_context_kept_between_appends_equals_one_built_afresh(ops: list[Op]) -> None:
    manager = SessionManager.in_memory("/p")
    model: dict[str, Node] = {}
    for step, op in enumerate(ops):
        kind, pick = op
        branch = [e.id for e in manager.get_branch()]
        if kind == "system":  # a pi 1.x system message stating the prompt and tools
            manager.record_system_prompt({"base": f"prompt {step}"}, [{"name": f"tool{pick % 3}"}])
        elif kind == "edit" and branch:
            replacement = {"content": f"edited {step}"} if pick % 2 else None
            manager.append_context_edit(branch[pick % len(branch)], replacement)
        else:
            apply(manager, model, op, step)
        kept = manager.build_session_context()
        fresh = build_session_context(manager.get_entries(), manager.get_leaf_id())
        assert as_json(kept) == as_json(fresh)
        assert kept.system_message == fresh.system_message

"""The /tree picker's folding on the rows a filter leaves (issue #32): a row hangs under its nearest
shown ancestor, as in pi 1.6's tree selector."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tau.ai.types import AssistantMessage, TextContent, UserMessage
from tau.modes.interactive.tree_dialog import TreeDialog
from tau.modes.interactive.tree_view import tree_rows
from tau.session import SessionManager


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage([TextContent(text)], api="openai-completions", provider="p", model="m")


def _manager(tmp_path: Path) -> SessionManager:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(UserMessage("root question"))
    root_answer = manager.append_message(_reply("root answer"))
    manager.append_message(UserMessage("left question"))
    manager.append_message(_reply("left answer"))
    manager.append_message(UserMessage("left deeper"))
    manager.branch(root_answer)
    manager.append_message(UserMessage("right question"))
    manager.append_message(_reply("right answer"))
    return manager


def _texts(dialog: TreeDialog) -> list[str]:
    return [item.label.strip() for item in dialog.shown]


def test_folding_follows_the_rows_a_filter_leaves(tmp_path: Path) -> None:
    async def run() -> None:
        dialog = TreeDialog("tree", tree_rows(_manager(tmp_path), "user-only"))
        assert _texts(dialog) == [
            "│ user: root question",
            "│ user: right question",  # the current branch first; its answer is not shown
            "⊟   user: left question",  # under the root question, through the hidden answers
            "user: left deeper",
        ]
        assert dialog.shown[dialog.index].label.endswith("right question")
        assert not dialog.foldable(dialog.shown[1].value)  # nothing shown under it
        dialog.fold_or_up()  # so Ctrl+Left goes up: the root, as the branch starts here
        assert _texts(dialog)[dialog.index] == "│ user: root question"
        dialog.unfold_or_down()  # the fork below: its first branch
        assert _texts(dialog)[dialog.index] == "│ user: right question"
        dialog.move(1)
        dialog.fold_or_up()
        assert _texts(dialog) == [
            "│ user: root question",
            "│ user: right question",
            "⊞   user: left question",
        ]
        dialog.fold_or_up()  # folded already: up, past the fork, to the root
        assert dialog.index == 0
        dialog.fold_or_up()  # the root folds too
        assert _texts(dialog) == ["⊞ │ user: root question"]
        dialog.unfold_or_down()
        assert len(dialog.shown) == 3  # the left branch stays folded
        assert dialog.folded == {dialog.shown[2].value}

    asyncio.run(run())


def test_folds_and_label_times_carry_into_the_next_picker(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    first = manager.get_tree()[0].entry.id
    manager.append_label_change(first, "start")

    async def run() -> None:
        dialog = TreeDialog("tree", tree_rows(manager), folded={first, "gone"}, label_times=True)
        assert dialog.folded == {first}  # an id no row has is dropped
        assert dialog.hint_text() == "(1/1) [+label time]"
        [row] = dialog.shown
        assert row.label.startswith("⊞ │ user: root question [start] ")
        dialog.toggle_label_times()
        assert dialog.hint_text() == "(1/1)" and dialog.shown[0].label.endswith("[start]")

    asyncio.run(run())

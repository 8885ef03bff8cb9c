"""/tree's branch keys as pi 1.6's (issue #32), in the real `tau` in a pseudo-terminal: folding a
branch, moving up and down between branch starts where there is nothing to fold or unfold, label
times, and the three ids rebound through keybindings.json."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.ai.types import AssistantMessage, TextContent, UserMessage
from tau.session import SessionManager

Start = Callable[..., Terminal]
CTRL_LEFT = "\x1b[1;5D"
CTRL_RIGHT = "\x1b[1;5C"
ALT_LEFT = "\x1b[1;3D"
ALT_RIGHT = "\x1b[1;3C"


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage(
        [TextContent(text)], api="openai-completions", provider="local", model="fake-model"
    )


def _branched_session(tau: TauCommand) -> Path:
    """root question → root answer, then two branches: left (four entries, labelled) and right
    (two, the current one: listed first)."""
    path = tau.work / "branched.jsonl"
    manager = SessionManager.open(str(path))
    manager.append_message(UserMessage("root question"))
    root_answer = manager.append_message(_reply("root answer"))
    left = manager.append_message(UserMessage("left question"))
    manager.append_message(_reply("left answer"))
    manager.append_message(UserMessage("left deeper"))
    manager.append_message(_reply("left end"))
    manager.branch(root_answer)
    manager.append_message(UserMessage("right question"))
    manager.append_message(_reply("right answer"))
    manager.append_label_change(left, "checkpoint")
    return path


def _open_tree(terminal: Terminal) -> None:
    terminal.type("/tree")
    terminal.send(ENTER)
    terminal.wait_for(lambda: "Session Tree" in terminal.display(), where="display")


def _rows(terminal: Terminal) -> str:
    """The picker's rows: the lines between its search line and its hint line."""
    lines = terminal.display().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Type to search:")), len(lines))
    end = next((i for i, line in enumerate(lines) if re.match(r"\(\d+/\d+\)", line)), len(lines))
    return "\n".join(lines[start + 1 : end])


def _highlighted(terminal: Terminal) -> str:
    return next((line for line in _rows(terminal).splitlines() if line.startswith("› ")), "")


def _wait_highlight(terminal: Terminal, text: str) -> None:
    terminal.wait_for(lambda: text in _highlighted(terminal), where="display")


def test_ctrl_left_and_right_fold_a_branch_and_move_between_branch_starts(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui("--session", str(_branched_session(tau)), cols=120)
    _open_tree(terminal)
    _wait_highlight(terminal, "assistant: right answer")  # the current leaf's row
    assert "⊟   user: left question" in _rows(terminal)  # a branch's first entry can fold
    assert "ctrl+←/→ branch · ctrl+l label · shift+t label time" in terminal.display()
    terminal.send(CTRL_LEFT)  # nothing to fold: up to the start of this branch
    _wait_highlight(terminal, "⊟ │ user: right question")
    terminal.send(CTRL_LEFT)  # a branch start: folds it
    terminal.wait_for(lambda: "right answer" not in _rows(terminal), where="display")
    assert "⊞ │ user: right question" in _highlighted(terminal)
    terminal.send(CTRL_RIGHT)  # folded: unfolds
    terminal.wait_for(lambda: "│ assistant: right answer" in _rows(terminal), where="display")
    assert "⊟ │ user: right question" in _highlighted(terminal)
    terminal.send(ALT_LEFT)  # Alt+Left too: folds again
    terminal.wait_for(lambda: "right answer" not in _rows(terminal), where="display")
    terminal.send(ALT_LEFT)  # folded already: up past the fork to the root
    _wait_highlight(terminal, "│ user: root question")
    terminal.send(ALT_RIGHT)  # down to the fork's first branch: the current one, as pi lists it
    _wait_highlight(terminal, "⊞ │ user: right question")
    terminal.send("\x1b[B")  # Down
    _wait_highlight(terminal, "user: left question")
    terminal.send(CTRL_RIGHT)  # no fork below: to the end of the branch
    _wait_highlight(terminal, "assistant: left end")
    terminal.send(CTRL_LEFT)  # back up to the branch's start
    _wait_highlight(terminal, "user: left question")
    terminal.send(CTRL_LEFT)  # fold the left branch as well
    terminal.wait_for(lambda: "left end" not in _rows(terminal), where="display")
    terminal.send(CTRL_LEFT)
    _wait_highlight(terminal, "user: root question")
    terminal.send(CTRL_LEFT)  # the root has rows under it: folding it leaves one row
    terminal.wait_for(lambda: "root answer" not in _rows(terminal), where="display")
    assert _rows(terminal) == "› ⊞ │ user: root question"
    terminal.type("left")  # a search unfolds everything, as pi's
    terminal.wait_for(lambda: "user: left deeper" in _rows(terminal), where="display")
    assert "⊞" not in _rows(terminal)


def test_shift_t_shows_when_each_label_was_set(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui("--session", str(_branched_session(tau)), cols=120)
    _open_tree(terminal)
    terminal.wait_for(lambda: "user: left question [checkpoint]" in _rows(terminal), where="display")
    terminal.send("T")
    terminal.wait_for(lambda: re.search(r"\[checkpoint\] \d\d:\d\d", terminal.display()) is not None)
    assert "[+label time]" in terminal.display()
    assert "Type to search: T" not in terminal.display()  # the key, not a search
    terminal.send(CTRL_LEFT)  # the other keys keep it on
    terminal.wait_for(lambda: "⊟ │ user: right question" in _rows(terminal), where="display")
    assert re.search(r"\[checkpoint\] \d\d:\d\d", terminal.display())
    terminal.send("T")
    terminal.wait_for(lambda: "[+label time]" not in terminal.display(), where="display")
    assert re.search(r"\[checkpoint\] \d\d:\d\d", terminal.display()) is None


def test_the_branch_keys_follow_keybindings_json(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "keybindings.json").write_text(
        json.dumps(
            {
                "app.tree.foldOrUp": "alt+h",
                "treeUnfoldOrDown": "alt+l",  # pi 0.x's name
                "app.tree.toggleLabelTimestamp": "ctrl+y",
            }
        )
    )
    terminal = start_tui("--session", str(_branched_session(tau)), cols=120)
    assert "keybindings.json" not in terminal.text()  # no warning: tau has these actions
    _open_tree(terminal)
    _wait_highlight(terminal, "assistant: right answer")
    assert "alt+h/l branch · ctrl+l label · ctrl+y label time" in terminal.display()  # the hint too
    terminal.send(CTRL_LEFT)  # not the key any more
    terminal.send("\x1bh")
    _wait_highlight(terminal, "⊟ │ user: right question")  # one step, by Alt+H
    terminal.send("\x1bh")
    terminal.wait_for(lambda: "right answer" not in _rows(terminal), where="display")
    terminal.send("\x1bl")
    terminal.wait_for(lambda: "│ assistant: right answer" in _rows(terminal), where="display")
    terminal.send("\x19")  # Ctrl+Y
    terminal.wait_for(lambda: "[+label time]" in terminal.display(), where="display")
    terminal.type("T")  # Shift+T is a letter of the search again
    terminal.wait_for(lambda: "Type to search: T" in terminal.display(), where="display")

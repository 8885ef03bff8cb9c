"""The editor's keys as a terminal sends them: the raw bytes (ESC-prefixed Alt keys, CSI forms),
into the real `tau` in a pseudo-terminal."""

from __future__ import annotations

import os
import select
import signal
import sys
import termios
import time
from collections.abc import Callable

import pexpect
import pytest
from tau_command import MODEL, TauCommand
from terminal import ENTER, ESCAPE, Terminal, is_rule

from tau.testing.fake_llm import Fault, Turn

Start = Callable[..., Terminal]

UP = "\x1b[A"
DOWN = "\x1b[B"
ALT_UP = "\x1b[1;3A"
ALT_LEFT = "\x1b[1;3D"
ALT_RIGHT = "\x1b[1;3C"
ALT_BACKSPACE = "\x1b\x7f"


def _editor_text(terminal: Terminal) -> str:
    """The lines between the editor's two border lines."""
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
    if len(borders) < 2:
        return ""
    return "\n".join(lines[borders[-2] + 1 : borders[-1]]).strip()


def _stalled_run(tau: TauCommand, start_tui: Start) -> Terminal:
    """tau in the middle of a reply that does not end (for 30 s)."""
    tau.server.add(
        Turn(text="working on it slowly", chunk_size=4, fault=Fault("stall", after_events=3, seconds=30)),
        Turn(text="second reply"),
    )
    terminal = start_tui()
    terminal.type("start")
    terminal.send(ENTER)
    terminal.wait_for("work", where="display")
    return terminal


def _editor_shows(terminal: Terminal, text: str) -> None:
    terminal.wait_for(lambda: _editor_text(terminal) == text, timeout=5)


@pytest.mark.parametrize(
    "alt_enter", ["\x1b\r", "\x1b[13;3u", "\x1b[27;3;13~"], ids=["esc-cr", "csi-u", "modify-other-keys"]
)
def test_alt_enter_while_working_queues_a_follow_up(
    tau: TauCommand, start_tui: Start, alt_enter: str
) -> None:
    terminal = _stalled_run(tau, start_tui)
    terminal.type("and then the docs")
    terminal.send(alt_enter)
    terminal.wait_for("follow-up: and then the docs", where="display")
    time.sleep(0.3)
    terminal.pump()
    assert "Aborted" not in terminal.text()
    assert _editor_text(terminal) == ""


def test_alt_up_brings_queued_messages_back_without_aborting(tau: TauCommand, start_tui: Start) -> None:
    terminal = _stalled_run(tau, start_tui)
    terminal.type("and then the docs")
    terminal.send(ENTER)
    terminal.wait_for("steer: and then the docs", where="display")
    terminal.send(ALT_UP)
    _editor_shows(terminal, "and then the docs")
    time.sleep(0.3)
    terminal.pump()
    assert "Aborted" not in terminal.text()
    assert "steer:" not in terminal.display()


def test_a_lone_escape_acts_within_a_moment(tau: TauCommand, start_tui: Start) -> None:
    terminal = _stalled_run(tau, start_tui)
    terminal.type("queued")
    terminal.send(ENTER)
    terminal.wait_for("steer: queued", where="display")
    sent = time.monotonic()
    terminal.send(ESCAPE)
    _editor_shows(terminal, "queued")  # Esc puts the queued message back at once, then aborts
    escape_took = time.monotonic() - sent
    sent = time.monotonic()
    terminal.send("x")
    _editor_shows(terminal, "queuedx")
    key_took = time.monotonic() - sent  # how fast this machine answers a plain key just now
    # A lone Esc waits 50 ms for a second byte; waiting for a second key would take 0.5 s.
    assert escape_took < key_took + 0.25
    terminal.wait_for("Aborted", timeout=5)


def test_up_and_down_walk_through_this_sessions_messages(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="first answer"), Turn(text="second answer"))
    terminal = start_tui()
    for text, answer in (("first question", "first answer"), ("second question", "second answer")):
        terminal.type(text)
        terminal.send(ENTER)
        terminal.wait_for(answer)
    terminal.type("a draft")
    terminal.send(UP)
    _editor_shows(terminal, "a draft")  # the cursor is not at the line's start: Up goes there first
    terminal.send(UP)
    _editor_shows(terminal, "second question")
    terminal.send(UP)
    _editor_shows(terminal, "first question")
    terminal.send(DOWN)
    _editor_shows(terminal, "second question")
    terminal.send(DOWN)
    _editor_shows(terminal, "a draft")


def test_up_recalls_shell_commands_but_not_built_in_commands(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui()
    terminal.type("!echo from-the-shell")
    terminal.send(ENTER)
    terminal.wait_for(lambda: terminal.text().count("from-the-shell") >= 2)  # the command and its output
    terminal.type("/name a name")
    terminal.send(ENTER)
    terminal.wait_for("Session name set: a name")
    terminal.send(UP)
    _editor_shows(terminal, "!echo from-the-shell")


def test_up_recalls_the_messages_of_a_continued_session(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="earlier answer"))
    assert tau.run(*MODEL, "-p", "an earlier question").returncode == 0
    terminal = start_tui("-c")
    terminal.wait_for("earlier answer")
    terminal.send(UP)
    _editor_shows(terminal, "an earlier question")


def test_up_in_a_multi_line_message_moves_up_a_line_first(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="an answer"))
    terminal = start_tui()
    terminal.type("sent before")
    terminal.send(ENTER)
    terminal.wait_for("an answer")
    terminal.type("line one\\")
    terminal.send(ENTER)
    terminal.type("line two")
    terminal.send(UP)
    terminal.type("X")
    _editor_shows(terminal, "line oneX\nline two")


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ("\x1bb\x1bbX", "one Xtwo three"),  # Alt+B twice: back two words
        ("\x1bb\x1bb\x1bfX", "one twoX three"),  # and Alt+F: forward to the end of a word
        (ALT_LEFT + ALT_LEFT + "X", "one Xtwo three"),
        (ALT_LEFT + ALT_LEFT + ALT_RIGHT + "X", "one two Xthree"),
        (ALT_BACKSPACE, "one two"),
        ("\x1bb\x1bb\x1bd", "one  three"),  # Alt+D deletes the word after the cursor
        ("\x1b[27;3;98~" * 2 + "X", "one Xtwo three"),  # Alt+B under modifyOtherKeys
        ("\x1b[98;3u" * 2 + "\x1b[127;3u", "two three"),  # kitty's Alt+B, Alt+Backspace
        ("\x1b[127;5u", "one two"),  # kitty's Ctrl+Backspace: as Alt+Backspace
        ("\x1b[27;5;127~", "one two"),  # and modifyOtherKeys'
    ],
    ids=[
        "alt-b",
        "alt-f",
        "alt-left",
        "alt-right",
        "alt-backspace",
        "alt-d",
        "alt-b-xterm",
        "alt-keys-kitty",
        "ctrl-backspace-kitty",
        "ctrl-backspace-xterm",
    ],
)
def test_alt_word_keys_move_and_delete_by_word(
    tau: TauCommand, start_tui: Start, keys: str, expected: str
) -> None:
    terminal = start_tui()
    terminal.type("one two three")
    _editor_shows(terminal, "one two three")
    terminal.send(keys)
    _editor_shows(terminal, expected)


def test_a_kitty_terminal_gets_the_protocol_pushed_and_popped(tau: TauCommand) -> None:
    terminal = Terminal([sys.executable, "-m", "tau", *MODEL], cwd=str(tau.work), env=tau.env, kitty=True)
    try:
        terminal.wait_for("fake-model")
        terminal.type("one")
        terminal.send("\x1b[13;2u")  # Shift+Enter
        terminal.type("two")
        _editor_shows(terminal, "one\ntwo")
        terminal.send("\x1b[99;5u")  # Ctrl+C
        _editor_shows(terminal, "")
        terminal.send("\x1b[100;5u")  # Ctrl+D on the empty editor quits
        assert terminal.wait_exit() == 0
    finally:
        terminal.close()
    raw = bytes(terminal.raw)
    assert raw.index(b"\x1b[>1u") < raw.rindex(b"\x1b[<u")  # pushed, popped at the end
    assert b"\x1b[>4;2m" not in raw  # no modifyOtherKeys on top of the protocol


def test_other_terminals_get_modify_other_keys_until_a_signal_ends_tau(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    terminal.wait_for(lambda: b"\x1b[>4;2m" in terminal.raw)  # asked for once DA1 answered
    terminal.type("one")
    terminal.send("\x1b[27;2;13~")  # Shift+Enter, as xterm and tmux send it then
    terminal.type("two")
    _editor_shows(terminal, "one\ntwo")
    terminal.send("\x1b[27;5;99~")  # Ctrl+C
    _editor_shows(terminal, "")
    terminal.send("\x1b[27;2;9~")  # Shift+Tab: the next thinking level
    terminal.wait_for("does not support thinking")
    terminal.child.kill(signal.SIGTERM)
    assert terminal.wait_exit() == 143
    raw = bytes(terminal.raw)
    assert raw.rindex(b"\x1b[>4;0m") > raw.index(b"\x1b[>4;2m")


def _echo_when_asked(child: pexpect.spawn, queries: int) -> tuple[list[bool], bytes]:
    """Read tau's output as a quick terminal does, answering each device attributes query (and
    cursor report) the moment it arrives, until ``queries`` were asked; whether the tty still
    echoed its input at each, and the output."""
    output, echoing = b"", []
    deadline = time.monotonic() + 15
    while len(echoing) < queries and time.monotonic() < deadline:
        if not select.select([child.child_fd], [], [], 0.5)[0]:
            continue
        data = os.read(child.child_fd, 65536)
        output += data
        for _ in range(data.count(b"\x1b[c")):
            echoing.append(bool(termios.tcgetattr(child.child_fd)[3] & termios.ECHO))
            os.write(child.child_fd, b"\x1b[?1;2c")
        for _ in range(data.count(b"\x1b[6n")):
            os.write(child.child_fd, b"\x1b[1;1R")
    return echoing, output


def test_the_key_queries_are_sent_once_the_tty_no_longer_echoes_the_answers(tau: TauCommand) -> None:
    # Asked before the application had the tty in raw mode, the terminal's answer (at once) was
    # echoed onto the screen: ^[[?1;2c where the editor was then drawn. So again after Ctrl+Z
    # (here the stop returns at once: a pty without job control cannot stop).
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tau", *MODEL],
        cwd=str(tau.work),
        env={**tau.env, "TERM": "xterm-256color"},
        use_poll=True,
    )
    try:
        echoing, output = _echo_when_asked(child, 1)
        child.send("\x1a")
        echoing_again, output_again = _echo_when_asked(child, 1)
        time.sleep(0.2)
        output_again += child.read_nonblocking(65536, timeout=1)
    finally:
        child.kill(signal.SIGKILL)
        child.close(force=True)
    assert (echoing, echoing_again) == ([False], [False])
    assert b"^[" not in output + output_again

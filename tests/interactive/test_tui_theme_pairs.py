"""pi's ``light/dark`` theme pairs (``--use-theme light/dark``, the ``theme`` setting): the half the
terminal's appearance picks, switching when the terminal reports a change."""

from __future__ import annotations

import json
import sys

from tau_command import MODEL, TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

REPLY = "Here:\n\n```python\ndef answer():\n    return 42\n```\n"
LIGHT_BACKGROUND = "rgb:ffff/ffff/f0f0"
DARK_BACKGROUND = "rgb:1010/1010/1010"


def _run(tau: TauCommand, background: str, *args: str) -> Terminal:
    tau.server.add(Turn(text=REPLY))
    terminal = Terminal(
        [sys.executable, "-m", "tau", *MODEL, *args], cwd=str(tau.work), env=tau.env, background=background
    )
    terminal.wait_for("fake-model")
    terminal.type("show code")
    terminal.send(ENTER)
    terminal.wait_for("return 42")
    return terminal


def _colour_of(terminal: Terminal, word: str) -> str:
    for row in terminal.screen.buffer.values():
        line = "".join(row[x].data for x in range(terminal.cols))
        column = line.find(word)
        if column >= 0:
            return str(row[column].fg)
    raise AssertionError(f"{word!r} is not on the screen:\n{terminal.display()}")


def _colours(tau: TauCommand, background: str, *args: str) -> str:
    terminal = _run(tau, background, *args)
    try:
        return _colour_of(terminal, "def")
    finally:
        terminal.close()


def test_a_pair_uses_the_light_theme_on_a_light_terminal_and_the_dark_one_after_it_turns_dark(
    tau: TauCommand,
) -> None:
    light = _colours(tau, LIGHT_BACKGROUND, "--use-theme", "light")
    dark = _colours(tau, LIGHT_BACKGROUND, "--use-theme", "dark")
    assert light != dark
    terminal = _run(tau, LIGHT_BACKGROUND, "--use-theme", "light/dark")
    try:
        terminal.wait_for(lambda: _colour_of(terminal, "def") == light)
        terminal.send("\x1b[?997;1n")  # the terminal reports it turned dark (mode 2031)
        terminal.wait_for(lambda: _colour_of(terminal, "def") == dark)
        assert not terminal.text().count("no such theme")
    finally:
        terminal.close()


def test_a_pair_in_the_theme_setting_is_read_and_a_bad_half_is_named(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"theme": "light/dark"}))
    light = _colours(tau, LIGHT_BACKGROUND, "--use-theme", "light")
    assert light != _colours(tau, LIGHT_BACKGROUND, "--use-theme", "dark")
    assert _colours(tau, LIGHT_BACKGROUND) == light
    terminal = _run(tau, DARK_BACKGROUND, "--use-theme", "light/nope")
    try:
        assert "theme nope: no such theme" in terminal.text()
    finally:
        terminal.close()

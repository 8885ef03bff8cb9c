"""``/settings`` in the real `tau` in a pseudo-terminal: it offers the settings of pi 1.6's selector
that tau has, each choice is saved in the user's settings.json and takes effect at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

Start = Callable[..., Terminal]


def _saved(tau: TauCommand) -> dict[str, Any]:
    path = tau.agent_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _open_settings(terminal: Terminal) -> None:
    terminal.type("/settings")
    terminal.send(ENTER)
    terminal.wait_for("Settings", where="display")


def _highlighted(terminal: Terminal, label: str, value: str) -> Callable[[], bool]:
    """Whether the highlighted row is ``label`` with ``value`` in the values' column (as pi's)."""

    def check() -> bool:
        return any(
            line.startswith(f"› {label}  ")
            and line.rstrip().endswith(f"  {value}")
            and line[2:].rstrip().removeprefix(label).removesuffix(value).strip() == ""
            for line in terminal.display().splitlines()
        )

    return check


def _choose(terminal: Terminal, label: str, before: str, after: str) -> None:
    """In the open settings list: the row ``label`` from ``before`` to ``after``."""
    terminal.type(label.lower())
    terminal.wait_for(_highlighted(terminal, label, before))
    terminal.send(ENTER)
    terminal.wait_for(f"› {before}", where="display")
    terminal.type(after)
    terminal.wait_for(f"› {after}", where="display")
    terminal.send(ENTER)
    terminal.wait_for(_highlighted(terminal, label, after))  # the list again, on the changed row
    terminal.send("\x15")  # the filter cleared (Ctrl+U) for the next row


# Each row tau adds to the ones it had, from its default to another value, and what is saved.
ROWS: list[tuple[str, str, str, Callable[[dict[str, Any]], Any], Any]] = [
    ("Block images", "false", "true", lambda s: s["images"]["blockImages"], True),
    ("Skill commands", "true", "false", lambda s: s["enableSkillCommands"], False),
    ("Show hardware cursor", "false", "true", lambda s: s["showHardwareCursor"], True),
    ("Editor padding", "0", "2", lambda s: s["editorPaddingX"], 2),
    ("Autocomplete max items", "5", "10", lambda s: s["autocompleteMaxVisible"], 10),
    ("Terminal progress", "false", "true", lambda s: s["terminal"]["showTerminalProgress"], True),
    ("Transport", "auto", "websocket-cached", lambda s: s["transport"], "websocket-cached"),
    ("Session share destination", "auto", "gist", lambda s: s["sessionShareDestination"], "gist"),
    ("HTTP idle timeout", "5 min", "disabled", lambda s: s["httpIdleTimeoutMs"], 0),
    ("Cache warming", "idle", "streaming", lambda s: s["cacheWarming"], "streaming"),
    ("Cache miss notices", "false", "true", lambda s: s["showCacheMissNotices"], True),
    ("Collapse changelog", "false", "true", lambda s: s["collapseChangelog"], True),
    ("Quiet startup", "false", "header", lambda s: s["quietStartup"], "header"),
    ("Default project trust", "Ask", "Never trust", lambda s: s["defaultProjectTrust"], "never"),
    ("Tree filter mode", "default", "user-only", lambda s: s["treeFilterMode"], "user-only"),
    (
        "Fullscreen exit output",
        "transcript",
        "resume-hint",
        lambda s: s["fullscreenExitOutput"],
        "resume-hint",
    ),
    ("Fullscreen scrollbar", "auto", "always", lambda s: s["fullscreenScrollbar"], "always"),
    ("Fullscreen copy on select", "true", "false", lambda s: s["fullscreenCopyOnSelect"], False),
    ("Fullscreen wheel scrolling", "auto", "5", lambda s: s["fullscreenWheelScrollLines"], 5),
]


def test_settings_offers_pi_16s_settings_and_saves_each_choice(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(rows=40)
    _open_settings(terminal)
    for label, before, after, read, expected in ROWS:
        _choose(terminal, label, before, after)
        terminal.wait_for(lambda: _saved(tau) != {})
        assert read(_saved(tau)) == expected, label
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Settings" not in terminal.display())


def test_warnings_opens_pis_warnings_list(tau: TauCommand, start_tui: Start) -> None:
    """pi 1.6's "Warnings  configure" row opens a list of the warnings, each changed as a row of
    /settings is; Esc goes back to /settings on that row."""
    terminal = start_tui()
    _open_settings(terminal)
    terminal.type("warnings")
    terminal.wait_for(_highlighted(terminal, "Warnings", "configure"))
    terminal.send(ENTER)
    terminal.wait_for(_highlighted(terminal, "Anthropic extra usage", "true"))
    assert "Warn when an Anthropic subscription login" in terminal.display()
    terminal.send(ENTER)
    terminal.type("false")
    terminal.wait_for("› false", where="display")
    terminal.send(ENTER)
    terminal.wait_for(_highlighted(terminal, "Anthropic extra usage", "false"))
    assert _saved(tau)["warnings"]["anthropicExtraUsage"] is False
    terminal.send(ESCAPE)
    terminal.wait_for(_highlighted(terminal, "Warnings", "configure"))


def test_a_rows_choices_say_what_the_setting_does(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui()
    _open_settings(terminal)
    terminal.type("editor padding")
    terminal.send(ENTER)
    terminal.wait_for("Blank cells each side of the editor's text (0-3)", where="display")


def test_editor_padding_from_settings_moves_the_text_at_once(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(cols=60)
    _open_settings(terminal)
    _choose(terminal, "Editor padding", "0", "3")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Settings" not in terminal.display())
    terminal.type("padded words")
    terminal.wait_for("padded words", where="display")
    [row] = [line for line in terminal.display().splitlines() if "padded words" in line]
    assert row.index("padded words") == 3


def test_skill_commands_off_leaves_skills_out_of_the_completions(tau: TauCommand, start_tui: Start) -> None:
    skill = tau.agent_dir / "skills" / "brew"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: brew\ndescription: Brew coffee\n---\nBrew it.\n")
    terminal = start_tui()
    terminal.type("/skill:")
    terminal.wait_for("skill:brew", where="display")
    terminal.send("\x15")
    _open_settings(terminal)
    _choose(terminal, "Skill commands", "true", "false")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Settings" not in terminal.display())
    terminal.type("/skill")
    terminal.wait_for("/skill", where="display")
    terminal.settle()
    assert "skill:brew" not in terminal.display()

"""What a pi 1.6 user sees in the first minutes, side by side with pi 1.6 itself in a real
terminal against the same fake server: the lines the built-in commands answer with on a new
session (``/fork``, ``/copy``, ``/export``, ``/name`` with nothing to act on) and after a first
reply (``/name``, ``/copy``, ``/export``). pi writes ``Error:``/``Warning:`` before a line tau
colours instead; the words after it are the same."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pi16 import pi16_ai_package, pi16_command
from tau_command import MODEL, TauCommand
from terminal import ENTER, ESCAPE, Terminal, is_rule

from tau import __version__
from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]
T = TypeVar("T")
# each command, and words of its answer to wait for before the next ("/name " as typed with
# nothing after it)
COMMANDS = [
    ("/fork", "fork from"),
    ("/copy", "to copy yet"),
    ("/export", "Nothing to export"),
    ("/name ", "Usage: /name"),
]
AFTER_A_REPLY = [  # pi's next status line takes the place of the last: other lines between them
    ("/export chat.html", "exported to:"),
    ("/name first steps", "name set"),
    ("/name ", "Session name: first"),
    ("/copy", "Copied"),
]


def _answers(terminal: Terminal, commands: list[tuple[str, str]]) -> list[str]:
    """Run ``commands`` one after another and return the transcript's new lines (the prefixes pi
    writes taken off)."""
    terminal.settle()
    before = set(terminal.text().splitlines())
    for command, answer in commands:
        terminal.type(command)
        terminal.send(ENTER)
        terminal.wait_for(answer)
    lines = [line.strip() for line in terminal.text().splitlines() if line not in before]
    return [re.sub(r"^(Error|Warning): ", "", line) for line in lines if line.strip() and "─" not in line]


def _editor_text(terminal: Terminal) -> str:
    """What the editor holds: the lines between the last two rules on screen."""
    lines = terminal.display().splitlines()
    rules = [i for i, line in enumerate(lines) if is_rule(line)]
    return "\n".join(lines[rules[-2] + 1 : rules[-1]]).strip() if len(rules) >= 2 else ""


def _on_pi(tau: TauCommand, tmp_path: Path, look: Callable[[Terminal], T], rows: int = 30) -> T:
    """What ``look`` sees in pi 1.6's terminal UI, started beside tau's on the same fake server
    and closed afterwards."""
    pi = _pi(tau, tmp_path, rows)
    try:
        return look(pi)
    finally:
        pi.close()


def _pi(tau: TauCommand, tmp_path: Path, rows: int = 30) -> Terminal:
    pi_dir = tmp_path / "pi-agent"
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = Terminal([*pi16_command(), *MODEL], cwd=str(tau.work), env=env, rows=rows, cols=140)
    pi.wait_for("fake-model")
    return pi


def test_commands_with_nothing_to_act_on_answer_in_pis_words(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    pi_lines = _on_pi(tau, tmp_path, lambda pi: _answers(pi, COMMANDS))
    tau_lines = _answers(start_tui(cols=140), COMMANDS)
    assert (
        pi_lines
        == tau_lines
        == [
            "No messages to fork from",
            "No agent messages to copy yet.",
            "Failed to export session: Nothing to export yet - start a conversation first",
            "Usage: /name <name>",
        ]
    )


def test_commands_after_a_first_reply_answer_in_pis_words(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    tau.server.add(Turn(text="Hello there."), Turn(text="Hello there."))
    pi = _pi(tau, tmp_path)
    try:
        pi.type("hi")
        pi.send(ENTER)
        pi.wait_for("Hello there.")
        pi_lines = _answers(pi, AFTER_A_REPLY)
    finally:
        pi.close()
    terminal = start_tui(cols=140)
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("Hello there.")
    tau_lines = _answers(terminal, AFTER_A_REPLY)
    expected = [
        "Session exported to: chat.html",  # pi names the file as typed; tau says where it is
        "Session name set: first steps",
        "Session name: first steps",
        "Copied last agent message to clipboard",
    ]
    for lines in (pi_lines, tau_lines):
        at = next(i for i, line in enumerate(lines) if line.startswith("Session exported to: "))
        assert Path(tau.work, lines[at].removeprefix("Session exported to: ")) == tau.work / "chat.html"
        lines[at] = "Session exported to: chat.html"
        assert lines[at : at + 4] == expected, lines


def _empty_lists(terminal: Terminal) -> list[str]:
    """/tree and /resume on a new session: the line each list shows in place of its rows."""
    shown = []
    for command, words in (("/tree", "No entries found"), ("/resume", "No sessions in current folder")):
        terminal.settle()
        terminal.type(command)
        terminal.send(ENTER)
        terminal.wait_for(words, where="display")
        shown.append(next(line.strip() for line in terminal.display().splitlines() if words in line))
        terminal.send(ESCAPE)
        terminal.wait_for(lambda words=words: words not in terminal.display())
    return shown


def test_tree_and_resume_with_nothing_to_list_say_so_in_pis_words(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    pi_shown = _on_pi(tau, tmp_path, _empty_lists)
    assert (
        pi_shown
        == _empty_lists(start_tui(cols=140))
        == ["No entries found", "No sessions in current folder. Press Tab to view all."]
    )


def test_the_model_picker_rows_are_pis(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    """/model's rows: the current model ticked, a name that says more than the id, the provider,
    the default model marked; and the line above them."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"] += [
        {"id": "other-model", "name": "Other Thing", "contextWindow": 50000, "maxTokens": 1000},
        {"id": "third-model-2", "name": "Third Model 2", "contextWindow": 50000, "maxTokens": 1000},
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    settings = json.dumps({"defaultProvider": "local", "defaultModel": "other-model"})
    (tau.agent_dir / "settings.json").write_text(settings)
    (tmp_path / "pi-agent").mkdir()
    (tmp_path / "pi-agent" / "settings.json").write_text(settings)

    def rows(terminal: Terminal) -> list[str]:
        terminal.settle()
        terminal.type("/model")
        terminal.send(ENTER)
        terminal.wait_for("third-model-2 [local]", where="display")
        lines = terminal.display().splitlines()
        hint = next(line.strip() for line in lines if "configured providers" in line)
        return [
            hint,
            *(line[2:].rstrip() for line in lines if line.rstrip().endswith(("[local]", "default"))),
        ]

    pi_rows = _on_pi(tau, tmp_path, rows)
    assert (
        pi_rows
        == rows(start_tui(cols=140))
        == [
            "Only showing models from configured providers. Use /login to add providers.",
            "✓ fake-model [local]",
            "  other-model (Other Thing) [local] · default",
            "  third-model-2 [local]",
        ]
    )


def _session_info(terminal: Terminal) -> list[str]:
    """/session's lines, the session's own file and id aside."""
    terminal.settle()
    terminal.type("/session")
    terminal.send(ENTER)
    terminal.wait_for("Status: ", where="display")
    lines = [line.strip() for line in terminal.display().splitlines()]
    start = lines.index("Session Info")
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Status: "))
    shown = [line for line in lines[start : end + 1] if line]
    return [line for line in shown if not line.startswith(("File:", "ID:", "/")) and ".jsonl" not in line]


def test_session_shows_pis_sections(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    tau.server.add(Turn(text="Hello there."), Turn(text="Hello there."))
    pi = _pi(tau, tmp_path)
    try:
        pi.type("hi")
        pi.send(ENTER)
        pi.wait_for("Hello there.")
        pi_info = _session_info(pi)
    finally:
        pi.close()
    terminal = start_tui(cols=140)
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("Hello there.")
    tau_info = _session_info(terminal)
    assert (
        pi_info
        == tau_info
        == [
            "Session Info",
            "Messages",
            "Total: 3",  # the recorded system prompt is a message too
            "User: 1",
            "Assistant: 1",
            "Tools: 0 calls, 0 results",
            "Tokens",
            "Input: 10",
            "Output: 5",
            "Total: 15",
            "Cache Warming",
            "Mode: idle",
            "Status: Inactive (cache lifetime unavailable)",
        ]
    )


def test_settings_rows_are_pis_with_the_values_in_a_column(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/settings' first rows: the same settings in the same order, each value in the column pi
    puts it; the highlighted row's description under the list (tau's words for it)."""

    def rows(terminal: Terminal) -> list[str]:
        terminal.settle()
        terminal.type("/settings")
        terminal.send(ENTER)
        terminal.wait_for("Terminal progress", where="display")
        lines = terminal.display().splitlines()
        first = next(i for i, line in enumerate(lines) if line[2:].startswith("Auto-compact "))
        return [line[2:].rstrip() for line in lines[first : first + 10]]

    pi_rows = _on_pi(tau, tmp_path, rows)
    terminal = start_tui(cols=140)
    assert pi_rows == rows(terminal)
    assert pi_rows[0] == f"{'Auto-compact':<34}true"
    lines = [line.strip() for line in terminal.display().splitlines()]
    assert lines[lines.index("Steering mode" + " " * 21 + "one-at-a-time") + 2 :][:3] == [
        "(1/34)",
        "",
        "Summarise the conversation when the context fills up",
    ]


def test_scoped_models_starts_with_every_model_on_and_switches_one_off_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/scoped-models: pi's title, every model ticked while none is chosen, one switched off with
    Enter and the count after it (pi writes its keys capitalised, tau as keybindings.json does)."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"] += [
        {"id": "other-model", "name": "Other Thing", "contextWindow": 50000, "maxTokens": 1000}
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(models))

    def seen(terminal: Terminal) -> list[list[str]]:
        terminal.settle()
        terminal.type("/scoped-models")
        terminal.send(ENTER)
        shots = []
        for count in ("all enabled", "1/2 enabled"):
            if shots:
                terminal.send(ENTER)  # the first row off
            terminal.wait_for(
                lambda count=count: count in terminal.display().replace("\n", " "), where="display"
            )
            lines = [line.rstrip() for line in terminal.display().splitlines()]
            title = lines.index("Model Configuration")
            rows = [line[2:] for line in lines if line.endswith("[local]")]
            shots.append([lines[title], lines[title + 1].split(".")[0], *rows])
        return shots

    pi_seen = _on_pi(tau, tmp_path, seen)
    assert (
        pi_seen
        == seen(start_tui(cols=140))
        == [
            [
                "Model Configuration",
                "Session-only",
                "✓ fake-model [local]",
                "✓ other-model (Other Thing) [local]",
            ],
            [
                "Model Configuration",
                "Session-only",
                "✓ other-model (Other Thing) [local]",
                "  fake-model [local]",
            ],
        ]
    )


def test_the_session_pickers_header_is_pis(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    """/resume's header: the scope, then which sessions and in what order, as pi 1.6 words them
    (pi puts the second half at the right edge)."""

    def header(terminal: Terminal) -> str:
        terminal.settle()
        terminal.type("/resume")
        terminal.send(ENTER)
        terminal.wait_for("Sort: Threaded", where="display")
        terminal.settle()  # the whole frame: the list's sessions load after the header is drawn
        line = next(line for line in terminal.display().splitlines() if "Sort: Threaded" in line)
        return " ".join(line.split())

    pi_header = _on_pi(tau, tmp_path, header)
    assert (
        pi_header
        == header(start_tui(cols=140))
        == "Resume Session (Current Folder) ◉ Current Folder | ○ All Name: All Sort: Threaded"
    )


def test_fork_lists_the_messages_in_order_and_forks_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/fork after two questions: pi's title and line under it, the questions in order with their
    numbers, the last highlighted; taking the first forks into a new session with it in the editor."""
    for _ in range(4):
        tau.server.add(Turn(text="Hello there."))

    def fork(terminal: Terminal) -> list[str]:
        for count, question in enumerate(("first question", "second question"), 1):
            terminal.type(question)
            terminal.send(ENTER)
            terminal.wait_for(lambda count=count: terminal.text().count("Hello there.") >= count)
        terminal.settle()
        terminal.type("/fork")
        terminal.send(ENTER)
        terminal.wait_for("Message 2 of 2", where="display")
        lines = [line.strip() for line in terminal.display().splitlines()]
        title = lines.index("Fork from Message")
        picker = [
            lines[title + 1],
            *(line for line in lines[title:] if "question" in line or line.startswith("Message ")),
        ]
        terminal.send("\x1b[A")  # Up: the first question
        terminal.send(ENTER)
        terminal.wait_for("Forked to new session")
        terminal.wait_for(lambda: _editor_text(terminal) == "first question")
        return picker

    pi_picker = _on_pi(tau, tmp_path, fork)
    tau_picker = fork(start_tui(cols=140))
    # pi puts each number on a line of its own, tau beside the message
    tau_flat = [part.strip() for line in tau_picker for part in re.split(r"\s{2,}(?=Message )", line)]
    pi_flat = [line.removeprefix("› ").strip() for line in pi_picker]
    assert (
        [line.removeprefix("› ") for line in tau_flat]
        == pi_flat
        == [
            "Select a user message to copy the active path up to that point into a new session",
            "first question",
            "Message 1 of 2",
            "second question",
            "Message 2 of 2",
        ]
    )
    assert any(line.startswith("› second question") for line in tau_picker)


def test_cycling_models_and_a_new_session_are_worded_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """Ctrl+P names the model it switched to by its name, and /new starts a session, as pi 1.6
    says them."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"].append(
        {"id": "other-model", "name": "Other Thing", "contextWindow": 50000, "maxTokens": 1000}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))

    def words(terminal: Terminal) -> list[str]:
        terminal.settle()
        said = []
        for keys, word in (("\x10", "Switched to"), ("/new", "New session started")):  # Ctrl+P, then /new
            if keys.startswith("/"):
                terminal.type(keys)
                keys = ENTER
            terminal.send(keys)
            terminal.wait_for(word)
            said.append(next(line.strip() for line in terminal.text().splitlines() if word in line))
        return said

    pi_words = _on_pi(tau, tmp_path, words)
    assert pi_words == words(start_tui(cols=140)) == ["Switched to Other Thing", "✓ New session started"]


def test_the_model_picker_names_the_highlighted_model_and_ctrl_s_saves_it_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/model: the highlighted model's name under the list, pi's keys line (pi capitalises the
    keys), Ctrl+S switching to it and saving it as the default, Enter for this session only."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"].append(
        {"id": "other-model", "name": "Other Thing", "contextWindow": 50000, "maxTokens": 1000}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))

    def seen(terminal: Terminal, agent_dir: Path) -> list[str]:
        terminal.settle()
        said = []
        for key, word in (("\x13", "Default model:"), (ENTER, "Model: fake-model")):  # Ctrl+S, Enter
            terminal.type("/model")
            terminal.send(ENTER)
            terminal.wait_for("Model Name: ", where="display")
            terminal.send("\x1b[B" if key == "\x13" else "\x1b[A")  # Down to the other model, Up back
            terminal.wait_for(
                lambda key=key: ("Other Thing" if key == "\x13" else "Name: fake-model") in terminal.display()
            )
            lines = [line.strip() for line in terminal.display().splitlines()]
            said += [
                next(line for line in lines if line.startswith("Model Name: ")),
                next(line for line in lines if "to set as default" in line).lower(),
            ]
            terminal.send(key)
            terminal.wait_for(word)
            said.append(next(line.strip() for line in terminal.text().splitlines()[::-1] if word in line))
            settings = json.loads((agent_dir / "settings.json").read_text())
            said.append(f"{settings['defaultProvider']}/{settings['defaultModel']}")
        return said

    pi_seen = _on_pi(tau, tmp_path, lambda pi: seen(pi, tmp_path / "pi-agent"))
    keys = "enter to select · ctrl+s to set as default · escape/ctrl+c to cancel"
    assert (
        pi_seen
        == seen(start_tui(cols=140), tau.agent_dir)
        == [
            "Model Name: Other Thing",
            keys,
            "Default model: local/other-model",
            "local/other-model",
            "Model Name: fake-model",
            keys,
            "Model: fake-model",
            "local/other-model",  # Enter leaves the default as it was
        ]
    )


def test_the_tree_pickers_header_and_status_line_are_pis(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/tree: pi's title, its help of the picker's keys (the same words in the same order; tau
    has no key for pi's copy, pages with PgUp/PgDn, labels with Ctrl+L, binds no labeled-only
    filter by default and names only keys a terminal can send), "Type to search:", the line under
    the rows with the filter, and the rows (the recorded system prompt first, as pi's "[system]")."""
    tau.server.add(Turn(text="Hello there."), Turn(text="Hello there."))

    def header(terminal: Terminal) -> list[str]:
        terminal.type("hi")
        terminal.send(ENTER)
        terminal.wait_for("Hello there.")
        terminal.settle()
        terminal.type("/tree")
        terminal.send(ENTER)
        terminal.wait_for("Type to search:", where="display")
        lines = [line.strip() for line in terminal.display().splitlines()]
        title = lines.index("Session Tree")
        search = next(i for i in range(title, len(lines)) if lines[i].startswith("Type to search:"))
        terminal.send("\x15")  # Ctrl+U: user messages only
        terminal.wait_for(lambda: "[user]" in terminal.display(), where="display")
        status = next(line.strip() for line in terminal.display().splitlines() if "[user]" in line)
        terminal.send("\x04")  # Ctrl+D: the default filter again
        terminal.wait_for(lambda: "[user]" not in terminal.display(), where="display")
        lines = [line.strip() for line in terminal.display().splitlines()]
        first = next(i for i, line in enumerate(lines) if line.endswith("[system]"))
        # the rows as words: pi marks each with "•", tau the path with "│" and the leaf with "●"
        rows = [re.sub(r"^(› )?[•│●] ", "", line) for line in lines[first : first + 3]]
        return [lines[title], " · ".join(lines[title + 1 : search]), lines[search], status, *rows]

    pi_header = _on_pi(tau, tmp_path, header)
    tau_header = header(start_tui(cols=140))
    assert pi_header[0] == tau_header[0] == "Session Tree"
    assert (
        pi_header[2:]
        == tau_header[2:]
        == ["Type to search:", "(1/1) [user]", "[system]", "user: hi", "assistant: Hello there."]
    )
    assert pi_header[1] == (
        "↑/↓ move · ←/→ page · ctrl+←/→ branch · ctrl+x copy · shift+l label · shift+t label time"
        " · filters ctrl+d/t/u/l/a · cycle ctrl+o/shift+ctrl+o"
    )
    assert tau_header[1] == (
        "↑/↓ move · pgup/pgdn page · ctrl+←/→ branch · ctrl+l label · shift+t label time"
        " · filters ctrl+d/t/u/a · cycle ctrl+o"  # a terminal cannot tell Shift+Ctrl+O from Ctrl+O
    )


def _every_setting(terminal: Terminal, marker: str) -> list[str]:
    """/settings' rows from the first down to the last (Down once per row), each as the line
    under the list counts it."""
    terminal.settle()
    terminal.type("/settings")
    terminal.send(ENTER)
    terminal.wait_for("(1/", where="display")
    rows: list[str] = []
    while True:
        lines = terminal.display().splitlines()
        row = next(line[2:].rstrip() for line in lines if line.startswith(marker))
        count = next(line.strip() for line in lines if re.fullmatch(r"\s*\(\d+/\d+\)", line))
        rows.append(f"{row}  {count}")
        at, total = count[1:-1].split("/")
        if at == total:
            return rows
        terminal.send("\x1b[B")
        terminal.wait_for(lambda count=count: count not in terminal.display(), where="display")


def test_settings_counts_its_rows_and_lists_pis_33(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    """/settings row by row: pi's 33 settings with their values in pi's order, counted "(i/n)"
    under the list; tau leaves out pi's install telemetry (it sends none) and adds its own two at
    the end."""
    pi_rows = _on_pi(tau, tmp_path, lambda pi: _every_setting(pi, "→"))
    tau_rows = _every_setting(start_tui(cols=140), "›")

    def plain(rows: list[str]) -> list[str]:
        return [" ".join(row.rsplit("  (", 1)[0].split()) for row in rows]

    assert len(pi_rows) == 33 and pi_rows[0].endswith("(1/33)") and pi_rows[-1].endswith("(33/33)")
    assert len(tau_rows) == 34 and tau_rows[0].endswith("(1/34)") and tau_rows[-1].endswith("(34/34)")
    pis = [row.replace("TUI mode fullscreen", "TUI mode regular") for row in plain(pi_rows)]  # pi's default
    assert [row for row in pis if not row.startswith("Install telemetry")] + [
        "Thinking level off",
        "Auto-retry true",
    ] == plain(tau_rows)
    assert "Warnings configure" in pis


def _hotkey_tables(terminal: Terminal, last: str) -> dict[str, list[str]]:
    """/hotkeys' tables: each section's title and the keys of its rows, in order (pi draws its
    tables with boxes, tau as a reply's Markdown tables are drawn; the keys are the first column)."""
    terminal.settle()
    terminal.type("/hotkeys")
    terminal.send(ENTER)
    terminal.wait_for(last)
    lines = terminal.text().splitlines()
    lines = lines[max(i for i, line in enumerate(lines) if line.strip() == "Keyboard Shortcuts") :]
    tables: dict[str, list[str]] = {}
    section = ""
    for line in lines[1:]:
        cells = [cell.strip() for cell in re.split(r"│|\s{2,}", line.strip()) if cell.strip()]
        if len(cells) == 1 and cells[0] in ("Navigation", "Editing", "Other", "Extensions"):
            section = cells[0]
            tables[section] = []
        elif section and len(cells) >= 2 and cells[0] != "Key" and "─" not in line:
            tables[section].append(cells[0])
        if last in line:
            break
    return tables


def test_hotkeys_are_pis_three_tables(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    """/hotkeys: pi's sections in order, the same actions in each with the same keys (pi
    capitalises them; tau writes them as keybindings.json does and leaves out Shift+Ctrl+P, which
    a terminal cannot tell from Ctrl+P); what each does in tau's own words."""
    pi_tables = _on_pi(
        tau, tmp_path, lambda pi: _hotkey_tables(pi, "(excluded from context)"), rows=120
    )  # pi draws the tables over again when they do not fit
    tau_tables = _hotkey_tables(start_tui(rows=120, cols=140), "kept from the model")
    assert list(pi_tables) == list(tau_tables) == ["Navigation", "Editing", "Other"]
    assert {section: len(keys) for section, keys in pi_tables.items()} == {
        "Navigation": 7,
        "Editing": 9,
        "Other": 18,
    }
    pi_keys = {
        section: [key.lower().replace(" / shift+ctrl+p", "") for key in keys]
        for section, keys in pi_tables.items()
    }
    assert pi_keys == tau_tables
    assert tau_tables["Navigation"][0] == "up / down / left/ctrl+b / right/ctrl+f"


CHANGELOG = """# Changelog

Words before the first version.

## [0.2.0] - 2026-12-24

### Added

- The newest thing.

## 0.1.0

- An older thing.

## Not a version

- Left out.
"""


def test_changelog_shows_every_version_oldest_first_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """/changelog with the same CHANGELOG.md (PI_PACKAGE_DIR / TAU_PACKAGE_DIR): "What's New",
    then each version's section, the newest last next to the editor, the words before the first
    version and a section without one left out. (pi writes a list's "-" and a "###" as they are,
    tau draws them as a reply's Markdown.) Typed, its completion closed with Esc, then Enter."""
    package = pi16_ai_package()[1].parent / "pi-coding-agent"  # .ci/pi16 or $TAU_TEST_PI16_DIR
    moved = tmp_path / "package"
    moved.mkdir()
    for item in package.iterdir():
        if item.name != "CHANGELOG.md":
            (moved / item.name).symlink_to(item)
    (moved / "CHANGELOG.md").write_text(CHANGELOG)

    def shown(terminal: Terminal) -> list[str]:
        terminal.settle()
        terminal.type("/changelog")
        terminal.wait_for("changelog", where="display")
        terminal.send(ESCAPE)
        terminal.settle()
        terminal.send(ENTER)
        terminal.wait_for("The newest thing.")
        lines = [line.strip() for line in terminal.text().splitlines()]
        start = max(i for i, line in enumerate(lines) if line == "What's New")
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("───"))
        return [re.sub(r"^(- |• |#+ )", "", line) for line in lines[start:end] if line]

    pi_env = tau.env
    tau.env = tau.env | {"PI_PACKAGE_DIR": str(moved)}
    pi = _pi(tau, tmp_path)
    tau.env = pi_env | {"TAU_PACKAGE_DIR": str(moved)}
    try:
        pi_shown = shown(pi)
    finally:
        pi.close()
    assert (
        pi_shown
        == shown(start_tui(cols=140))
        == ["What's New", "0.1.0", "An older thing.", "[0.2.0] - 2026-12-24", "Added", "The newest thing."]
    )


def test_the_slash_menu_lists_the_commands_in_pis_order(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """ "/" on an empty editor: the first rows of the completion menu are pi's first five commands
    in pi's order (each described in tau's words; pi writes them without the "/")."""

    def first_rows(terminal: Terminal) -> list[str]:
        terminal.settle()
        terminal.type("/")
        terminal.wait_for(lambda: "thinking" in terminal.display(), where="display")
        terminal.settle()
        lines = terminal.display().splitlines()
        rule = max(i for i, line in enumerate(lines) if is_rule(line))
        rows = [line.strip().removeprefix("→").strip() for line in lines[rule + 1 :]]
        return [row.split()[0].removeprefix("/") for row in rows[:5]]

    pi_rows = _on_pi(tau, tmp_path, first_rows)
    assert (
        pi_rows
        == first_rows(start_tui(cols=140))
        == ["settings", "model", "tree", "thinking", "scoped-models"]
    )


def test_quiet_startup_leaves_out_the_header_or_keeps_only_it_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """quietStartup true: nothing above the editor (pi's warnings that fd and rg are missing aside,
    pi's own tools); "header": the version, a line of keys and pi's words for Ctrl+O, nothing of
    what was loaded."""
    (tau.agent_dir / "skills" / "brew").mkdir(parents=True)
    (tau.agent_dir / "skills" / "brew" / "SKILL.md").write_text(
        "---\nname: brew\ndescription: Brew\n---\nBrew.\n"
    )

    def above_the_editor(terminal: Terminal) -> list[str]:
        terminal.settle()
        lines = [line.strip() for line in terminal.display().splitlines()]
        rule = next(i for i, line in enumerate(lines) if is_rule(line))
        return [line for line in lines[:rule] if line and "not found. Offline mode" not in line]

    seen = {}
    for quiet in (True, "header"):
        for folder in (tau.agent_dir, tmp_path / "pi-agent"):
            folder.mkdir(exist_ok=True)
            (folder / "settings.json").write_text(json.dumps({"quietStartup": quiet}))
        pi = _pi(tau, tmp_path)
        try:
            pi_lines = above_the_editor(pi)
        finally:
            pi.close()
        terminal = start_tui(cols=140)
        seen[quiet] = (pi_lines, above_the_editor(terminal))
        terminal.close()
    assert seen[True] == ([], [])
    pi_header, tau_header = seen["header"]
    assert pi_header[-2:] == [
        "Press ctrl+o to show full startup help.",
        "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.",
    ]
    assert (
        tau_header[0] == f"tau v{__version__}" and tau_header[-1] == "Press ctrl+o to show full startup help."
    )
    assert len(tau_header) == 3 and "brew" not in " ".join(tau_header)


def test_a_run_with_a_tool_call_shows_working_in_the_editors_rule_and_pis_footer(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """While a tool runs: the call and its elapsed time, "Working" written into the editor's top
    rule with the spinner (as pi 1.6 embeds it), and the footer's two lines as pi's; after it,
    the output, how long it took and the reply."""
    for _ in range(2):
        tau.server.add(
            Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 3; echo slow-done"})]),
            Turn(text="All done."),
        )

    def seen(terminal: Terminal) -> list[list[str]]:
        terminal.settle()
        terminal.type("go")
        terminal.send(ENTER)
        shots = []
        for words, footer in (("Elapsed", "↑10 "), ("All done.", "↑20 ")):
            # A screen is read once the words and the footer they come with are both drawn: the
            # footer's usage line is redrawn a moment after the call appears.
            terminal.wait_for(
                lambda words=words, footer=footer: all(
                    part in terminal.display() for part in (words, footer)
                ),
                where="display",
                timeout=30,
            )
            if words == "All done.":
                terminal.wait_for(lambda: "Working" not in terminal.display(), where="display")
            lines = [line.rstrip() for line in terminal.display().splitlines()]
            start = next((i for i, line in enumerate(lines) if line.strip() == "go"), None)
            assert start is not None, "\n".join(lines)
            shown = [
                re.sub(r"^── \S+ Working ─+$", "── (spinner) Working ───", line) for line in lines[start:]
            ]
            shot = [" ".join(line.split()) for line in shown if line.strip() and set(line) != {"─"}]
            # How long the call ran is read apart: the timer is a wall clock (3.0 s or 3.1 s on a
            # busy machine), the line it sits on is compared whole with the figure taken out.
            for index, line in enumerate(shot):
                timed = re.fullmatch(r"(Elapsed|Took) (\d+\.\d)s", line)
                if timed:
                    seconds = float(timed[2])
                    assert seconds < 3 if timed[1] == "Elapsed" else 3 <= seconds < 6, line
                    shot[index] = f"{timed[1]} (seconds)"
            shots.append(shot)
        return shots

    pi_seen = _on_pi(tau, tmp_path, seen)
    work = str(tau.work)
    assert (
        pi_seen
        == seen(start_tui(cols=140))
        == [
            [
                "go",
                "$ sleep 3; echo slow-done",
                "Elapsed (seconds)",
                "── (spinner) Working ───",
                work,
                "↑10 ↓5 0.0%/100k (auto) fake-model",
            ],
            [
                "go",
                "$ sleep 3; echo slow-done",
                "slow-done",
                "Took (seconds)",
                "All done.",
                work,
                "↑20 ↓10 0.0%/100k (auto) fake-model",
            ],
        ]
    )


def test_the_slash_menu_marks_moves_filters_and_counts_as_pis(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """pi's list under the editor: ``→`` on the highlighted row and the names without the slash;
    Down moves the mark and leaves the typed text alone; ``(3/N)`` under the rows while they do not
    all fit; a typed filter ranks the commands as pi's fuzzy match does. (The descriptions are each
    program's own words, and tau has two commands more, so N is left out.)"""

    def menu(terminal: Terminal) -> tuple[str, list[str]]:
        lines = [line.rstrip() for line in terminal.display().splitlines()]
        rule = max(i for i, line in enumerate(lines) if is_rule(line))
        rows = []
        for line in lines[rule + 1 :]:
            if line.strip() == str(tau.work):
                break
            marker, name = line[:2], line[2:].split(" ")[0]
            rows.append(marker + re.sub(r"/\d+\)$", "/N)", name))
        return lines[rule - 1].strip(), rows

    def seen(terminal: Terminal) -> list[tuple[str, list[str]]]:
        terminal.settle()
        terminal.type("/")  # then Down twice
        terminal.wait_for("→ settings", where="display")
        terminal.send("\x1b[B")
        terminal.send("\x1b[B")
        terminal.wait_for("→ tree", where="display")
        terminal.settle()
        moved = menu(terminal)
        counters = []
        for key, counter in (("\x1b[6~", "  (8/"), ("\x1b[5~", "  (3/"), ("\x1b[5~", "  (1/")):
            terminal.send(key)  # Page Down, Page Up twice: a page of five rows, stopping at the top
            terminal.wait_for(lambda counter=counter: counter in terminal.display(), where="display")
            counters.append(menu(terminal)[1][-1])
        terminal.type("se")
        terminal.wait_for(lambda: "→ settings" in terminal.display(), where="display")
        terminal.settle()
        return [moved, ("paged", counters), menu(terminal)]

    pi_seen = _on_pi(tau, tmp_path, seen)
    assert (
        pi_seen
        == seen(start_tui(cols=140))
        == [
            ("/", ["  settings", "  model", "→ tree", "  thinking", "  scoped-models", "  (3/N)"]),
            ("paged", ["  (8/N)", "  (3/N)", "  (1/N)"]),
            ("/se", ["→ settings", "  session", "  scoped-models", "  share", "  resume"]),
        ]
    )


def test_model_and_thinking_arguments_are_suggested_as_pis(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    """``/model fa`` suggests the matching models (the id, the provider beside it) and Enter puts
    ``provider/id`` into the text without running the command; ``/thinking `` suggests the levels
    the model has."""

    def below_the_editor(terminal: Terminal) -> tuple[str, list[str]]:
        lines = [" ".join(line.split()) for line in terminal.display().splitlines()]
        rule = max(i for i, line in enumerate(lines) if line and set(line) == {"─"})
        rows = [line for line in lines[rule + 1 :] if line and line != str(tau.work)]
        return lines[rule - 1], rows[:-1]  # the footer's usage line left out

    def seen(terminal: Terminal) -> list[tuple[str, list[str]]]:
        terminal.settle()
        terminal.type("/model fa")
        terminal.wait_for("→ fake-model", where="display")
        shots = [below_the_editor(terminal)]
        terminal.send(ENTER)
        terminal.wait_for(lambda: "→" not in terminal.display(), where="display")
        shots.append(below_the_editor(terminal))
        terminal.send("\x15")  # Ctrl+U
        terminal.type("/thinking ")
        terminal.wait_for("→ off", where="display")
        shots.append(below_the_editor(terminal))
        return shots

    pi_seen = _on_pi(tau, tmp_path, seen)
    assert (
        pi_seen
        == seen(start_tui(cols=140))
        == [
            ("/model fa", ["→ fake-model local"]),
            ("/model local/fake-model", []),
            ("/thinking", ["→ off"]),
        ]
    )


def test_login_arguments_are_suggested_as_pis(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    """``/login open`` suggests the matching providers with their names and kinds of sign-in."""

    def rows(terminal: Terminal) -> list[str]:
        terminal.settle()
        terminal.type("/login open")
        terminal.wait_for("→ ", where="display")
        terminal.settle()
        lines = [" ".join(line.split()) for line in terminal.display().splitlines()]
        rule = max(i for i, line in enumerate(lines) if line and set(line) == {"─"})
        return lines[rule + 1 : lines.index(str(tau.work))]

    pi_rows = _on_pi(tau, tmp_path, rows)
    assert pi_rows == rows(start_tui(cols=140))
    assert pi_rows[:3] == [
        "→ openrouter OpenRouter · account/API key",
        "openai OpenAI · subscription/API key",
        "openai-codex OpenAI Codex · subscription",
    ]
    assert len(pi_rows) == 6 and pi_rows[-1] == "(1/12)"

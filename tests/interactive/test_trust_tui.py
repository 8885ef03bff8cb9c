"""Project trust in the terminal UI: the start-up question, its answers, and /trust."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from tau_command import MODEL, TauCommand
from terminal import ENTER, ESCAPE, Terminal

Start = Callable[..., Terminal]
DOWN = "\x1b[B"
QUESTION = "Trust project folder?"

MARKER_EXTENSION = """\
from pathlib import Path


def setup(tau):
    Path(__file__).resolve().parents[2].joinpath("marker.txt").write_text("ran")
"""


def project_extension(tau: TauCommand) -> Path:
    folder = tau.work / ".tau" / "extensions"
    folder.mkdir(parents=True)
    (folder / "mark.py").write_text(MARKER_EXTENSION)
    return tau.work / "marker.txt"


def saved(tau: TauCommand) -> object:
    return json.loads((tau.agent_dir / "trust.json").read_text())


def ask(tau: TauCommand) -> Terminal:
    """tau started in the project folder, showing the trust question."""
    terminal = Terminal([sys.executable, "-m", "tau", *MODEL], cwd=str(tau.work), env=tau.env)
    terminal.wait_for(QUESTION)
    return terminal


def test_trusting_at_the_question_runs_the_extension_and_saves_the_folder(tau: TauCommand) -> None:
    marker = project_extension(tau)
    terminal = ask(tau)
    try:
        screen = terminal.display()
        assert str(tau.work.resolve()) in screen
        for label in ("Trust", "Trust parent folder", "Trust (this session only)", "Do not trust"):
            assert label in screen
        assert not marker.exists()  # nothing of the folder runs before the answer
        terminal.send(ENTER)
        terminal.wait_for("fake-model", where="display")
        assert QUESTION not in terminal.display()
        assert marker.read_text() == "ran"
        assert saved(tau) == {str(tau.work.resolve()): True}
    finally:
        terminal.close()


def test_declining_at_the_question_keeps_the_extension_out_and_says_so(tau: TauCommand) -> None:
    marker = project_extension(tau)
    terminal = ask(tau)
    try:
        for _ in range(3):  # Trust, parent, this session only, then Do not trust
            terminal.send(DOWN)
        terminal.send(ENTER)
        terminal.wait_for("This folder is not trusted")
        assert not marker.exists()
        assert saved(tau) == {str(tau.work.resolve()): False}
    finally:
        terminal.close()


def test_escape_at_the_question_trusts_nothing_and_saves_nothing(tau: TauCommand) -> None:
    marker = project_extension(tau)
    terminal = ask(tau)
    try:
        terminal.send(ESCAPE)
        terminal.wait_for("This folder is not trusted")
        assert not marker.exists()
        assert not (tau.agent_dir / "trust.json").exists()
    finally:
        terminal.close()


def test_a_session_only_trust_runs_the_extension_and_saves_nothing(tau: TauCommand) -> None:
    marker = project_extension(tau)
    terminal = ask(tau)
    try:
        terminal.send(DOWN)
        terminal.send(DOWN)
        terminal.send(ENTER)
        terminal.wait_for("fake-model", where="display")
        assert marker.exists()
        assert not (tau.agent_dir / "trust.json").exists()
    finally:
        terminal.close()


def test_a_saved_decision_is_not_asked_again(tau: TauCommand, start_tui: Start) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "trust.json").write_text(json.dumps({str(tau.work.resolve()): True}))
    terminal = start_tui()
    assert QUESTION not in terminal.text()
    assert marker.exists()


def test_a_damaged_trust_file_asks_again(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "trust.json").write_text("{broken")
    terminal = ask(tau)
    try:
        assert not marker.exists()
    finally:
        terminal.close()


def test_no_approve_asks_nothing_and_loads_nothing(tau: TauCommand, start_tui: Start) -> None:
    marker = project_extension(tau)
    terminal = start_tui("-na")
    terminal.wait_for("This folder is not trusted")
    assert QUESTION not in terminal.text()
    assert not marker.exists()


def test_a_folder_with_nothing_to_trust_is_not_asked_about(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "AGENTS.md").write_text("Be brief.")
    terminal = start_tui()
    assert QUESTION not in terminal.text()
    assert "not trusted" not in terminal.text()


def test_a_folder_with_only_its_own_themes_is_asked_about(tau: TauCommand) -> None:
    (tau.work / ".tau" / "themes").mkdir(parents=True)  # pi 1.6 protects its .pi/themes too
    (tau.work / ".tau" / "themes" / "loud.json").write_text(json.dumps({"name": "loud", "colors": {}}))
    ask(tau).close()


def test_trust_command_saves_a_decision_for_the_next_start(tau: TauCommand, start_tui: Start) -> None:
    marker = project_extension(tau)
    terminal = start_tui("-na")
    terminal.type("/trust")
    terminal.send(ENTER)
    terminal.wait_for("Project trust")
    assert "Saved decision: none" in terminal.display()
    assert "This session: not trusted" in terminal.display()
    terminal.send(ENTER)  # Trust
    terminal.wait_for("Saved trust decision: trusted")
    assert saved(tau) == {str(tau.work.resolve()): True}
    assert not marker.exists()  # the running session keeps what it loaded


def test_trust_command_can_take_trust_back(tau: TauCommand, start_tui: Start) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "trust.json").write_text(json.dumps({str(tau.work.resolve()): True}))
    terminal = start_tui(cols=200)  # wide enough for any temporary folder's path on one line
    assert marker.exists()
    terminal.type("/trust")
    terminal.send(ENTER)
    terminal.wait_for("Project trust")
    assert f"Saved decision: trusted ({tau.work.resolve()})" in terminal.display()
    terminal.send(DOWN)
    terminal.send(DOWN)  # Trust, parent folder, Do not trust
    terminal.send(ENTER)
    terminal.wait_for("Saved trust decision: not trusted")
    assert saved(tau) == {str(tau.work.resolve()): False}


def test_list_models_in_a_terminal_asks_nothing(tau: TauCommand) -> None:
    marker = project_extension(tau)
    terminal = Terminal([sys.executable, "-m", "tau", "--list-models"], cwd=str(tau.work), env=tau.env)
    try:
        assert terminal.wait_exit() == 0
        assert "fake-model" in terminal.text()
        assert QUESTION not in terminal.text()
        assert not marker.exists()
    finally:
        terminal.close()


ASKING_EXTENSION = """\
def setup(tau):
    @tau.on("project_trust")
    async def ask(event, ctx):
        if not ctx.has_ui or ctx.mode != "tui":
            return {"trusted": "undecided"}
        choice = await ctx.ui.select("Extension asks: trust " + event.cwd + "?", ["Keep it out", "Let it in"])
        return {"trusted": "yes" if choice == "Let it in" else "no"}
"""


def test_a_user_extension_can_ask_its_own_trust_question_instead(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.agent_dir / "extensions").mkdir()
    (tau.agent_dir / "extensions" / "ask.py").write_text(ASKING_EXTENSION)
    terminal = Terminal([sys.executable, "-m", "tau", *MODEL], cwd=str(tau.work), env=tau.env)
    try:
        terminal.wait_for("Extension asks: trust")
        assert not marker.exists()
        terminal.send(DOWN)
        terminal.send(ENTER)
        terminal.wait_for("fake-model", where="display")
        assert QUESTION not in terminal.text()  # the extension decided: tau does not ask
        assert marker.read_text() == "ran"
        assert not (tau.agent_dir / "trust.json").exists()
    finally:
        terminal.close()


def session_dir_setting(tau: TauCommand) -> Path:
    """The project's settings choose ``.sessions`` in the folder for its sessions; that folder."""
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"sessionDir": ".sessions"}))
    return tau.work / ".sessions"


def test_the_question_comes_before_the_session_dir_setting_is_used_and_trust_applies_it(
    tau: TauCommand,
) -> None:
    sessions = session_dir_setting(tau)
    terminal = ask(tau)
    try:
        assert not sessions.exists()
        terminal.send(ENTER)
        terminal.wait_for("fake-model", where="display")
        assert sessions.is_dir()  # the session of this run is kept there
    finally:
        terminal.close()


def test_declining_at_the_question_keeps_the_session_out_of_the_folder(tau: TauCommand) -> None:
    sessions = session_dir_setting(tau)
    terminal = ask(tau)
    try:
        for _ in range(3):
            terminal.send(DOWN)
        terminal.send(ENTER)
        terminal.wait_for("This folder is not trusted")
        assert not sessions.exists()
    finally:
        terminal.close()

"""The sandbox in the real terminal UI: the footer names the mode, ``/sandbox`` changes it, and the
user's own ``!`` commands are fenced like the model's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]


def _run(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def test_the_footer_shows_the_mode_and_a_bang_command_is_fenced(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui("--sandbox", "workspace-write", cols=200)
    terminal.wait_for("sandbox: workspace-write")
    _run(terminal, '!echo mine > mine.txt; cd "$TAU_AGENT_DIR" && echo planted > planted')
    terminal.wait_for("Read-only file system")
    assert not (tau.agent_dir / "planted").exists() and (tau.work / "mine.txt").read_text() == "mine\n"
    assert tau.server.requests == []


def test_slash_sandbox_changes_the_mode_and_refuses_an_unknown_one(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui("--sandbox", "workspace-write", cols=200)
    _run(terminal, "/sandbox read-only")
    terminal.wait_for("sandbox: read-only")
    terminal.wait_for("Sandbox: read-only. Commands and file edits may write nothing")
    _run(terminal, "!echo x > here.txt")
    terminal.wait_for("Read-only file system")
    assert not (tau.work / "here.txt").exists()
    _run(terminal, "/sandbox loose")
    terminal.wait_for('unknown sandbox mode "loose"')
    _run(terminal, "/sandbox off")
    terminal.wait_for("Sandbox: off")
    location = next(line for line in terminal.display().splitlines() if line.startswith(str(tau.work)))
    assert location.rstrip() == str(tau.work)


def test_an_escalation_asks_the_user_and_allow_once_runs_that_command(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    escalate = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("bash", {"command": f"echo 1 > {outside}/one", "escalate": escalate})
            ]
        ),
        Turn(text="Written once."),
    )
    terminal = start_tui("--sandbox", "workspace-write", cols=200)
    terminal.wait_for("sandbox: workspace-write")
    _run(terminal, "report")
    terminal.wait_for("Allow for this session")
    assert "write the report" in terminal.text()
    terminal.send(ENTER)  # the first choice: Allow once
    terminal.wait_for("Written once.")
    assert (outside / "one").read_text() == "1\n"


def test_a_session_started_off_and_fenced_with_slash_sandbox_can_escalate(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    escalate = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("bash", {"command": f"echo 1 > {outside}/one", "escalate": escalate})
            ]
        ),
        Turn(text="Written once."),
    )
    terminal = start_tui("--sandbox", "off", cols=200)
    _run(terminal, "/sandbox workspace-write")
    terminal.wait_for("sandbox: workspace-write")
    _run(terminal, "report")
    terminal.wait_for("Allow for this session")
    terminal.send(ENTER)  # Allow once
    terminal.wait_for("Written once.")
    assert (outside / "one").read_text() == "1\n"
    # Fenced before the first request: bash is declared with escalate from the start.
    [bash] = [t for t in tau.server.requests[0].body["tools"] if t["function"]["name"] == "bash"]
    assert "escalate" in bash["function"]["parameters"]["properties"]

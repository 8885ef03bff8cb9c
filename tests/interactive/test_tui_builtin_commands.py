"""``/thinking``, ``/mcp`` without servers and ``/changelog`` in the real terminal UI (as pi 1.6
has them), and an unknown ``/command`` going to the model as pi sends it."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
DOWN = "\x1b[B"


def _reasoning_model(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


def _footer_model_line(terminal: Terminal) -> str:
    return next(line for line in reversed(terminal.display().splitlines()) if "fake-model" in line).rstrip()


def _run(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def _picker_shows(terminal: Terminal, *rows: str) -> Callable[[], bool]:
    """The /thinking picker: its title, the key that cycles the levels, then ``rows``."""

    def check() -> bool:
        lines = [line.rstrip() for line in terminal.display().splitlines()]
        if "Thinking Level" not in lines:
            return False
        at = lines.index("Thinking Level")
        shown = [line for line in lines[at + 1 : at + 9] if line.strip() and not line.startswith("filter:")]
        return shown[: len(rows) + 1] == ["shift+tab cycles thinking levels in-session", *rows]

    return check


def test_thinking_opens_a_level_picker_and_sets_the_chosen_level(tau: TauCommand, start_tui: Start) -> None:
    _reasoning_model(tau)
    terminal = start_tui("--thinking", "low")
    terminal.wait_for(lambda: _footer_model_line(terminal).endswith("fake-model • low"))
    _run(terminal, "/thinking")
    # as pi 1.6 draws it: pi's words for each level, the current one ticked, the default marked
    picker = _picker_shows(
        terminal,
        "    off       No reasoning",
        "    minimal   Very brief reasoning (~1k tokens)",
        "› ✓ low       Light reasoning (~2k tokens)",
        "    medium    Moderate reasoning (~8k tokens) · default",
        "    high      Deep reasoning (~16k tokens)",
    )
    terminal.wait_for(picker)
    terminal.send(DOWN)  # low → medium
    terminal.send(ENTER)
    terminal.wait_for(lambda: _footer_model_line(terminal).endswith("fake-model • medium"))
    terminal.wait_for("Thinking level: medium")
    assert tau.server.requests == []


def test_thinking_with_a_level_sets_it_and_an_unknown_level_names_the_available_ones(
    tau: TauCommand, start_tui: Start
) -> None:
    _reasoning_model(tau)
    terminal = start_tui("--thinking", "low")
    terminal.type("/thinking HIGH")
    terminal.wait_for("→ high", where="display")  # the levels, as pi suggests them
    terminal.send(ENTER)  # takes "high" into the text, as pi's menu does, without running it
    terminal.wait_for(lambda: "→" not in terminal.display(), where="display")
    terminal.send(ENTER)
    terminal.wait_for(lambda: _footer_model_line(terminal).endswith("fake-model • high"))
    _run(terminal, "/thinking lots")
    terminal.wait_for('Unknown thinking level "lots". Available levels: off, minimal, low, medium, high')
    assert tau.server.requests == []


def test_escape_leaves_the_thinking_level_as_it_was(tau: TauCommand, start_tui: Start) -> None:
    _reasoning_model(tau)
    terminal = start_tui("--thinking", "low")
    _run(terminal, "/thinking")
    terminal.wait_for("Thinking Level", where="display")
    terminal.send(DOWN)
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Thinking Level" not in terminal.display())
    assert _footer_model_line(terminal).endswith("fake-model • low")


def test_mcp_without_servers_says_where_to_add_them(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(cols=160)
    _run(terminal, "/mcp")
    terminal.wait_for(
        f"No MCP servers configured. Add them to {tau.agent_dir / 'mcp.json'} or .tau/mcp.json."
    )
    assert tau.server.requests == []


def test_changelog_shows_taus_changelog(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui()
    _run(terminal, "/changelog")
    terminal.wait_for("What's New")
    terminal.wait_for("Nothing to compact (session too small)")
    assert tau.server.requests == []


def test_an_unknown_slash_command_goes_to_the_model_as_pi_sends_it(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="that is not a command I know"))
    terminal = start_tui()
    _run(terminal, "/frobnicate now")
    terminal.wait_for("that is not a command I know")
    [request] = tau.server.requests
    assert "/frobnicate now" in json.dumps(request.body["messages"])


def _fake_gh(tau: TauCommand, *, logged_in: bool = True) -> Path:
    """A ``gh`` on PATH that records its arguments and the file it is given, as gh would upload it."""
    bin_dir = tau.work.parent / "bin"
    bin_dir.mkdir()
    log = tau.work.parent / "gh.log"
    gh = bin_dir / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        f'if [ "$1" = auth ]; then exit {0 if logged_in else 1}; fi\n'
        f'for last; do :; done; cp "$last" {tau.work.parent / "uploaded.html"}\n'
        'echo "https://gist.github.com/someone/0123abcd"\n'
    )
    gh.chmod(0o755)
    tau.env["PATH"] = f"{bin_dir}:{tau.env['PATH']}"
    return log


def test_share_uploads_the_session_page_as_a_private_gist(tau: TauCommand, start_tui: Start) -> None:
    log = _fake_gh(tau)
    tau.server.add(Turn(text="an answer worth sharing"))
    terminal = start_tui(cols=120)
    _run(terminal, "hello")
    terminal.wait_for("an answer worth sharing")
    _run(terminal, "/share")
    terminal.wait_for("Gist: https://gist.github.com/someone/0123abcd")
    calls = log.read_text().splitlines()
    assert calls[0] == "auth status"
    assert calls[1].startswith("gist create --public=false ") and calls[1].endswith("session.html")
    assert "an answer worth sharing" in (tau.work.parent / "uploaded.html").read_text()


def test_share_without_a_gh_login_says_how_to_log_in(tau: TauCommand, start_tui: Start) -> None:
    log = _fake_gh(tau, logged_in=False)
    terminal = start_tui(cols=120)
    _run(terminal, "/share")
    terminal.wait_for("GitHub CLI is not logged in. Run 'gh auth login' first.")
    assert log.read_text().splitlines() == ["auth status"]


def test_share_to_radius_is_refused_saying_what_to_set(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"sessionShareDestination": "radius"}))
    log = _fake_gh(tau)
    terminal = start_tui(cols=120)
    _run(terminal, "/share")
    terminal.wait_for('tau cannot share to Radius: set "sessionShareDestination" to "gist" or "auto"')
    assert not log.exists()


def test_bug_writes_a_report_zip_with_the_transcript_when_chosen_and_no_secrets(
    tau: TauCommand, start_tui: Start
) -> None:
    settings = {"notesUrl": "http://me:hunter2@notes.example:8080", "apiKey": "sk-secret"}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text="the reply before the bug"))
    terminal = start_tui(cols=200)
    _run(terminal, "hello")
    terminal.wait_for("the reply before the bug")
    _run(terminal, "/bug the footer flickers")
    terminal.wait_for("Include the transcript")
    terminal.send(DOWN)
    terminal.send(ENTER)
    terminal.wait_for("Bug report written to")
    [path] = tau.work.glob("tau-bug-report-*.zip")
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["diagnostics.json", "report.json", "session.jsonl"]
        report = json.loads(archive.read("report.json"))
        everything = b"".join(archive.read(name) for name in archive.namelist())
    assert report["hint"] == "the footer flickers" and report["session"]["included"] is True
    assert report["model"]["id"] == "fake-model"
    assert report["settings"]["global"] == {
        "notesUrl": "http://notes.example:8080",
        "apiKey": "<redacted>",
        "lastChangelogVersion": "0.1.0",  # recorded at the first start, as pi 1.6 does
    }
    assert b"the reply before the bug" in everything
    assert b"hunter2" not in everything and b"sk-secret" not in everything and b"local-key" not in everything
    assert len(tau.server.requests) == 1  # nothing sent anywhere


def test_bug_leaves_the_transcript_out_by_default(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="private words"))
    terminal = start_tui(cols=200)
    _run(terminal, "hello")
    terminal.wait_for("private words")
    _run(terminal, "/bug")
    terminal.wait_for("Leave the transcript out")
    terminal.send(ENTER)
    terminal.wait_for("Bug report written to")
    [path] = tau.work.glob("tau-bug-report-*.zip")
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["diagnostics.json", "report.json"]
        assert b"private words" not in b"".join(archive.read(n) for n in archive.namelist())


def test_share_viewer_url_twin_names_the_viewer_page(tau: TauCommand, start_tui: Start) -> None:
    _fake_gh(tau)
    tau.env["PI_SHARE_VIEWER_URL"] = "https://pi.example/session/"
    tau.env["TAU_SHARE_VIEWER_URL"] = "https://tau.example/view/"  # tau's name wins
    tau.server.add(Turn(text="shared"))
    terminal = start_tui(cols=120)
    _run(terminal, "hello")
    terminal.wait_for("shared")
    _run(terminal, "/share")
    terminal.wait_for("Share URL: https://tau.example/view/#0123abcd")
    terminal.wait_for("Gist: https://gist.github.com/someone/0123abcd")

"""pi 1.6's crash log (``<agent dir>/crashes.json``) in tau's terminal UI: recorded, announced once
at the next start, attached by ``/bug`` and then cleared."""

from __future__ import annotations

import json
import time
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.modes.interactive.crash_log import (
    clear_crash_log,
    crash_notice,
    read_crash_log,
    record_crash,
    take_unnotified_crash,
)

Start = Callable[..., Terminal]


def test_a_crash_is_recorded_announced_once_and_cleared(tmp_path: Path) -> None:
    agent = str(tmp_path / "agent")
    for number in range(7):
        try:
            raise RuntimeError(f"boom {number}")
        except RuntimeError as error:
            record_crash(agent, "fatal_error", error, session_file="/s.jsonl", cwd="/work")
    records = read_crash_log(agent)
    assert [r["message"] for r in records] == [f"boom {n}" for n in range(2, 7)]  # the last five
    assert records[-1]["kind"] == "fatal_error" and records[-1]["sessionFile"] == "/s.jsonl"
    assert "RuntimeError: boom 6" in records[-1]["stack"] and records[-1]["version"]
    newest = take_unnotified_crash(agent)
    assert newest is not None and newest["message"] == "boom 6"
    assert crash_notice(newest).endswith(
        "(boom 6). Run /bug to report it; the crash details are attached automatically."
    )
    assert take_unnotified_crash(agent) is None  # said once
    assert take_unnotified_crash(agent, now=time.time() + 8 * 24 * 3600) is None
    clear_crash_log(agent)
    assert read_crash_log(agent) == []


def test_the_next_start_says_so_and_bug_attaches_and_clears_it(tau: TauCommand, start_tui: Start) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    crash = {"timestamp": stamp, "version": "0.1.0", "kind": "fatal_error", "message": "the footer exploded"}
    (tau.agent_dir / "crashes.json").write_text(json.dumps([{**crash, "stack": None, "cwd": "/w"}]))
    terminal = start_tui(cols=200)
    terminal.wait_for("(the footer exploded). Run /bug to report it")
    terminal.type("/bug")
    terminal.send(ENTER)
    terminal.wait_for("include this session's transcript?")
    terminal.send(ENTER)
    terminal.wait_for("Bug report written to")
    [path] = tau.work.glob("tau-bug-report-*.zip")
    with zipfile.ZipFile(path) as archive:
        diagnostics = json.loads(archive.read("diagnostics.json"))
    assert [c["message"] for c in diagnostics["crashes"]] == ["the footer exploded"]
    assert "notified" not in diagnostics["crashes"][0]
    assert not (tau.agent_dir / "crashes.json").exists()

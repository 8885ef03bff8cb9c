"""``tau --export`` through the real command (spec 70 §6, case 33): no model or key needed, the
page path printed, errors as one line with exit code 1; and the export code loads only when used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from export_session import build_session
from tau_command import TauCommand


def test_export_writes_the_named_file_and_prints_its_path(tau: TauCommand, tmp_path: Path) -> None:
    session = build_session(tmp_path).path
    result = tau.run("--export", str(session), "page.html")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Exported to: {tau.work / 'page.html'}\n"
    assert "<!DOCTYPE html>" in (tau.work / "page.html").read_text()


def test_export_without_an_output_path_writes_the_default_name_in_the_current_directory(
    tau: TauCommand, tmp_path: Path
) -> None:
    session = build_session(tmp_path).path
    env = {**tau.env, "TAU_AGENT_DIR": str(tmp_path / "no-agent-dir")}  # no models, no keys, no settings
    result = subprocess.run(
        [sys.executable, "-m", "tau", "--export", str(session)],
        cwd=tau.work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    expected = tau.work / f"tau-session-{session.stem}.html"
    assert result.stdout == f"Exported to: {expected}\n" and expected.exists()
    assert not (tmp_path / "no-agent-dir").exists()


def test_export_of_a_missing_file_fails_with_one_line(tau: TauCommand) -> None:
    result = tau.run("--export", "missing.jsonl")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"tau: File not found: {tau.work / 'missing.jsonl'}\n"


def test_markdown_and_highlighting_load_only_when_exporting() -> None:
    probe = (
        "import sys, tau.cli.main, tau.runtime.agent_session, tau.modes.rpc_commands; "
        "print(sorted(m for m in ('markdown_it', 'pygments', 'tau.export') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"

"""The `tau` command as a user runs it."""

from __future__ import annotations

import subprocess
import sys

from tau import __version__


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tau", *args], capture_output=True, text=True, timeout=30)


def test_version_prints_the_version_and_exits_zero() -> None:
    result = _run("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"tau {__version__}"


def test_help_describes_the_command() -> None:
    result = _run("--help")
    assert result.returncode == 0
    assert "Usage:" in result.stdout and "tau [options]" in result.stdout


def test_an_unknown_short_option_fails_with_a_clear_message() -> None:
    result = _run("-x")
    assert result.returncode == 1
    assert result.stderr.strip() == "tau: error: Unknown option: -x"

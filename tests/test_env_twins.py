"""pi's ``PI_*`` process variables and their ``TAU_*`` twins, read by a real ``tau`` process or
by the code that honours them: tau's name wins when both are set."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tau._env_twins import env_twin, env_twin_flag, tau_only


def _python(code: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TAU_", "PI_"))}
    done = subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_tau_name_wins_over_pi_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_TRUE_COLOR", "0")
    assert env_twin_flag("TRUE_COLOR") is False
    monkeypatch.setenv("TAU_TRUE_COLOR", "yes")
    assert env_twin_flag("TRUE_COLOR") is True
    monkeypatch.setenv("TAU_TRUE_COLOR", "")
    assert env_twin("TRUE_COLOR") == "0"  # an empty TAU_ value is unset
    monkeypatch.setenv("TAU_TRUE_COLOR", "auto")
    assert env_twin_flag("TRUE_COLOR") is None


def test_names_of_pi_installation_are_read_only_under_tau(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_PACKAGE_DIR", "/nix/store/pi")
    monkeypatch.delenv("TAU_PACKAGE_DIR", raising=False)
    assert tau_only("PACKAGE_DIR") is None
    monkeypatch.setenv("TAU_PACKAGE_DIR", "/nix/store/tau")
    assert tau_only("PACKAGE_DIR") == "/nix/store/tau"


def test_radius_gateway_twin_moves_the_gateway() -> None:
    code = "from tau.accounts.oauth.radius import GATEWAY; print(GATEWAY)"
    assert _python(code) == "https://radius.pi.dev"
    assert _python(code, PI_RADIUS_GATEWAY="https://pi-gw.example/") == "https://pi-gw.example"
    both = _python(
        code, PI_RADIUS_GATEWAY="https://pi-gw.example", TAU_RADIUS_GATEWAY="https://tau-gw.example"
    )
    assert both == "https://tau-gw.example"


def test_package_dir_twin_moves_the_readme_the_prompt_names_and_the_changelog(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "README.md").write_text("moved readme")
    (folder / "CHANGELOG.md").write_text("## 9.9.9\nmoved changelog")
    code = (
        "from tau.context.system_prompt import tau_readme_path\n"
        "from tau.modes.interactive.changelog import changelog_text\n"
        "print(tau_readme_path()); print(changelog_text())"
    )
    readme, *changelog = _python(code, TAU_PACKAGE_DIR=str(folder)).splitlines()
    assert readme == str(folder / "README.md")
    assert changelog == ["## 9.9.9", "moved changelog"]
    assert _python(code, PI_PACKAGE_DIR=str(folder)).splitlines()[0] != str(folder / "README.md")


def test_true_color_twin_sets_the_colour_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    from prompt_toolkit.output import ColorDepth

    from tau.modes.interactive.frames import _color_depth

    monkeypatch.setenv("PI_TRUE_COLOR", "1")
    assert _color_depth() == ColorDepth.DEPTH_24_BIT
    monkeypatch.setenv("TAU_TRUE_COLOR", "0")
    assert _color_depth() == ColorDepth.DEPTH_8_BIT


def test_escape_timeout_twin_in_milliseconds(monkeypatch: pytest.MonkeyPatch) -> None:
    from tau.modes.interactive.app import _escape_timeout_s

    for name in ("SSH_CONNECTION", "SSH_TTY", "TAU_TUI_ESC_TIMEOUT", "PI_TUI_ESC_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    assert _escape_timeout_s() == 0.05
    monkeypatch.setenv("SSH_TTY", "/dev/pts/1")
    assert _escape_timeout_s() == 0.1
    monkeypatch.setenv("PI_TUI_ESC_TIMEOUT", "250")
    assert _escape_timeout_s() == 0.25
    monkeypatch.setenv("TAU_TUI_ESC_TIMEOUT", "30")
    assert _escape_timeout_s() == 0.03
    monkeypatch.setenv("TAU_TUI_ESC_TIMEOUT", "soon")  # tau's name wins, and is no number: the default
    assert _escape_timeout_s() == 0.1

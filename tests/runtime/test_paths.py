"""Paths, the offline switch, file locks, atomic writes, and JSON errors that name file, line and column."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tau.config.config_errors import ConfigError, read_json_file, strip_json_comments
from tau.config.paths import (
    LockTimeoutError,
    agent_dir,
    auth_path,
    file_lock,
    is_offline,
    models_path,
    project_settings_path,
    sessions_dir,
    set_offline,
    settings_path,
    write_file_atomic,
)


def test_agent_dir_defaults_to_dot_tau_agent_in_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TAU_AGENT_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))

    assert agent_dir() == tmp_path / ".tau" / "agent"
    assert settings_path() == tmp_path / ".tau" / "agent" / "settings.json"
    assert models_path() == tmp_path / ".tau" / "agent" / "models.json"
    assert auth_path() == tmp_path / ".tau" / "agent" / "auth.json"


def test_agent_dir_from_the_environment_expands_a_tilde(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TAU_AGENT_DIR", "~/custom/agent")

    assert agent_dir() == tmp_path / "custom" / "agent"


def test_project_settings_live_in_dot_tau(tmp_path: Path) -> None:
    assert project_settings_path(tmp_path) == tmp_path / ".tau" / "settings.json"


def test_session_dir_precedence_is_flag_then_environment_then_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TAU_SESSION_DIR", raising=False)
    base = tmp_path / "agent"

    assert sessions_dir(base) == base / "sessions"
    assert sessions_dir(base, settings_dir="/from/settings") == Path("/from/settings")
    monkeypatch.setenv("TAU_SESSION_DIR", "/from/env")
    assert sessions_dir(base, settings_dir="/from/settings") == Path("/from/env")
    assert sessions_dir(base, cli_dir="/from/flag", settings_dir="/from/settings") == Path("/from/flag")


def test_offline_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAU_OFFLINE", raising=False)
    assert not is_offline()
    monkeypatch.setenv("TAU_OFFLINE", "0")
    assert not is_offline()
    monkeypatch.setenv("TAU_OFFLINE", "1")
    assert is_offline()
    monkeypatch.delenv("TAU_OFFLINE")
    set_offline()
    assert is_offline()


def test_pis_offline_switch_counts_unless_tau_offline_says_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAU_OFFLINE", raising=False)
    monkeypatch.setenv("PI_OFFLINE", "1")
    assert is_offline()
    monkeypatch.setenv("TAU_OFFLINE", "0")
    assert not is_offline()
    monkeypatch.delenv("TAU_OFFLINE")
    monkeypatch.setenv("PI_OFFLINE", "0")
    assert not is_offline()


def test_a_held_lock_makes_a_second_locker_time_out(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"

    with (
        file_lock(target),
        pytest.raises(LockTimeoutError, match=r"settings\.json\.lock"),
        file_lock(target, timeout_s=0.05),
    ):
        pass

    with file_lock(target, timeout_s=0.05):
        pass


def test_atomic_write_sets_the_requested_mode_and_keeps_an_existing_one(tmp_path: Path) -> None:
    secret = tmp_path / "dir" / "auth.json"
    write_file_atomic(secret, "{}", mode=0o600)
    plain = tmp_path / "plain.json"
    plain.write_text("old")
    plain.chmod(0o640)

    write_file_atomic(plain, "new")

    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert stat.S_IMODE(plain.stat().st_mode) == 0o640
    assert plain.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "plain.json"]


def test_json_errors_name_file_line_and_column_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{\n  "a": 1,\n  "b": }\n')

    with pytest.raises(ConfigError) as caught:
        read_json_file(path)

    assert (caught.value.line, caught.value.column) == (3, 8)
    assert str(caught.value) == f"{path}:3:8: invalid JSON: Expecting value"


def test_missing_file_reads_as_none(tmp_path: Path) -> None:
    assert read_json_file(tmp_path / "absent.json") is None


def test_comments_and_trailing_commas_are_blanked_without_moving_positions() -> None:
    text = '{\n  // a comment\n  "url": "http://x//y", /* block\n  comment */ "n": [1, 2,],\n}'

    stripped = strip_json_comments(text)

    assert len(stripped) == len(text)
    assert stripped.count("\n") == text.count("\n")
    assert json.loads(stripped) == {"url": "http://x//y", "n": [1, 2]}


def test_errors_after_comments_still_point_at_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text('{\n  // providers\n  "providers": {\n    "x": nope\n  }\n}\n')

    with pytest.raises(ConfigError) as caught:
        read_json_file(path, allow_comments=True)

    assert (caught.value.line, caught.value.column) == (4, 10)


def test_atomic_write_refuses_to_rename_over_a_fifo(tmp_path: Path) -> None:
    # A rename over a device or FIFO replaces it: as root, `--session /dev/null` replaced /dev/null.
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        write_file_atomic(fifo, "{}")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]

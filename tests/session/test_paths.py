"""Where session files go: the folder-naming rule, the agent dir, custom session dirs, file names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.session import (
    SessionManager,
    default_agent_dir,
    default_session_dir,
    encode_cwd,
    resolve_session_dir,
    session_file_name,
)


def test_default_session_dir_replaces_separators_and_colons(tmp_path: Path) -> None:  # spec 40 §13.1
    assert default_session_dir("/a/b:c\\d", str(tmp_path)) == str(tmp_path / "sessions" / "--a-b-c-d--")


def test_cwd_encoding_strips_one_leading_separator_and_keeps_other_characters() -> None:
    assert encode_cwd("/Users/a/w/pi-mono") == "--Users-a-w-pi-mono--"
    assert encode_cwd("C:\\x\\y") == "--C--x-y--"
    assert encode_cwd("//srv/my project/é") == "---srv-my project-é--"


@given(st.text(alphabet=st.sampled_from("/\\:a-é ."), max_size=12) | st.text(max_size=12))
def test_cwd_encoding_is_pis_rule_on_any_text(cwd: str) -> None:
    # pi: "--" + cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-") + "--"
    import re

    assert encode_cwd(cwd) == "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"


def test_agent_dir_comes_from_the_environment_or_the_home_folder() -> None:
    assert default_agent_dir({"TAU_AGENT_DIR": "/opt/tau"}) == "/opt/tau"
    assert default_agent_dir({}) == os.path.expanduser("~/.tau/agent")


def test_session_dir_precedence_is_flag_then_environment_then_settings_then_default() -> None:
    env = {"TAU_SESSION_DIR": "~/env-sessions"}
    default = default_session_dir("/p", "/agent")
    assert (
        resolve_session_dir("/p", "/flag", settings_session_dir="/s", agent_dir="/agent", env=env) == "/flag"
    )
    assert resolve_session_dir(
        "/p", settings_session_dir="/s", agent_dir="/agent", env=env
    ) == os.path.expanduser("~/env-sessions")
    assert resolve_session_dir(
        "/p", settings_session_dir="~/s", agent_dir="/agent", env={}
    ) == os.path.expanduser("~/s")
    assert resolve_session_dir("/p", agent_dir="/agent", env={}) == default


def test_file_name_is_the_timestamp_with_colons_and_dots_replaced_then_the_id() -> None:
    name = session_file_name("2025-12-09T00:52:54.397Z", "0195abcd")
    assert name == "2025-12-09T00-52-54-397Z_0195abcd.jsonl"


def test_create_honours_tau_session_dir_as_a_flat_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_SESSION_DIR", str(tmp_path / "flat"))
    manager = SessionManager.create("/some/project")
    assert manager.get_session_dir() == str(tmp_path / "flat")
    assert (tmp_path / "flat").is_dir()  # the folder is made eagerly, the file lazily
    assert os.path.dirname(manager.get_session_file() or "") == str(tmp_path / "flat")


def test_create_uses_the_project_folder_under_the_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAU_SESSION_DIR", raising=False)
    manager = SessionManager.create("/w/proj", agent_dir=str(tmp_path))
    assert manager.get_session_dir() == str(tmp_path / "sessions" / "--w-proj--")

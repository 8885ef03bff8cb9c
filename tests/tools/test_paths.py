"""Tests for tau.tools.paths: what a model's path means."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from tau.tools.paths import expand_path, resolve_read_path, resolve_to_cwd


def test_tilde_expands_to_the_home_folder() -> None:
    home = os.path.expanduser("~")
    assert expand_path("~") == home
    assert expand_path("~/x") == home + "/x"


def test_a_leading_at_sign_is_dropped_once() -> None:
    assert expand_path("@a.txt") == "a.txt"
    assert expand_path("@@a.txt") == "@a.txt"


def test_unicode_spaces_become_plain_spaces() -> None:
    assert expand_path("a\u00a0b\u202fc\u3000d") == "a b c d"


def test_tilde_of_another_user_is_left_alone() -> None:
    assert expand_path("~bob/x") == "~bob/x"


def test_absolute_paths_are_kept_and_relative_ones_resolve_against_cwd() -> None:
    assert resolve_to_cwd("/etc/hosts", "/work") == "/etc/hosts"
    assert resolve_to_cwd("src/a.py", "/work/proj") == "/work/proj/src/a.py"
    assert resolve_to_cwd("../other/./b.py", "/work/proj") == "/work/other/b.py"


def test_read_path_finds_an_nfd_named_file_from_nfc_input(tmp_path: Path) -> None:
    nfc = "café.txt"
    (tmp_path / unicodedata.normalize("NFD", nfc)).write_text("x")
    found = resolve_read_path(nfc, str(tmp_path))
    assert os.path.exists(found)
    assert found.endswith(unicodedata.normalize("NFD", nfc))


def test_read_path_finds_a_curly_apostrophe_name_from_a_straight_one(tmp_path: Path) -> None:
    (tmp_path / "it\u2019s.txt").write_text("x")
    assert resolve_read_path("it's.txt", str(tmp_path)) == str(tmp_path / "it\u2019s.txt")


def test_read_path_finds_a_macos_screenshot_name_with_a_narrow_space_before_am(tmp_path: Path) -> None:
    name = "Screenshot 2024-01-01 at 10.05.00\u202fAM.png"
    (tmp_path / name).write_bytes(b"x")
    assert resolve_read_path("Screenshot 2024-01-01 at 10.05.00 AM.png", str(tmp_path)) == str(
        tmp_path / name
    )


def test_read_path_falls_back_to_the_plain_path_when_nothing_exists(tmp_path: Path) -> None:
    assert resolve_read_path("missing.txt", str(tmp_path)) == str(tmp_path / "missing.txt")

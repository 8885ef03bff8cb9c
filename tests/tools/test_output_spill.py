"""Tests for tau.tools.output_spill: one lazily created folder per tool set, removed by close()."""

from __future__ import annotations

import os

from tau.tools.output_spill import SpillDirectory, default_spill_directory


def test_the_folder_is_created_on_the_first_spill_only() -> None:
    with SpillDirectory() as spill:
        assert spill.path is None
        path, file = spill.open_file("bash")
        file.close()
        assert spill.path is not None and os.path.dirname(path) == spill.path


def test_files_share_the_folder_and_have_distinct_names() -> None:
    with SpillDirectory() as spill:
        first, a = spill.open_file("bash")
        second, b = spill.open_file("bash")
        a.close()
        b.close()
        assert first != second and os.path.dirname(first) == os.path.dirname(second)
        assert os.path.basename(first).startswith("bash-") and first.endswith(".log")


def test_close_removes_the_folder_and_its_files() -> None:
    spill = SpillDirectory()
    path, file = spill.open_file("bash")
    file.write(b"data")
    assert os.path.exists(path)
    file.close()
    folder = spill.path
    spill.close()
    assert folder is not None and not os.path.exists(folder)
    assert spill.path is None


def test_a_closed_folder_can_be_used_again() -> None:
    spill = SpillDirectory()
    spill.open_file("bash")[1].close()
    spill.close()
    spill.open_file("bash")[1].close()
    assert spill.path is not None and os.path.isdir(spill.path)
    spill.close()


def test_the_default_folder_is_one_shared_object() -> None:
    assert default_spill_directory() is default_spill_directory()

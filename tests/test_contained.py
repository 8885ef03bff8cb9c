"""``tau._contained``: a path built from outside names stays strictly inside its folder, or is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tau._contained import MAX_NAME_BYTES, PathEscapeError, contained_path, file_name_problem, is_inside

# Pieces that hostile names are made of, mixed with arbitrary text.
PIECES = st.sampled_from(
    ["..", ".", "/", "\\", "%2e%2e", "~", "\x00", "\n", "a", "é", "x" * 200, "//", "../", "\ud800"]
)
PART = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=8).map("".join)

ONCE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)


@ONCE
@given(parts=st.lists(PART, min_size=1, max_size=4))
def test_any_parts_give_a_path_strictly_inside_the_root_or_a_path_escape_error(
    tmp_path: Path, parts: list[str]
) -> None:
    root = str(tmp_path / "root")
    try:
        path = contained_path(root, *parts)
    except PathEscapeError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    assert is_inside(path, root)
    assert is_inside(os.path.realpath(path), os.path.realpath(root))
    assert path == os.path.normpath(path)
    assert "\x00" not in path
    assert all(len(c.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES for c in path.split(os.sep))


@ONCE
@given(name=PART)
def test_a_name_that_is_a_file_name_is_exactly_one_file_in_the_root(tmp_path: Path, name: str) -> None:
    root = str(tmp_path)
    if file_name_problem(name) is not None:
        return
    assert contained_path(root, name) == os.path.join(root, name)


@ONCE
@given(name=PART)
def test_a_file_name_problem_is_one_line(tmp_path: Path, name: str) -> None:
    problem = file_name_problem(name)
    assert problem is None or (problem and "\n" not in problem)


@pytest.mark.parametrize(
    "parts",
    [("..",), (".",), ("",), ("a/../..",), ("/etc",), ("a", "/etc"), ("a\x00b",), ("x" * 256,), ("\\x",)],
)
def test_names_that_leave_or_are_the_root_are_refused(tmp_path: Path, parts: tuple[str, ...]) -> None:
    with pytest.raises(PathEscapeError):
        contained_path(tmp_path, *parts)


def test_a_symlink_on_the_way_that_points_out_is_refused_and_one_inside_is_not(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (root / "out").symlink_to(tmp_path / "outside")
    (root / "in").symlink_to(root / "inside")
    with pytest.raises(PathEscapeError, match="symbolic link"):
        contained_path(root, "out/pkg")
    assert contained_path(root, "in/pkg") == str(root / "in" / "pkg")
    assert contained_path(root, "out/pkg", follow_links=False) == str(root / "out" / "pkg")


def test_a_root_that_is_itself_a_link_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    assert contained_path(tmp_path / "linked", "a/b") == str(tmp_path / "linked" / "a" / "b")


def test_a_name_that_climbs_and_comes_back_is_normalised(tmp_path: Path) -> None:
    assert contained_path(tmp_path, "a/../b") == str(tmp_path / "b")

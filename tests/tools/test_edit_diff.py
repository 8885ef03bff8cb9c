"""Tests for tau.tools.edit_diff: numbered lines, context, gaps, first changed line."""

from __future__ import annotations

from tau.tools.edit_diff import generate_diff


def lines(count: int) -> list[str]:
    return [f"l{i}" for i in range(1, count + 1)]


def test_a_one_line_change_shows_four_context_lines_each_side_and_gap_markers() -> None:
    old = lines(20)
    new = list(old)
    new[9] = "CHANGED"
    result = generate_diff("\n".join(old) + "\n", "\n".join(new) + "\n")
    assert result.diff.split("\n") == [
        "    ...",
        "  6 l6",
        "  7 l7",
        "  8 l8",
        "  9 l9",
        "-10 l10",
        "+10 CHANGED",
        " 11 l11",
        " 12 l12",
        " 13 l13",
        " 14 l14",
        "    ...",
    ]
    assert result.first_changed_line == 10


def test_number_width_follows_the_longer_file() -> None:
    old = "\n".join(lines(9))
    new = "\n".join([*lines(9), "l10", "l11"])
    result = generate_diff(old, new)
    assert "+10 l10" in result.diff and "+11 l11" in result.diff
    # " " + " 8": padded to two digits. The last line gains its newline, so it changes (as pi 1.6 shows).
    assert "  8 l8" in result.diff.split("\n") and "- 9 l9" in result.diff.split("\n")
    assert result.first_changed_line == 9


def test_a_long_unchanged_run_between_changes_is_collapsed() -> None:
    old = lines(30)
    new = list(old)
    new[1] = "A"
    new[25] = "B"
    out = generate_diff("\n".join(old), "\n".join(new)).diff.split("\n")
    assert out.count("    ...") == 1  # only between the changes: four lines follow the last one
    assert "  3 l3" in out and "  6 l6" in out and "  7 l7" not in out
    assert out[out.index("    ...") + 1] == " 22 l22"


def test_a_short_unchanged_run_between_changes_is_shown_whole() -> None:
    old = lines(8)
    new = list(old)
    new[0] = "A"
    new[6] = "B"
    out = generate_diff("\n".join(old), "\n".join(new)).diff.split("\n")
    assert [line for line in out if line.startswith(" ")] == [f" {i} l{i}" for i in range(2, 7)] + [" 8 l8"]


def test_added_lines_in_a_new_block_use_new_file_numbers() -> None:
    result = generate_diff("a\nb\n", "a\nx\ny\nb\n")
    assert result.diff.split("\n") == [" 1 a", "+2 x", "+3 y", " 2 b"]
    assert result.first_changed_line == 2

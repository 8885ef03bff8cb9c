"""Tests for tau.modes.interactive.render.format: token counts, sizes, widths, truncation."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.render.format import (
    format_bytes,
    format_tokens,
    truncate_to_width,
    visible_width,
)


@pytest.mark.parametrize(
    ("count", "shown"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1.0k"),
        (1500, "1.5k"),
        (9949, "9.9k"),
        (9999, "10k"),
        (42000, "42k"),
        (999_499, "999k"),
        (999_999, "1.0M"),
        (1_200_000, "1.2M"),
        (9_999_999, "10M"),
        (15_000_000, "15M"),
    ],
)
def test_token_counts_follow_the_footer_format(count: int, shown: str) -> None:
    assert format_tokens(count) == shown


def _value(shown: str) -> float:
    unit = {"k": 1e3, "M": 1e6}.get(shown[-1], 1.0)
    return float(shown.rstrip("kM")) * unit


@given(st.integers(min_value=0, max_value=10**10))
def test_a_token_count_is_within_five_percent_and_never_spills_into_the_next_unit(count: int) -> None:
    shown = format_tokens(count)
    assert re.fullmatch(r"\d{1,3}|\d\.\dk|\d{2,3}k|\d\.\dM|\d+M", shown), shown
    assert abs(_value(shown) - count) <= 0.05 * count


@given(st.integers(min_value=0, max_value=10**9))
def test_token_counts_never_shrink_as_the_count_grows(count: int) -> None:
    assert _value(format_tokens(count)) <= _value(format_tokens(count + 1))


def test_byte_sizes_are_whole_kilobytes_below_a_megabyte() -> None:
    assert [format_bytes(n) for n in (512, 12 * 1024 + 100, 3 * 1024 * 1024 // 2)] == [
        "512 B",
        "12 KB",
        "1.5 MB",
    ]


def test_wide_characters_take_two_cells_and_colour_codes_none() -> None:
    assert visible_width("日本") == 4
    assert visible_width("\x1b[1;31mab\x1b[0m") == 2


def test_text_that_fits_is_not_truncated() -> None:
    assert truncate_to_width("hello", 5) == "hello"


def test_truncated_text_ends_in_an_ellipsis_within_the_width() -> None:
    assert truncate_to_width("hello world", 8) == "hello w…"


def test_truncation_never_splits_a_wide_character() -> None:
    assert truncate_to_width("日本語", 5) == "日本…"
    assert truncate_to_width("日本語", 4) == "日…"


def test_truncation_to_no_room_gives_nothing() -> None:
    assert truncate_to_width("hello", 0) == ""


@given(st.text(), st.integers(min_value=0, max_value=40))
def test_truncated_text_always_fits(text: str, width: int) -> None:
    assert visible_width(truncate_to_width(text.replace("\x1b", ""), width)) <= width

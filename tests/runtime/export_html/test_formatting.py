"""Numbers, times and previews on the exported page; lenient about what a session file holds."""

from __future__ import annotations

from tau.export.formatting import (
    as_number,
    as_text,
    clock_time,
    cost,
    date_time,
    preview,
    tokens,
)


def test_token_counts_read_like_the_footer() -> None:
    assert [tokens(n) for n in (999, 1500, 42_000, 1_200_000, 15_000_000)] == [
        "999",
        "1.5k",
        "42k",
        "1.2M",
        "15M",
    ]


def test_costs_keep_cents_of_cents_below_a_dollar() -> None:
    assert (cost(0.0123), cost(12.345), cost("x")) == ("$0.0123", "$12.35", "$0.0000")


def test_times_come_from_iso_timestamps_or_stay_as_written() -> None:
    assert clock_time("2026-01-01T12:34:56.789Z") == "12:34:56"
    assert date_time("2026-01-01T12:34:56.789Z") == "2026-01-01 12:34 UTC"
    assert clock_time("yesterday") == "yesterday"


def test_untrusted_values_never_raise() -> None:
    assert (as_text(None), as_text(3), as_text({"a": 1}), as_text("s")) == ("", "3", '{"a": 1}', "s")
    assert (as_number(True), as_number("7"), as_number(2.5)) == (0, 0, 2.5)


def test_previews_are_one_short_line() -> None:
    assert preview("a\n\n  b\tc") == "a b c"
    assert preview("x" * 500, 10) == "x" * 9 + "…"

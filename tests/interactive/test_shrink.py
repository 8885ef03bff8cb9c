"""The status row ``terminal.clearOnShrink`` keeps (pi's idle status), without a terminal."""

from __future__ import annotations

from tau.modes.interactive.shrink import ShrinkWatch


def _watch(enabled: list[bool]) -> ShrinkWatch:
    return ShrinkWatch(lambda: enabled[0], lambda: False, lambda: None)


def test_the_status_row_is_drawn_while_it_has_text() -> None:
    assert _watch([False]).keeps_status_row(True)


def test_without_clear_on_shrink_the_status_row_goes_when_its_text_does() -> None:
    watch = _watch([False])
    watch.keeps_status_row(True)
    assert not watch.keeps_status_row(False)


def test_with_clear_on_shrink_the_status_row_stays_blank_once_it_had_text() -> None:
    enabled = [True]
    watch = _watch(enabled)
    assert not watch.keeps_status_row(False)  # never shown: no row yet
    watch.keeps_status_row(True)
    assert watch.keeps_status_row(False)
    enabled[0] = False  # turned off in /settings: the blank row goes
    assert not watch.keeps_status_row(False)

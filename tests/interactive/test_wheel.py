"""How far a wheel event scrolls the fullscreen transcript: a number of lines, or pi 1.6's ``auto``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.wheel import WheelSpeed


def _spin(speed: WheelSpeed, gaps_ms: list[float], direction: int = -1) -> list[int]:
    now = 1000.0
    lines = []
    for gap in gaps_ms:
        now += gap
        lines.append(speed.lines(direction, now))
    return lines


@pytest.mark.parametrize("setting", [1, 3, 100])
def test_a_number_is_that_many_lines_an_event_however_fast(setting: int) -> None:
    assert _spin(WheelSpeed(setting), [0, 10, 10, 300]) == [setting] * 4


@pytest.mark.parametrize(("gap", "lines"), [(100, 1), (50, 2), (20, 5), (10, 6)])
def test_auto_moves_more_lines_the_faster_the_notches_come(gap: float, lines: int) -> None:
    speed = WheelSpeed("auto", accelerate=True)
    assert _spin(speed, [500, *[gap] * 6])[-1] == lines


def test_auto_moves_one_line_for_a_lone_notch_pieces_of_a_notch_and_a_turn_back() -> None:
    speed = WheelSpeed("auto", accelerate=True)
    assert _spin(speed, [500, 20, 20, 20])[-1] > 1
    assert _spin(speed, [2, 2]) == [1, 1]  # events a few milliseconds apart: one notch split up
    assert speed.lines(1, 2000.0) == 1  # the other way: a new gesture
    assert speed.lines(1, 2500.0) == 1  # after a pause: a new gesture


def test_auto_is_one_line_an_event_where_the_terminal_speeds_the_wheel_up_itself() -> None:
    assert _spin(WheelSpeed("auto", accelerate=False), [500, 10, 10, 10]) == [1, 1, 1, 1]


@given(st.lists(st.floats(min_value=0, max_value=1000), max_size=50), st.sampled_from([-1, 1]))
def test_auto_always_moves_one_to_six_lines(gaps: list[float], direction: int) -> None:
    assert all(1 <= n <= 6 for n in _spin(WheelSpeed("auto", accelerate=True), gaps, direction))

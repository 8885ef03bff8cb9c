"""The ``system`` theme's colours derived from the terminal's (OSC 10/11/4), checked against the
colours pi 1.6's own generator gives for the same answers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.render.oklab import RGB, okhsl_to_rgb, rgb_to_okhsl
from tau.modes.interactive.render.system_palette import derive, parse_osc_colour, wcag_contrast

TANGO = ["#2e3436", "#cc0000", "#4e9a06", "#c4a000", "#3465a4", "#75507b", "#06989a", "#d3d7cf",
         "#555753", "#ef2929", "#8ae234", "#fce94f", "#729fcf", "#ad7fa8", "#34e2e2", "#eeeeec"]  # fmt: skip


def _rgb(text: str) -> RGB:
    return (int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16))


# What pi 1.6's generateSystemThemeColors answers for these terminals.
@pytest.mark.parametrize(
    ("background", "foreground", "palette", "appearance", "expected"),
    [
        ("#1e1e2e", "#cdd6f4", TANGO, "dark",
         {"accent": "#b592bb", "error": "#ef7767", "text": "", "userMessageBg": "#233348",
          "thinkingOff": "#6f716d", "mdHeading": "#bf9c00", "dim": "#81837f", "toolSuccessBg": "#26381d"}),
        ("#ffffff", "#000000", TANGO, "light",
         {"accent": "#926c98", "error": "#df281d", "text": "", "userMessageBg": "#eef0f3",
          "thinkingOff": "#d1d2d0", "mdHeading": "#947900", "dim": "#999b96", "toolSuccessBg": "#edf1ec"}),
        ("#1e1e1e", "#d4d4d4", None, "dark",
         {"accent": "#a493d6", "error": "#eb777a", "text": "", "userMessageBg": "#1f343f",
          "thinkingOff": "#677176", "mdHeading": "#c9961c", "dim": "#7a8489", "toolSuccessBg": "#21372a"}),
        ("#808080", "#000000", TANGO, "light",  # mid-grey: the levels are relaxed until they fit
         {"accent": "#000000", "error": "#000000", "text": "", "userMessageBg": "#4476b6",
          "thinkingOff": "#41423f", "mdHeading": "#000000", "dim": "#000000", "toolSuccessBg": "#428405"}),
    ],
    ids=["dark-palette", "light-palette", "background-only", "mid-grey"],
)  # fmt: skip
def test_the_derived_colours_are_pi_s(
    background: str, foreground: str, palette: list[str] | None, appearance: str, expected: dict[str, str]
) -> None:
    derived = derive(_rgb(background), _rgb(foreground), [_rgb(p) for p in palette] if palette else None)
    assert derived is not None
    assert derived.appearance == appearance
    assert {token: derived.colours[token] for token in expected} == expected


def test_without_a_background_nothing_is_derived() -> None:
    assert derive(None, (255, 255, 255), [_rgb(p) for p in TANGO]) is None


def test_body_text_keeps_four_and_a_half_to_one_on_its_background() -> None:
    derived = derive((40, 40, 40), (90, 90, 90))  # a foreground too faint to use
    assert derived is not None
    text = derived.colours["text"]
    assert text and wcag_contrast(_rgb(text), (40, 40, 40)) >= 4.5


@pytest.mark.parametrize(
    ("reply", "colour"),
    [("rgb:ffff/8080/0000", (255, 128, 0)), ("rgb:f/8/0", (255, 136, 0)), ("#1e1e2e", (30, 30, 46)),
     ("rgba:0000/0000/0000/ffff", (0, 0, 0)), ("rgb:zz/00/00", None), ("cmy:1/2/3", None), ("rgb:1/2", None)],
)  # fmt: skip
def test_osc_colour_answers_are_read(reply: str, colour: RGB | None) -> None:
    assert parse_osc_colour(reply) == colour


@given(st.text(max_size=40))
def test_any_answer_text_parses_or_is_refused(reply: str) -> None:
    colour = parse_osc_colour(reply)
    assert colour is None or all(0 <= channel <= 255 for channel in colour)


@given(st.tuples(*[st.integers(0, 255)] * 3))
def test_okhsl_goes_there_and_back(rgb: tuple[int, int, int]) -> None:
    back = okhsl_to_rgb(*rgb_to_okhsl(rgb))
    assert all(abs(a - b) <= 1 for a, b in zip(back, rgb, strict=True))

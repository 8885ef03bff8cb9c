"""Tests for tau.modes.interactive.render.theme: theme lookup and that every style is valid."""

from __future__ import annotations

import pytest
from pygments.styles import get_style_by_name
from rich.color import Color
from rich.style import Style

from tau.modes.interactive.render.theme import DARK, LIGHT, Theme, get_theme


def test_themes_are_found_by_name_and_an_unknown_name_gets_the_dark_one() -> None:
    assert get_theme("light") is LIGHT
    assert get_theme("dark") is DARK
    assert get_theme("solarized") is DARK


@pytest.mark.parametrize("theme", [DARK, LIGHT], ids=["dark", "light"])
def test_every_field_is_a_valid_rich_style_or_colour(theme: Theme) -> None:
    for name in theme.__struct_fields__:
        value = getattr(theme, name)
        if name in ("hyperlinks", "image_protocol", "image_width_cells", "mermaid"):
            continue  # how the terminal draws, not a colour
        if name.endswith("_bg"):
            Color.parse(value)
        elif name == "code_theme":
            get_style_by_name(value)
        elif name != "name":
            Style.parse(value)


def test_each_thinking_level_has_its_own_editor_border_colour() -> None:
    levels = ["off", "minimal", "low", "medium", "high", "xhigh"]
    assert len({DARK.editor_border(level) for level in levels}) == len(levels)


def test_an_unknown_thinking_level_gets_the_off_border() -> None:
    assert DARK.editor_border("extreme") == DARK.border_off

"""The rich console every renderer prints into, and the capture of its output as ANSI text."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from typing import Literal, TypeAlias

from rich.console import Console, RenderableType
from rich.theme import Theme as RichTheme

from tau.modes.interactive.render.theme import Theme

ColorSystem: TypeAlias = Literal["standard", "256", "truecolor"]


def _rich_styles(theme: Theme) -> dict[str, str]:
    """The rich theme entries the markdown renderer looks up by name."""
    return {
        "markdown.h1": f"{theme.md_heading} underline",
        "markdown.h2": theme.md_heading,
        "markdown.h3": theme.md_heading,
        "markdown.h4": theme.md_heading,
        "markdown.h5": theme.md_heading,
        "markdown.h6": theme.md_heading,
        "markdown.code": theme.md_code,
        "markdown.code_block": "none",
        "markdown.block_quote": theme.md_quote,
        "markdown.item.bullet": theme.md_bullet,
        "markdown.item.number": theme.md_bullet,
        "markdown.hr": theme.md_hr,
        "markdown.link": theme.md_link,
        "markdown.link_url": theme.md_link_url,
        "markdown.table.border": theme.muted,
        "markdown.table.header": "bold",
        "markdown.html": theme.muted,
    }


@lru_cache(maxsize=16)
def console_for(theme: Theme, width: int, color_system: ColorSystem = "truecolor") -> Console:
    """A console that renders into memory at ``width`` cells.

    Everything that could vary with the environment is fixed (colour on regardless of ``NO_COLOR`` or
    ``TERM``, no markup, emoji codes or auto-highlighting), so the same input always gives the same text.
    """
    return Console(
        file=io.StringIO(),
        width=max(1, width),
        force_terminal=True,
        force_jupyter=False,
        force_interactive=False,
        color_system=color_system,
        no_color=False,
        legacy_windows=False,
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
        tab_size=4,
        theme=RichTheme(_rich_styles(theme)),
    )


_LINK_ID = re.compile(r"\x1b\]8;id=[^;\x07\x1b]*;")


def to_ansi(console: Console, renderable: RenderableType) -> str:
    """``renderable`` printed on ``console``, as ANSI text without the final newline. OSC 8 links
    lose the ids rich draws at random (``ESC ] 8 ; ; url``), so the same input gives the same text."""
    with console.capture() as capture:
        console.print(renderable)
    text = capture.get().removesuffix("\n")
    return _LINK_ID.sub("\x1b]8;;", text) if "\x1b]8;" in text else text

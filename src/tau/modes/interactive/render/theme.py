"""Colour themes: named rich styles for every part of the screen.

Fields ending in ``_bg`` are bare colours (``#rrggbb``) used as block backgrounds; every other field
is a rich style string (``"bold #8abeb7"``, ``"italic #808080"``). This module imports nothing heavy:
the editor and footer read it for the first frame.
"""

from __future__ import annotations

from msgspec import Struct
from msgspec.structs import replace


class Theme(Struct, frozen=True):
    """The styles of one theme. Frozen and hashable, so renderers can be cached per theme."""

    name: str
    accent: str
    muted: str
    dim: str
    text: str
    """Assistant prose."""
    thinking: str
    user_bg: str
    custom_bg: str
    """Background of compaction, branch-summary and extension (custom) message blocks."""
    custom_label: str
    tool_title: str
    tool_pending_bg: str
    tool_success_bg: str
    tool_error_bg: str
    tool_output: str
    error: str
    warning: str
    success: str
    diff_added: str
    diff_removed: str
    diff_context: str
    bash_mode: str
    notice_info: str
    notice_warning: str
    notice_error: str
    footer: str
    footer_warning: str
    """Footer context usage above 70 %."""
    footer_error: str
    """Footer context usage above 90 %."""
    border_off: str
    border_minimal: str
    border_low: str
    border_medium: str
    border_high: str
    border_xhigh: str
    md_heading: str
    md_link: str
    md_link_url: str
    md_code: str
    """Inline code."""
    md_code_border: str
    """The ```` ``` ```` lines around a code block."""
    md_quote: str
    md_bullet: str
    md_hr: str
    code_theme: str
    """Pygments style used to highlight code."""
    code_block_indent: str = "  "
    """What each line of a code block starts with (the ``markdown.codeBlockIndent`` setting)."""
    # How the terminal draws, beside the colours (the app sets these from ``capabilities``).
    hyperlinks: bool = False
    """Links as OSC 8 hyperlinks showing their text (else ``text (url)``)."""
    image_protocol: str | None = None
    """``kitty`` or ``iterm2``: images drawn inline; ``None``: a line of text names each image."""
    image_width_cells: int = 60
    """The widest an inline image is drawn (``terminal.imageWidthCells``)."""
    mermaid: str = "off"
    """``markdown.mermaid``: ``off``, ``final`` (a finished reply's diagrams) or ``streaming``."""

    def editor_border(self, thinking_level: str) -> str:
        """The editor border's style for a thinking level (``off`` … ``max``); unknown levels get ``off``."""
        return {
            "minimal": self.border_minimal,
            "low": self.border_low,
            "medium": self.border_medium,
            "high": self.border_high,
            "xhigh": self.border_xhigh,
            "max": self.border_xhigh,  # no colour of its own: the strongest one
        }.get(thinking_level, self.border_off)


DARK = Theme(
    name="dark",
    accent="#8abeb7",
    muted="#808080",
    dim="#666666",
    text="default",
    thinking="italic #808080",
    user_bg="#343541",
    custom_bg="#2d2838",
    custom_label="bold #9575cd",
    tool_title="bold",
    tool_pending_bg="#282832",
    tool_success_bg="#283228",
    tool_error_bg="#3c2828",
    tool_output="#b4b4b4",
    error="#cc6666",
    warning="#e6c35c",
    success="#b5bd68",
    diff_added="#b5bd68",
    diff_removed="#cc6666",
    diff_context="#808080",
    bash_mode="#b5bd68",
    notice_info="#808080",
    notice_warning="#e6c35c",
    notice_error="#cc6666",
    footer="#808080",
    footer_warning="#e6c35c",
    footer_error="#cc6666",
    border_off="#505050",
    border_minimal="#6e6e6e",
    border_low="#5f87af",
    border_medium="#81a2be",
    border_high="#b294bb",
    border_xhigh="#d183e8",
    md_heading="bold #f0c674",
    md_link="#81a2be",
    md_link_url="#666666",
    md_code="#8abeb7",
    md_code_border="#666666",
    md_quote="italic #a0a0a0",
    md_bullet="#8abeb7",
    md_hr="#666666",
    code_theme="monokai",
)

LIGHT = Theme(
    name="light",
    accent="#2f7f7a",
    muted="#6c6c6c",
    dim="#8a8a8a",
    text="default",
    thinking="italic #6c6c6c",
    user_bg="#e8e8ec",
    custom_bg="#ede7f6",
    custom_label="bold #6a4c9c",
    tool_title="bold",
    tool_pending_bg="#e8e8f0",
    tool_success_bg="#e6f2e6",
    tool_error_bg="#f6e4e4",
    tool_output="#3c3c3c",
    error="#b03030",
    warning="#8a6400",
    success="#3a7a2a",
    diff_added="#3a7a2a",
    diff_removed="#b03030",
    diff_context="#8a8a8a",
    bash_mode="#3a7a2a",
    notice_info="#6c6c6c",
    notice_warning="#8a6400",
    notice_error="#b03030",
    footer="#6c6c6c",
    footer_warning="#8a6400",
    footer_error="#b03030",
    border_off="#b0b0b0",
    border_minimal="#909090",
    border_low="#5a7fa8",
    border_medium="#3a6ea5",
    border_high="#7a4fa0",
    border_xhigh="#a020c0",
    md_heading="bold #8a5a00",
    md_link="#2a5aa0",
    md_link_url="#8a8a8a",
    md_code="#2f7f7a",
    md_code_border="#9a9a9a",
    md_quote="italic #5a5a5a",
    md_bullet="#2f7f7a",
    md_hr="#9a9a9a",
    code_theme="friendly",
)

SYSTEM = Theme(
    name="system",
    accent="cyan",
    muted="dim",
    dim="dim",
    text="default",
    thinking="italic dim",
    user_bg="default",
    custom_bg="default",
    custom_label="bold magenta",
    tool_title="bold",
    tool_pending_bg="default",
    tool_success_bg="default",
    tool_error_bg="default",
    tool_output="default",
    error="red",
    warning="yellow",
    success="green",
    diff_added="green",
    diff_removed="red",
    diff_context="dim",
    bash_mode="green",
    notice_info="dim",
    notice_warning="yellow",
    notice_error="red",
    footer="dim",
    footer_warning="yellow",
    footer_error="red",
    border_off="dim",
    border_minimal="bright_black",
    border_low="blue",
    border_medium="cyan",
    border_high="magenta",
    border_xhigh="bright_magenta",
    md_heading="bold yellow",
    md_link="blue",
    md_link_url="dim",
    md_code="cyan",
    md_code_border="dim",
    md_quote="italic dim",
    md_bullet="cyan",
    md_hr="dim",
    code_theme="ansi_dark",
)
"""The terminal's own colours: the 16 ANSI colours and its default foreground and background, no
fixed RGB anywhere (the terminal's palette decides what they look like), as pi's ``system`` theme
when the terminal reports no colours. Panels get no background of their own."""

SYSTEM_LIGHT = replace(SYSTEM, code_theme="ansi_light")
"""``system`` on a light background (the terminal's answer to OSC 11, else ``COLORFGBG``): the
plain ANSI colours for code, where the dark variant uses the bright ones."""

_THEMES = {DARK.name: DARK, LIGHT.name: LIGHT}
THEME_NAMES = ("dark", "light", "system")


def register_theme(theme: Theme) -> None:
    """Add a theme read from a file (``theme_files``); a name already there keeps its theme."""
    if theme.name not in THEME_NAMES:
        _THEMES.setdefault(theme.name, theme)


def theme_names() -> list[str]:
    """The names ``get_theme`` knows: the built-in themes, then the registered ones."""
    return [*THEME_NAMES, *(name for name in _THEMES if name not in THEME_NAMES)]


def get_theme(name: str, *, light_terminal: bool = False) -> Theme:
    """The theme called ``name``; the dark theme for an unknown name. ``light_terminal`` picks the
    variant of ``system``."""
    if name == SYSTEM.name:
        return SYSTEM_LIGHT if light_terminal else SYSTEM
    return _THEMES.get(name, DARK)


def is_light_background(reply: str) -> bool | None:
    """Whether the colour of an OSC 11 reply (``rgb:RRRR/GGGG/BBBB``, 1 to 4 hex digits a channel)
    is light; ``None`` when it is not one."""
    if not reply.startswith("rgb:"):
        return None
    channels = reply[4:].split("/")
    try:
        values = [int(c, 16) / (16 ** len(c) - 1) for c in channels]
    except (ValueError, ZeroDivisionError):
        return None
    if len(values) != 3:
        return None
    red, green, blue = values
    return bool(0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.5)


def light_from_colorfgbg(value: str | None) -> bool:
    """``COLORFGBG`` (``"15;0"``: the foreground and background palette indices, as rxvt sets it):
    a light background is white (7) or one of the bright colours but black (9 to 15)."""
    background = (value or "").rsplit(";", 1)[-1]
    return background.isdigit() and (background == "7" or 9 <= int(background) <= 15)

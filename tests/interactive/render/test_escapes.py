"""Text for prompt_toolkit's ANSI reader: links pass as zero-width escapes, images are left out."""

from __future__ import annotations

from prompt_toolkit.formatted_text import ANSI, fragment_list_to_text, to_formatted_text

from tau.modes.interactive.render.escapes import for_prompt_toolkit


def _shown(text: str) -> str:
    return fragment_list_to_text(to_formatted_text(ANSI(for_prompt_toolkit(text))))


def test_a_link_shows_its_text_and_reaches_the_terminal_whole() -> None:
    line = "see \x1b]8;;https://example.com\x1b\\the docs\x1b]8;;\x1b\\ now"
    assert _shown(line) == "see the docs now"
    fragments = to_formatted_text(ANSI(for_prompt_toolkit(line)))
    assert ("[ZeroWidthEscape]", "\x1b]8;;https://example.com\x1b\\") in fragments


def test_image_sequences_are_left_out() -> None:
    kitty = "\x1b_Ga=T,f=100,q=2,C=1,c=4,r=2,m=1;QUJD\x1b\\\x1b_Gm=0;REVG\x1b\\"
    assert _shown(f"{kitty}\nnext") == "\nnext"
    iterm = "\x1b[2A\x1b]1337;File=inline=1;size=3;width=4;height=auto:QUJD\x07"
    assert _shown(f"a\n\n{iterm}") == "a\n\n"


def test_plain_and_coloured_text_is_unchanged() -> None:
    assert for_prompt_toolkit("\x1b[1mbold\x1b[0m") == "\x1b[1mbold\x1b[0m"

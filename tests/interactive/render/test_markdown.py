"""Tests for render_markdown: the look of whole markdown documents."""

from __future__ import annotations

from collections.abc import Callable

import pyte
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.modes.interactive.render.markdown import render_markdown
from tau.modes.interactive.render.theme import DARK

SAMPLE = """# Title

A paragraph with **bold**, *em*, `code` and a [link](https://example.com).
A second line.

- one
- two

  still two

1. first
2. second

```python
def f(x):
    return x
```

> quoted

| a | b |
|---|---|
| 1 | 2 |

---

<div>raw</div>

end
"""


def test_headings_are_left_aligned(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("# Title", 40, DARK)) == "Title"


def test_a_single_newline_is_a_line_break(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("one\ntwo", 40, DARK)) == "one\ntwo"


def test_top_level_blocks_are_separated_by_exactly_one_blank_line(plain: Callable[[str], str]) -> None:
    out = plain(render_markdown("para\n\n- item\n\n---\n\n- after rule", 20, DARK))
    assert out.split("\n") == ["para", "", " • item", "", "-" * 20, "", " • after rule"]


def test_nothing_comes_before_a_leading_list_or_after_the_last_block(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("- a\n- b\n\n", 20, DARK)) == " • a\n • b"


def test_code_blocks_keep_their_fences_and_are_indented_and_highlighted(plain: Callable[[str], str]) -> None:
    out = render_markdown("```python\nx = 1\n```", 40, DARK)
    assert plain(out).split("\n") == ["```python", "  x = 1", "```"]
    assert "\x1b[38;2;" in out.split("\n")[1]


def test_blank_lines_inside_a_code_block_are_kept(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("```\na\n\n\nb\n```", 40, DARK)).split("\n") == [
        "```",
        "  a",
        "",
        "",
        "  b",
        "```",
    ]


def test_links_show_their_address_and_are_not_terminal_hyperlinks(plain: Callable[[str], str]) -> None:
    out = render_markdown("[docs](https://example.com)", 60, DARK)
    assert plain(out) == "docs (https://example.com)"
    assert "\x1b]8" not in out


def test_html_blocks_are_shown_as_their_source(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("<details>\n<summary>x</summary>\n</details>", 40, DARK)).startswith(
        "<details>"
    )


def test_no_line_ends_in_padding_spaces(plain: Callable[[str], str]) -> None:
    assert all(line == line.rstrip() for line in plain(render_markdown(SAMPLE, 60, DARK)).split("\n"))


def test_a_base_style_underlies_all_the_text() -> None:
    out = render_markdown("thinking hard", 40, DARK, style="italic #808080")
    assert "\x1b[3;38;2;128;128;128m" in out


def test_escape_sequences_in_the_text_cannot_reach_the_terminal(
    terminal: Callable[[str, int], pyte.Screen],
) -> None:
    screen = terminal("before\n" + render_markdown("x\x1b[2J\x1b]0;pwned\x07y `a\x1b[1Ab`", 40, DARK), 40)
    assert screen.display[0].rstrip() == "before"
    assert screen.display[1].rstrip() == "xy ab"
    assert screen.title == "untouched"


def test_console_markup_in_the_text_is_shown_literally(plain: Callable[[str], str]) -> None:
    assert plain(render_markdown("[bold]x[/bold]", 40, DARK)) == "[bold]x[/bold]"


def test_rendering_is_deterministic() -> None:
    assert render_markdown(SAMPLE, 50, DARK) == render_markdown(SAMPLE, 50, DARK)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=120))
def test_no_line_is_wider_than_the_width(width: int) -> None:
    from tau.modes.interactive.render.format import visible_width

    out = render_markdown(SAMPLE + "\n" + "日本語のテキスト " * 20 + "\n\n" + "x" * 300, width, DARK)
    assert all(visible_width(line) <= width for line in out.split("\n"))


def test_a_narrow_table_wraps_a_long_cell_instead_of_cutting_it(plain: Callable[[str], str]) -> None:
    table = "| name | note |\n|---|---|\n| a_very_long_identifier_name_here | short |\n"
    shown = plain(render_markdown(table, 30, DARK))
    assert "…" not in shown
    assert "name_here" in shown  # the rest of the word, on the cell's next line

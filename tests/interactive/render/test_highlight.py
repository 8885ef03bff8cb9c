"""Tests for tau.modes.interactive.render.highlight: lexer lookup and highlighted lines."""

from __future__ import annotations

from tau.modes.interactive.render.highlight import highlight_lines, lexer_by_name, lexer_for_path


def test_every_line_of_the_code_gets_a_line_even_blank_ones_at_either_end() -> None:
    lines = highlight_lines("\nx = 1\n\n", lexer_by_name("python"), "monokai")
    assert [line.plain for line in lines] == ["", "x = 1", "", ""]


def test_known_languages_are_coloured() -> None:
    (line,) = highlight_lines("def f(): pass", lexer_by_name("python"), "monokai")
    assert {span.style for span in line.spans if str(span.style)} != set()


def test_unknown_and_plain_languages_have_no_lexer() -> None:
    assert lexer_by_name("no-such-language") is None
    assert lexer_by_name("text") is None
    assert lexer_by_name("") is None


def test_code_without_a_lexer_is_left_plain() -> None:
    (line,) = highlight_lines("def f(): pass", None, "monokai")
    assert line.plain == "def f(): pass"
    assert line.spans == []


def test_files_are_highlighted_by_extension_or_by_whole_name() -> None:
    assert lexer_for_path("src/app.py") is not None
    assert lexer_for_path("/x/Makefile") is not None
    assert lexer_for_path("notes.unknownext") is None


def test_neighbouring_tokens_of_one_colour_form_a_single_run() -> None:
    (line,) = highlight_lines('"""a b c"""', lexer_by_name("python"), "monokai")
    assert len(line.spans) == 1

"""Tests for tau.tools.edit_match: exact then normalised matching, uniqueness, overlap."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tau.tools.edit_match import (
    Replacement,
    apply_replacements,
    detect_line_ending,
    normalize_for_match,
    to_lf,
)
from tau.tools.errors import ToolError

_plain = st.text(alphabet="abcdefgh xyz\n", max_size=80)
_word = st.text(alphabet="abcdefghxyz", min_size=1, max_size=8)


def test_line_ending_is_crlf_only_when_the_first_newline_has_a_carriage_return() -> None:
    assert detect_line_ending("a\r\nb\n") == "\r\n"
    assert detect_line_ending("a\nb\r\n") == "\n"
    assert detect_line_ending("no newline") == "\n"


def test_to_lf_turns_crlf_and_lone_cr_into_lf() -> None:
    assert to_lf("a\r\nb\rc\n") == "a\nb\nc\n"


def test_normalisation_covers_quotes_dashes_spaces_and_trailing_whitespace() -> None:
    assert (
        normalize_for_match("\u2018a\u2019 \u201cb\u201d \u2014 \u2212 x\u00a0y  \nz\t\n")
        == "'a' \"b\" - - x y\nz\n"
    )


def test_an_edit_that_is_unique_but_overlaps_its_own_repetition_is_counted_like_str_count() -> None:
    # "aa" occurs twice without overlap in "aaaa", so it is ambiguous.
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        apply_replacements("aaaa", [Replacement("aa", "b")], "f")


@settings(max_examples=200)
@given(_plain, _word, _plain, st.text(alphabet="XYZ\n ", max_size=10))
def test_an_exact_unique_match_is_replaced_in_place_and_nothing_else_changes(
    before: str, word: str, after: str, new: str
) -> None:
    old = f"<{word}>"
    content = before + old + after
    assume(content.count(old) == 1 and normalize_for_match(content).count(normalize_for_match(old)) == 1)
    assume(old != new)
    applied = apply_replacements(content, [Replacement(old, new)], "f")
    assert applied.base == content
    assert applied.result == before + new + after


@settings(max_examples=200)
@given(_plain, _word, _plain)
def test_ascii_old_text_finds_its_smart_quoted_spelling(before: str, word: str, after: str) -> None:
    content = f"{before}\u2018{word}\u2019{after}"
    assume("'" not in content and normalize_for_match(content).count(f"'{word}'") == 1)
    applied = apply_replacements(content, [Replacement(f"'{word}'", "[done]")], "f")
    assert "[done]" in applied.result
    assert applied.base == normalize_for_match(content)
    assert applied.result == applied.base.replace(f"'{word}'", "[done]")


@settings(max_examples=200)
@given(_plain, _word)
def test_an_edit_is_rejected_exactly_when_its_normalised_text_is_not_unique(content: str, word: str) -> None:
    old = word
    occurrences = normalize_for_match(content).count(normalize_for_match(old))
    try:
        apply_replacements(content, [Replacement(old, old + "!")], "f")
    except ToolError as error:
        message = str(error)
        assert occurrences != 1
        assert ("Could not find" in message) if occurrences == 0 else (f"Found {occurrences}" in message)
    else:
        assert occurrences == 1


@settings(max_examples=100)
@given(
    st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "eps"]), min_size=1, max_size=5, unique=True)
)
def test_disjoint_edits_apply_as_if_each_replaced_its_own_word(words: list[str]) -> None:
    content = " | ".join(["alpha", "beta", "gamma", "delta", "eps"])
    applied = apply_replacements(content, [Replacement(w, w.upper()) for w in words], "f")
    expected = " | ".join(w.upper() if w in words else w for w in ["alpha", "beta", "gamma", "delta", "eps"])
    assert applied.result == expected

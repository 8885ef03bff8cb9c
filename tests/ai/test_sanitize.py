"""Tests for tau.ai.sanitize: lone surrogates are removed from outgoing text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.sanitize import sanitize_surrogates


def test_a_lone_high_surrogate_is_removed() -> None:
    assert sanitize_surrogates("Text \ud83d here") == "Text  here"


def test_a_lone_low_surrogate_is_removed() -> None:
    assert sanitize_surrogates("a\udc00b") == "ab"


def test_emoji_are_preserved() -> None:
    assert sanitize_surrogates("Hello 🙈 World 👍🏽") == "Hello 🙈 World 👍🏽"


def test_text_without_surrogates_is_returned_as_the_same_object() -> None:
    text = "plain ascii and naïve unicode"
    assert sanitize_surrogates(text) is text


def test_the_two_halves_of_an_emoji_side_by_side_are_kept_as_the_emoji() -> None:
    assert sanitize_surrogates("a\ud83d\ude00b \ud83d") == "a😀b "


# characters() never draws a surrogate: they are drawn as integers.
ANY_CODE_POINTS = st.lists(st.integers(0xD800, 0xDFFF) | st.integers(0, 0x10FFFF)).map(
    lambda codes: "".join(map(chr, codes))
)


@given(ANY_CODE_POINTS)
def test_the_result_always_encodes_as_utf8(text: str) -> None:
    sanitize_surrogates(text).encode("utf-8")


@given(st.text())
def test_text_without_surrogates_is_unchanged(text: str) -> None:
    assert sanitize_surrogates(text) == text

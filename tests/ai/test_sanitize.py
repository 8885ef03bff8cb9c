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


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF)))
def test_the_result_always_encodes_as_utf8(text: str) -> None:
    sanitize_surrogates(text).encode("utf-8")


@given(st.text())
def test_text_without_surrogates_is_unchanged(text: str) -> None:
    assert sanitize_surrogates(text) == text

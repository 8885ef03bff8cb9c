"""``tau._pattern.lazy_pattern``: a regular expression compiled the first time it is used."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau._pattern import lazy_pattern

SOURCE = r"(\d+)-(?P<tail>[a-z]*)"


def test_nothing_is_compiled_before_the_first_use() -> None:
    pattern = lazy_pattern(SOURCE + "(?#untouched)")
    assert "search" not in vars(pattern)
    assert pattern.search("12-ab") is not None
    assert "search" in vars(pattern)


@given(st.text(alphabet="0123456789-abcXYZ \n", max_size=40))
def test_it_answers_as_the_compiled_pattern_does(text: str) -> None:
    lazy, compiled = lazy_pattern(SOURCE, re.IGNORECASE), re.compile(SOURCE, re.IGNORECASE)
    assert lazy.sub("#", text) == compiled.sub("#", text)
    assert lazy.findall(text) == compiled.findall(text)
    assert lazy.split(text) == compiled.split(text)
    assert bool(lazy.fullmatch(text)) == bool(compiled.fullmatch(text))
    assert (lazy.pattern, lazy.flags, lazy.groups) == (compiled.pattern, compiled.flags, compiled.groups)


def test_a_name_no_pattern_has_raises_attribute_error() -> None:
    with pytest.raises(AttributeError):
        lazy_pattern("x").no_such_method  # type: ignore[attr-defined]  # noqa: B018


def test_a_bad_pattern_fails_where_it_is_used() -> None:
    broken = lazy_pattern("(")
    with pytest.raises(re.error):
        broken.search("(")

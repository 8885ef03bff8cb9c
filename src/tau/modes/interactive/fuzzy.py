"""Fuzzy matching for pickers and ``@`` file references: every query character in order, case
ignored; tighter and earlier matches, and matches on the last path segment, rank first."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

__all__ = ["fuzzy_filter", "fuzzy_score"]

T = TypeVar("T")


def fuzzy_score(query: str, text: str) -> float | None:
    """A score (lower is better) when ``query`` is a subsequence of ``text``, else ``None``.

    Space-separated words in ``query`` must each match."""
    if not query:
        return 0.0
    lowered = text.lower()
    total = 0.0
    for word in query.lower().split():
        score = _word_score(word, lowered)
        if score is None:
            return None
        total += score
    return total


def _word_score(word: str, text: str) -> float | None:
    position = text.find(word)
    if position >= 0:  # a plain substring beats any scattered match
        bonus = -0.5 if position == 0 or not text[position - 1].isalnum() else 0.0
        in_tail = position > text.rfind("/")
        return position * 0.01 + bonus - (0.5 if in_tail else 0.0)
    start = -1
    gaps = 0
    index = 0
    for char in word:
        found = text.find(char, index)
        if found < 0:
            return None
        if start < 0:
            start = found
        elif found > index:
            gaps += found - index
        index = found + 1
    return 10.0 + gaps + start * 0.01


def fuzzy_filter(
    query: str, items: Iterable[T], key: Callable[[T], str], limit: int | None = None
) -> list[T]:
    """``items`` matching ``query``, best first (stable for equal scores)."""
    scored: list[tuple[float, int, T]] = []
    for order, item in enumerate(items):
        score = fuzzy_score(query, key(item))
        if score is not None:
            scored.append((score, order, item))
    scored.sort(key=lambda s: (s[0], s[1]))
    chosen: Sequence[tuple[float, int, T]] = scored if limit is None else scored[:limit]
    return [item for _, _, item in chosen]

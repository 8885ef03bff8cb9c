"""Fuzzy matching for pickers and ``@`` file references: every query character in order, case
ignored; tighter and earlier matches, and matches on the last path segment, rank first."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

__all__ = ["fuzzy_filter", "fuzzy_score", "pi_fuzzy_filter"]

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


_BOUNDARY = frozenset(" \t\n\r\f\v-_./:")
_LETTERS_DIGITS = re.compile(r"^([a-z]+)([0-9]+)$")
_DIGITS_LETTERS = re.compile(r"^([0-9]+)([a-z]+)$")


def _positions_score(text: str, positions: Sequence[int]) -> float:
    score = 0.0
    last = -1
    run = 0
    for i in positions:
        if last == i - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if i == 0 or text[i - 1] in _BOUNDARY:
            score -= 10
        score += i * 0.1
        last = i
    return score


def _token_score(token: str, text: str) -> float | None:
    if not token:
        return 0.0
    if len(token) > len(text):
        return None
    positions: list[int] = []
    last = -1
    for char in token:  # each character at its first place after the one before
        last = text.find(char, last + 1)
        if last < 0:
            return None
        positions.append(last)
    score = _positions_score(text, positions)
    start = text.find(token)
    while start >= 0:  # a contiguous occurrence may align better than the greedy one
        score = min(score, _positions_score(text, range(start, start + len(token))))
        start = text.find(token, start + 1)
    return score - 100 if token == text else score


def _token_or_swapped_score(token: str, text: str) -> float | None:
    score = _token_score(token, text)
    if score is not None:
        return score
    parts = _LETTERS_DIGITS.match(token) or _DIGITS_LETTERS.match(token)
    if parts is None:
        return None
    swapped = _token_score(parts.group(2) + parts.group(1), text)  # "gpt4" finds "4gpt" and back
    return None if swapped is None else swapped + 5


def pi_fuzzy_filter(query: str, items: Iterable[T], key: Callable[[T], str]) -> list[T]:
    """``items`` matching ``query`` ranked as pi 1.6's pickers rank them (its ``fuzzyFilter``):
    every whitespace- or slash-separated token must match in order, case ignored; consecutive
    characters and word starts score best, gaps and late matches worse; ties keep their order."""
    tokens = [token for token in re.split(r"[\s/]+", query.strip().lower()) if token]
    if not tokens:
        return list(items)
    scored: list[tuple[float, int, T]] = []
    for order, item in enumerate(items):
        text = key(item).lower()
        total = 0.0
        for token in tokens:
            score = _token_or_swapped_score(token, text)
            if score is None:
                break
            total += score
        else:
            scored.append((total, order, item))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [item for _, _, item in scored]

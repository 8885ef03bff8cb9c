"""Cutting the head off a long paragraph that is still streaming, so that it can go to scrollback.

A stream commits whole blocks; a reply that is one huge paragraph would otherwise be rendered
whole on every frame (a 2 MB one took minutes). ``split_paragraph`` finds where the rendered
paragraph's lines can be split: a line break of the wrap such that the source after it, rendered
as a paragraph of its own, gives exactly the lines after it, and the source before it leaves no
inline markup open (no delimiter a later character could still pair with: ``*``, ``_``, a
backtick, ``[``, ``<``, ``~``). Those lines can no longer change: the wrap is greedy, and nothing
later can reach back into closed markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from markdown_it import MarkdownIt

__all__ = ["split_paragraph"]

_SGR = re.compile(r"\x1b\[[0-9;]*m")
_OPENERS = re.compile(r"[*_`\[<~]")
_WINDOW = 400
"""How far (in source characters) around the estimated position a line break is looked for."""


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt().enable("strikethrough")


def _closed(source: str) -> bool:
    """Whether ``source`` leaves no inline construct open (conservative: a literal delimiter
    character anywhere counts as open)."""
    if not _OPENERS.search(source):
        return True
    for token in _inline_parser().parseInline(source):
        for child in token.children or ():
            if child.type == "text" and _OPENERS.search(child.content):
                return False
    return True


def split_paragraph(render: Callable[[str], str], source: str, keep: int) -> tuple[str, int] | None:
    """``(ANSI of the lines that are final, offset in source where the rest begins)`` for a
    paragraph ``source`` rendered by ``render``, keeping at least ``keep`` lines back; ``None``
    when there is no safe place to cut."""
    lines = render(source).split("\n")
    plain = [_SGR.sub("", line) for line in lines]
    shown = sum(len(line) + 1 for line in plain)
    # A break a few lines further up is tried too: markup open across one break may be closed
    # before another.
    for cut_line in range(len(lines) - keep, max(0, len(lines) - keep - 6), -2):
        offset = _break_offset(render, source, lines, plain, cut_line, shown)
        if offset is not None and _closed(source[:offset]):
            return "\n".join(lines[:cut_line]), offset
    return None


def _break_offset(
    render: Callable[[str], str], source: str, lines: list[str], plain: list[str], cut_line: int, shown: int
) -> int | None:
    """Where in ``source`` the wrapped line ``cut_line`` begins, checked by rendering from there."""
    rest_shown = sum(len(line) + 1 for line in plain[cut_line:])
    estimate = len(source) - rest_shown * len(source) // shown
    head = _letters(plain[cut_line])[:16]
    wanted = lines[cut_line:]
    for offset in _word_starts(source, estimate):
        # The line's text must start there (markup aside): a quick filter before rendering.
        if not _letters(source[offset : offset + 4 * len(head) + 40]).startswith(head):
            continue
        if render(source[offset:]).split("\n") == wanted:
            return offset
    return None


_MARKUP = re.compile(r"[\s*_`~\[\]()\\]+")


def _letters(text: str) -> str:
    """``text`` without whitespace and markup characters: what source and render have in common."""
    return _MARKUP.sub("", text)


def _word_starts(source: str, estimate: int) -> list[int]:
    """Offsets just after whitespace, within ``_WINDOW`` of ``estimate``, nearest first."""
    low, high = max(1, estimate - _WINDOW), min(len(source) - 1, estimate + _WINDOW)
    starts = [
        index
        for index in range(low, high + 1)
        if source[index - 1] in " \n\t" and source[index] not in " \n\t"
    ]
    return sorted(starts, key=lambda index: abs(index - estimate))

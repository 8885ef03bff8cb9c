"""Locating each ``oldText`` of an edit in a file and applying all replacements at once.

Matching is exact first. When some ``oldText`` is not in the file verbatim, both sides are compared
after :func:`normalize_for_match` (NFKC, trailing spaces dropped, typographic quotes, dashes and
spaces made ASCII), and then the whole file is rewritten in that normalised form. Uniqueness is
always judged in normalised space, so text that differs only typographically counts as a duplicate.
All functions expect text whose line endings are already ``\\n``.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from typing import Literal

from msgspec import Struct

from tau.tools.errors import ToolError

LineEnding = Literal["\r\n", "\n"]

_TRAILING_SPACE = re.compile(r"[^\S\n]+(?=\n|\Z)")
_TYPOGRAPHY = str.maketrans(
    {
        **dict.fromkeys(["\u2018", "\u2019", "\u201a", "\u201b"], "'"),
        **dict.fromkeys(["\u201c", "\u201d", "\u201e", "\u201f"], '"'),
        **dict.fromkeys([*map(chr, range(0x2010, 0x2016)), "\u2212"], "-"),
        **dict.fromkeys(["\u00a0", *map(chr, range(0x2002, 0x200B)), "\u202f", "\u205f", "\u3000"], " "),
    }
)


class Replacement(Struct, frozen=True):
    old_text: str
    new_text: str


class AppliedEdits(Struct, frozen=True):
    base: str
    """The text the edits were applied to: the file, or its normalised form after a fuzzy match."""
    result: str


def to_lf(text: str) -> str:
    """``\\r\\n`` and lone ``\\r`` become ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def detect_line_ending(text: str) -> LineEnding:
    """CRLF when the file's first newline is preceded by ``\\r``, else LF."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def normalize_for_match(text: str) -> str:
    """The form in which near-miss text is compared: NFKC, no trailing whitespace on any line,
    ASCII quotes, dashes and spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = _TRAILING_SPACE.sub("", text)
    return text.translate(_TYPOGRAPHY)


def _name(index: int, count: int) -> str:
    return f"edits[{index}]" if count > 1 else "the text"


def apply_replacements(content: str, edits: Sequence[Replacement], path: str) -> AppliedEdits:
    """Apply every edit to ``content`` as matched in the original; raise a :class:`ToolError` that
    says why when an edit is empty, missing, ambiguous, overlapping, or changes nothing."""
    count = len(edits)
    if count == 0:
        raise ToolError("edits must contain at least one replacement")
    normalized_content: str | None = None
    fuzzy = False
    for index, edit in enumerate(edits):
        if not edit.old_text:
            where = f"edits[{index}].oldText" if count > 1 else "oldText"
            raise ToolError(f"{where} must not be empty in {path}.")
        if edit.old_text in content:
            continue
        if normalized_content is None:
            normalized_content = normalize_for_match(content)
        if normalize_for_match(edit.old_text) not in normalized_content:
            raise ToolError(_not_found(index, count, path))
        fuzzy = True

    base = normalized_content if fuzzy and normalized_content is not None else content
    counting_space = normalize_for_match(base)
    found: list[tuple[int, int, int, str]] = []  # (start, length, edit index, new text)
    for index, edit in enumerate(edits):
        needle = normalize_for_match(edit.old_text) if fuzzy else edit.old_text
        start = base.find(needle)
        if start < 0:
            raise ToolError(_not_found(index, count, path))
        occurrences = counting_space.count(normalize_for_match(edit.old_text))
        if occurrences > 1:
            raise ToolError(
                f"Found {occurrences} occurrences of {_name(index, count)} in {path}. The text must be "
                "unique. Please provide more context to make it unique."
            )
        found.append((start, len(needle), index, edit.new_text))

    found.sort()
    for (start, length, index, _), (next_start, _, next_index, _) in itertools.pairwise(found):
        if start + length > next_start:
            first, second = sorted((index, next_index))
            raise ToolError(
                f"edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit "
                "or target disjoint regions."
            )

    pieces: list[str] = []
    position = 0
    for start, length, _, new_text in found:
        pieces.append(base[position:start])
        pieces.append(new_text)
        position = start + length
    pieces.append(base[position:])
    result = "".join(pieces)
    if result == base:
        raise ToolError(f"No changes made to {path}. The replacement produces identical content.")
    return AppliedEdits(base=base, result=result)


def _not_found(index: int, count: int, path: str) -> str:
    what = f"edits[{index}]" if count > 1 else "the exact text"
    return (
        f"Could not find {what} in {path}. The old text must match exactly including all "
        "whitespace and newlines."
    )

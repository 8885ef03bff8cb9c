"""Flags as one cluster in rich's measure of text.

rich splits text into grapheme clusters (``rich.cells.split_graphemes``) to fold a word longer
than the width (``chop_cells``) and to cut text at a cell (``set_cell_size``, ``split_text``). It
joins ZWJ sequences, variation selectors and zero-width marks to the character before, but takes
each regional indicator alone, one cell wide. So a folded line could end in half a flag (🇺, then
🇸 at the start of the next line), and that line was one cell wider than rich counted: the
terminal, which draws the pair as one two-cell flag, wrapped it, and the fullscreen pane cut it.

``split_graphemes`` here is rich's with each pair of regional indicators made one span of two
cells (pairs are counted from the first indicator of a run, as UAX #29 pairs them). Importing this
module puts it in ``rich.cells``, where rich's own functions look it up when they run.
"""

from __future__ import annotations

import re

import rich.cells

__all__ = ["split_graphemes"]

_rich_split_graphemes = rich.cells.split_graphemes
_REGIONAL = re.compile("[\U0001f1e6-\U0001f1ff]")

Spans = list[tuple[int, int, int]]


def split_graphemes(text: str, unicode_version: str = "auto") -> tuple[Spans, int]:
    """``(start, end, cells)`` of each cluster of ``text``, and the cells of the whole."""
    spans, total = _rich_split_graphemes(text, unicode_version)
    if not _REGIONAL.search(text):
        return spans, total
    joined: Spans = []
    pending = False  # the span before is a regional indicator still without its pair
    for span in spans:
        regional = _REGIONAL.match(text, span[0]) is not None
        if regional and pending:
            start, _end, cells = joined[-1]
            joined[-1] = (start, span[1], cells + span[2])
            pending = False
            continue
        joined.append(span)
        pending = regional
    return joined, total


rich.cells.split_graphemes = split_graphemes

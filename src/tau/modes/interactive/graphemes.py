"""Grapheme clusters (UAX #29) and their cells on a terminal, from ``wcwidth``.

A cluster is what a person sees as one character: 👩‍👩‍👧 (three emoji joined by ZWJ), a flag
(two regional indicators), 👍🏽 (a skin-tone modifier), e + U+0301, a decomposed Hangul
syllable. The editor moves and deletes by clusters. ``wcwidth`` measures a cluster as terminals
that cluster do (kitty, WezTerm, Ghostty, iTerm2, foot, current tmux), and as rich (which renders
the replies) and pi do; prompt_toolkit counts code points, so what it draws goes through
``ClusterCells`` / ``cluster_fragments`` to agree. It is prompt_toolkit's own dependency, so importing it here costs the
TUI nothing, and only the TUI imports this module.
"""

from __future__ import annotations

import zlib

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from prompt_toolkit.utils import get_cwidth
from wcwidth import grapheme_boundary_before, iter_graphemes, width

__all__ = [
    "ClusterCells",
    "cell_width",
    "cluster_end",
    "cluster_fragments",
    "cluster_start",
    "is_boundary",
    "snap",
]


def cluster_start(text: str, position: int) -> int:
    """The start of the cluster that holds ``text[position]`` (``position`` itself at a boundary)."""
    if position <= 0 or position >= len(text):
        return max(0, min(position, len(text)))
    return int(grapheme_boundary_before(text, position + 1))


def is_boundary(text: str, position: int) -> bool:
    return cluster_start(text, position) == position


def cluster_end(text: str, position: int) -> int:
    """The end of the cluster that holds ``text[position]``."""
    if position >= len(text):
        return len(text)
    start = cluster_start(text, position)
    return start + len(next(iter_graphemes(text, start)))


def snap(text: str, position: int, *, forward: bool) -> int:
    """``position`` moved to a cluster boundary: on to the cluster's end when moving forward,
    back to its start otherwise."""
    if is_boundary(text, position):
        return position
    return cluster_end(text, position) if forward else cluster_start(text, position)


def cell_width(text: str) -> int:
    """The cells ``text`` (one line, no control characters) takes on the terminal."""
    if text.isascii():
        return len(text)
    return int(width(text, control_codes="ignore"))


def _split_cluster(cluster: str, style: str) -> StyleAndTextTuples | None:
    """How prompt_toolkit is to draw ``cluster`` so that it takes the cells the terminal gives
    it: its leading code points as a zero-width escape, its last one as the cell (when that one
    alone is as wide as the whole, as in ZWJ sequences, flags and skin tones); ``None`` when
    prompt_toolkit already counts it right. The cell's style names the cluster, so that a
    changed cluster is redrawn even where its last code point stays the same."""
    if len(cluster) < 2:
        return None
    cells = cell_width(cluster)
    if get_cwidth(cluster) == cells or get_cwidth(cluster[-1]) != cells:
        return None
    tag = f"{style} class:cluster-{zlib.crc32(cluster.encode())}"
    return [("[ZeroWidthEscape]", cluster[:-1]), (tag, cluster[-1])]


def cluster_fragments(fragments: StyleAndTextTuples) -> StyleAndTextTuples:
    """Formatted text (one that is not wrapped) with its clusters drawn as the terminal draws them.

    A cluster may run over several fragments: ANSI text comes parsed a character a fragment,
    and a search mark or a selection splits a row where it starts. The clusters are found in
    the text of each run of fragments between zero-width escapes, and a split cluster takes the
    style (and mouse handler) of its first code point."""
    if all(fragment[1].isascii() for fragment in fragments):
        return fragments
    out: StyleAndTextTuples = []
    run: StyleAndTextTuples = []
    for fragment in fragments:
        if "[ZeroWidthEscape]" in fragment[0]:
            out.extend(_clustered(run))
            run = []
            out.append(fragment)
        elif fragment[1]:
            run.append(fragment)
    out.extend(_clustered(run))
    return out


def _clustered(run: StyleAndTextTuples) -> StyleAndTextTuples:
    """``cluster_fragments`` of fragments without an escape among them."""
    text = "".join(fragment[1] for fragment in run)
    if text.isascii():
        return run
    owners = [index for index, fragment in enumerate(run) for _ in fragment[1]]  # each code point's fragment
    out: StyleAndTextTuples = []

    def emit(owner: int, chars: str) -> None:
        fragment = run[owner]
        if out and out[-1][0] == fragment[0] and out[-1][2:] == fragment[2:]:
            out[-1] = (out[-1][0], out[-1][1] + chars, *fragment[2:])
        else:
            out.append((fragment[0], chars, *fragment[2:]))

    position = 0
    for cluster in iter_graphemes(text):
        owner = owners[position]
        split = _split_cluster(cluster, run[owner][0])
        if split is None:
            for offset, char in enumerate(cluster):
                emit(owners[position + offset], char)
        else:
            escape, cell = split
            out.append(escape)
            out.append((cell[0], cell[1], *run[owner][2:]))
        position += len(cluster)
    return out


class ClusterCells(Processor):
    """Draws the editor's text cluster by cluster, as the terminal shows it.

    prompt_toolkit lays text out code point by code point, so it counts 👩‍👩‍👧 as six cells and
    a flag as four where the terminal draws two: the cursor and every later character land
    off their place (typing into the middle of a line overwrote what was before). Such a cluster
    goes out as its leading code points in a zero-width escape and its last code point as the
    cell (its width is the cluster's), so both agree. A cluster that would straddle the edge
    starts the next row one blank in (the escape cannot be carried over a wrap). Positions are
    mapped both ways, so the cursor sits on the cluster's cell."""

    def apply_transformation(self, transformation_input: TransformationInput) -> Transformation:
        fragments = transformation_input.fragments
        text = fragment_list_to_text(fragments)
        if text.isascii() or any("[ZeroWidthEscape]" in fragment[0] for fragment in fragments):
            return Transformation(fragments)
        styles = [style for style, chars, *_ in fragments for _ in chars]
        wrap = transformation_input.width or 0
        shown: StyleAndTextTuples = []
        to_display: list[int] = []
        to_source: list[int] = []
        column = 0
        source = 0
        for cluster in iter_graphemes(text):
            split = _split_cluster(cluster, styles[source])
            if split is not None:
                cells = cell_width(cluster)
                if wrap and column + cells > wrap:
                    # prompt_toolkit notes an escape where the row is, before it wraps the cell
                    # after it: blanks fill the row and one more wraps, then the cluster follows
                    pad = wrap - column + 1
                    shown.append((styles[source], " " * pad))
                    to_source.extend([source] * pad)
                    column = 1
                to_display.extend([len(to_source)] * len(cluster))
                to_source.append(source)
                shown.extend(split)
                column += cells
            else:
                for offset, char in enumerate(cluster):
                    size = get_cwidth(char)
                    if wrap and size and column + size > wrap:
                        column = 0
                    column += size
                    to_display.append(len(to_source))
                    to_source.append(source + offset)
                    shown.append((styles[source + offset], char))
            source += len(cluster)
        end_display, end_source = len(to_source), len(text)

        def source_to_display(position: int) -> int:
            return to_display[position] if position < end_source else end_display + position - end_source

        def display_to_source(position: int) -> int:
            return to_source[position] if position < end_display else end_source + position - end_display

        return Transformation(shown, source_to_display, display_to_source)

"""Grapheme clusters as the TUI measures and cuts them (``tau.modes.interactive.graphemes``)."""

from __future__ import annotations

from prompt_toolkit.utils import get_cwidth

from tau.modes.interactive.graphemes import cell_width, cluster_end, cluster_fragments, cluster_start, snap
from tau.modes.interactive.render.format import truncate_to_width

FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467"
FLAG = "\U0001f1fa\U0001f1f8"
TEXT = "a" + FAMILY + "e\u0301" + FLAG + "漢"


def test_a_position_inside_a_cluster_snaps_to_its_start_or_end() -> None:
    inside = 1 + 2  # between the first woman's ZWJ and the second woman
    assert (cluster_start(TEXT, inside), cluster_end(TEXT, inside)) == (1, 1 + len(FAMILY))
    assert snap(TEXT, inside, forward=True) == 1 + len(FAMILY)
    assert snap(TEXT, inside, forward=False) == 1
    assert snap(TEXT, 1, forward=True) == 1  # already on a boundary


def test_clusters_take_the_cells_a_clustering_terminal_gives_them() -> None:
    assert [cell_width(part) for part in ("a", FAMILY, "e\u0301", FLAG, "漢")] == [1, 2, 1, 2, 2]


def test_truncation_cuts_between_clusters() -> None:
    assert truncate_to_width(TEXT, 5) == "a" + FAMILY + "e\u0301…"
    assert truncate_to_width(TEXT, 3) == "a…"  # 👩‍👩‍👧 does not fit whole, so none of it is kept


def test_fragments_are_split_so_prompt_toolkit_counts_the_cells_the_terminal_draws() -> None:
    drawn = cluster_fragments([("class:footer", TEXT)])
    cells = sum(get_cwidth(text) for style, text in drawn if "[ZeroWidthEscape]" not in style)
    assert cells == cell_width(TEXT) == 8
    assert "".join(text for _, text in drawn) == TEXT  # every code point still goes out, in order

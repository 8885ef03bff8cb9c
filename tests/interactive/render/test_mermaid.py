"""Mermaid flowcharts drawn as boxes and arrows; what cannot be drawn stays code."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.modes.interactive.render.mermaid import parse_flowchart, render_mermaid


def _drawn(source: str, width: int = 100) -> str | None:
    lines = render_mermaid(source, width, {})
    return None if lines is None else "\n".join(line.plain for line in lines)


def test_a_left_to_right_chain_is_boxes_joined_by_arrows() -> None:
    assert _drawn("graph LR\n  A --> B --> C") == (
        "┌───┐   ┌───┐   ┌───┐\n│ A ├──▶│ B ├──▶│ C │\n└───┘   └───┘   └───┘"
    )


def test_a_top_down_decision_branches_with_its_labels() -> None:
    drawn = _drawn("graph TD\n  A[Start] --> B{Is it?}\n  B -->|Yes| C[OK]\n  B -->|No| D[End]")
    assert drawn is not None
    lines = drawn.split("\n")
    assert lines[1].strip() == "│ Start │"
    assert "║ Is it? ║" in drawn  # a decision has a double border
    assert "Yes" in drawn and "No" in drawn
    assert lines[-2].split() == ["│", "OK", "│", "│", "End", "│"]
    assert drawn.count("▼") == 3


def test_shapes_labels_in_quotes_and_statements_on_one_line() -> None:
    diagram = parse_flowchart('flowchart TB; a("Round one") --> b{{Hex}}; b -- yes --> c([Stadium])')
    assert diagram is not None
    assert [(n.label, n.kind) for n in diagram.nodes.values()] == [
        ("Round one", "round"),
        ("Hex", "decision"),
        ("Stadium", "round"),
    ]
    assert [(e.source, e.target, e.label) for e in diagram.edges] == [("a", "b", ""), ("b", "c", "yes")]
    assert "╭" in (_drawn('flowchart TB; a("Round one") --> b') or "")


def test_an_edge_that_skips_a_layer_passes_beside_it() -> None:
    drawn = _drawn("graph TD\n A-->B\n B-->C\n A-->C")
    assert drawn is not None
    assert drawn.count("▼") == 2  # both edges into C end in its one arrow
    assert "├────┘" in drawn  # the long edge joins beside B


def test_what_cannot_be_drawn_is_none() -> None:
    assert _drawn("sequenceDiagram\n Alice->>Bob: hi") is None
    assert _drawn("graph TD\n A-->B\n B-->A") is None  # a cycle
    assert _drawn("graph TD\n subgraph one\n A-->B\n end") is None
    assert _drawn("graph RL\n A-->B") is None
    assert _drawn("graph LR\n A[" + "x" * 50 + "] --> B", width=40) is None  # too wide


@given(st.text(max_size=120))
def test_any_text_gives_a_drawing_or_none(text: str) -> None:
    for source in (text, f"graph TD\n{text}", f"graph LR\n{text}"):
        lines = render_mermaid(source, 80, {})
        assert lines is None or all(line.cell_len <= 80 for line in lines)

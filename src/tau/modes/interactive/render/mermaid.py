"""Mermaid flowcharts as Unicode box drawings, as pi 1.6 draws a reply's ```` ```mermaid ```` blocks.

``graph``/``flowchart`` diagrams going down (``TD``/``TB``) or right (``LR``) are drawn: nodes as
boxes (rounded for ``(round)``, double-lined for ``{decisions}``), edges as lines with arrows and
their labels beside them. Nodes are put in layers by the longest path from a start node; an edge
that skips layers passes through them. What cannot be drawn this way (another kind of diagram, a
cycle, subgraphs, a drawing wider than the space) gives ``None``, and the code block is shown as it is.
"""

from __future__ import annotations

import re

from msgspec import Struct
from rich.text import Text

__all__ = ["Diagram", "parse_flowchart", "render_mermaid"]

_HEADER = re.compile(r"^(?:graph|flowchart)(?:\s+(TD|TB|LR))?\s*;?\s*$", re.IGNORECASE)
_IGNORED = re.compile(r"^(?:%%|classDef\s|class\s|style\s|linkStyle\s|click\s)")
_ID = r"\w+(?:-\w+)*"
_SHAPES = [  # opening, closing, kind (longest openings first)
    ("([", "])", "round"),
    ("[[", "]]", "box"),
    ("((", "))", "round"),
    ("{{", "}}", "decision"),
    ("[(", ")]", "box"),
    ("[", "]", "box"),
    ("(", ")", "round"),
    ("{", "}", "decision"),
]
_LINK = re.compile(
    r"\s*(?:"
    r"(?P<l1>--|==|-\.)\s*(?P<t1>[^|>]*?)\s*(?:-->|==>|\.->|---|===|-\.-)"  # A -- text --> B
    r"|(?P<l2><?(?:-->|---|==>|===|-\.->|-\.-|--[ox]))(?:\s*\|(?P<t2>[^|]*)\|)?"  # A -->|text| B
    r")\s*"
)


class Node(Struct):
    id: str
    label: str
    kind: str = "box"


class Edge(Struct, frozen=True):
    source: str
    target: str
    label: str
    arrow: bool


class Diagram(Struct):
    direction: str
    nodes: dict[str, Node]
    edges: list[Edge]


def _node(text: str, at: int, nodes: dict[str, Node]) -> tuple[list[str], int] | None:
    """The node ids (``A & B``) starting at ``at``, and where they end."""
    ids: list[str] = []
    while True:
        match = re.compile(r"\s*(" + _ID + r")").match(text, at)
        if match is None:
            return None
        node_id, at = match.group(1), match.end()
        node = nodes.setdefault(node_id, Node(node_id, node_id))
        for opening, closing, kind in _SHAPES:
            if text.startswith(opening, at):
                end = text.find(closing, at + len(opening))
                if end < 0:
                    return None
                label = text[at + len(opening) : end].strip()
                if len(label) >= 2 and label[0] == label[-1] == '"':
                    label = label[1:-1]
                node.label, node.kind = label.replace("<br>", " ").replace("<br/>", " "), kind
                at = end + len(closing)
                break
        ids.append(node_id)
        ampersand = re.compile(r"\s*&").match(text, at)
        if ampersand is None:
            return ids, at
        at = ampersand.end()


def parse_flowchart(source: str) -> Diagram | None:
    """A ``graph``/``flowchart`` source as nodes and edges; ``None`` for anything else."""
    lines = [line.strip() for line in source.replace(";", "\n").split("\n")]
    lines = [line for line in lines if line and not _IGNORED.match(line)]
    if not lines:
        return None
    header = _HEADER.match(lines[0])
    if header is None:
        return None
    direction = (header.group(1) or "TD").upper()
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    for line in lines[1:]:
        if line.startswith(("subgraph", "end", "direction")):
            return None
        found = _node(line, 0, nodes)
        if found is None:
            return None
        sources, at = found
        while at < len(line):
            link = _LINK.match(line, at)
            if link is None:
                return None
            label = (link.group("t1") or link.group("t2") or "").strip().strip('"')
            arrow = (link.group("l2") or "").endswith(">") or link.group("l1") is not None
            found = _node(line, link.end(), nodes)
            if found is None:
                return None
            targets, at = found
            edges += [Edge(s, t, label, arrow) for s in sources for t in targets]
            sources = targets
    return Diagram("LR" if direction == "LR" else "TD", nodes, edges) if nodes else None


# -- layout -----------------------------------------------------------------------------------------

_UP, _DOWN, _LEFT, _RIGHT = 1, 2, 4, 8
_LINES = {
    _UP: "│", _DOWN: "│", _UP | _DOWN: "│", _LEFT: "─", _RIGHT: "─", _LEFT | _RIGHT: "─",
    _DOWN | _RIGHT: "┌", _DOWN | _LEFT: "┐", _UP | _RIGHT: "└", _UP | _LEFT: "┘",
    _UP | _DOWN | _RIGHT: "├", _UP | _DOWN | _LEFT: "┤", _DOWN | _LEFT | _RIGHT: "┬",
    _UP | _LEFT | _RIGHT: "┴", _UP | _DOWN | _LEFT | _RIGHT: "┼",
}  # fmt: skip
_CORNERS = {"box": "┌┐└┘─│", "round": "╭╮╰╯─│", "decision": "╔╗╚╝═║"}


class _Canvas:
    def __init__(self) -> None:
        self.lines: dict[tuple[int, int], int] = {}
        self.cells: dict[tuple[int, int], tuple[str, str]] = {}

    def line(self, x0: int, y0: int, x1: int, y1: int) -> None:
        """A straight line between two cells (joined to the lines it meets)."""
        if x0 == x1:
            for y in range(min(y0, y1), max(y0, y1)):
                self.lines[(x0, y)] = self.lines.get((x0, y), 0) | _DOWN
                self.lines[(x0, y + 1)] = self.lines.get((x0, y + 1), 0) | _UP
        else:
            for x in range(min(x0, x1), max(x0, x1)):
                self.lines[(x, y0)] = self.lines.get((x, y0), 0) | _RIGHT
                self.lines[(x + 1, y0)] = self.lines.get((x + 1, y0), 0) | _LEFT

    def put(self, x: int, y: int, text: str, role: str) -> None:
        for offset, char in enumerate(text):
            self.cells[(x + offset, y)] = (char, role)

    def free(self, x: int, y: int, width: int) -> bool:
        return all((x + i, y) not in self.cells and (x + i, y) not in self.lines for i in range(width))

    def box(self, x: int, y: int, node: Node, width: int, attach: tuple[int, int] | None) -> None:
        tl, tr, bl, br, h, v = list(_CORNERS.get(node.kind, _CORNERS["box"]))
        self.put(x, y, tl + h * (width - 2) + tr, "border")
        self.put(x, y + 1, v, "border")
        self.put(x + 1, y + 1, f" {node.label}".ljust(width - 2), "text")
        self.put(x + width - 1, y + 1, v, "border")
        self.put(x, y + 2, bl + h * (width - 2) + br, "border")
        if attach is not None:  # where edges leave: the bottom middle (down) or the right middle
            ax, ay = attach
            joint = {"│": "├", "║": "╟"}[v] if ay == y + 1 else {"─": "┬", "═": "╤"}[h]
            self.put(ax, ay, joint, "border")

    def rows(self) -> list[list[tuple[str, str]]]:
        keys = [*self.lines, *self.cells]
        width = max(x for x, _ in keys) + 1
        height = max(y for _, y in keys) + 1
        grid = [[(" ", "") for _ in range(width)] for _ in range(height)]
        for (x, y), bits in self.lines.items():
            grid[y][x] = (_LINES[bits], "edge")
        for (x, y), cell in self.cells.items():
            grid[y][x] = cell
        return [_trimmed(row) for row in grid]


def _trimmed(row: list[tuple[str, str]]) -> list[tuple[str, str]]:
    while row and row[-1][0] == " ":
        row.pop()
    return row


def _layers(diagram: Diagram) -> list[list[str]] | None:
    """Node ids by layer (longest path from a start); ``None`` for a cycle."""
    order = list(diagram.nodes)
    incoming: dict[str, list[str]] = {n: [] for n in order}
    for edge in diagram.edges:
        if edge.source == edge.target:
            return None
        incoming[edge.target].append(edge.source)
    depth: dict[str, int] = {}
    visiting: set[str] = set()

    def depth_of(node: str) -> int | None:
        if node in depth:
            return depth[node]
        if node in visiting:
            return None
        visiting.add(node)
        parents = [depth_of(p) for p in incoming[node]]
        visiting.discard(node)
        if any(p is None for p in parents):
            return None
        depth[node] = 1 + max((p for p in parents if p is not None), default=-1)
        return depth[node]

    if any(depth_of(node) is None for node in order):
        return None
    layers: list[list[str]] = [[] for _ in range(max(depth.values()) + 1)]
    for node in order:
        layers[depth[node]].append(node)
    return layers


def _chains(diagram: Diagram, layers: list[list[str]]) -> tuple[list[list[str]], list[Edge]]:
    """Layers with a pass-through point for each layer an edge skips, and the edges one layer long."""
    depth = {node: index for index, layer in enumerate(layers) for node in layer}
    layers = [list(layer) for layer in layers]
    edges: list[Edge] = []
    for number, edge in enumerate(diagram.edges):
        source = edge.source
        for layer in range(depth[edge.source] + 1, depth[edge.target]):
            point = f"\x00{number}.{layer}"
            layers[layer].append(point)
            edges.append(Edge(source, point, "", False))
            source = point
        edges.append(Edge(source, edge.target, edge.label, edge.arrow))
    # Within a layer, nodes follow the mean place of what leads to them (fewer crossings).
    for index in range(1, len(layers)):
        above = {node: i for i, node in enumerate(layers[index - 1])}
        parents: dict[str, list[int]] = {}
        for edge in edges:
            if edge.target in layers[index] and edge.source in above:
                parents.setdefault(edge.target, []).append(above[edge.source])
        first = {node: i for i, node in enumerate(layers[index])}
        layers[index].sort(
            key=lambda n: (sum(parents.get(n, [first[n]])) / max(1, len(parents.get(n, []))), first[n])
        )
    return layers, edges


def _size(diagram: Diagram, node: str) -> int:
    """A node's box width (a pass-through point is one cell)."""
    return len(diagram.nodes[node].label) + 4 if node in diagram.nodes else 1


def _draw_down(diagram: Diagram, layers: list[list[str]], edges: list[Edge]) -> _Canvas:
    gap = 4
    widths = [sum(_size(diagram, n) for n in layer) + gap * (len(layer) - 1) for layer in layers]
    total = max(widths)
    x_of: dict[str, int] = {}
    for layer, width in zip(layers, widths, strict=True):
        x = (total - width) // 2
        for node in layer:
            x_of[node] = x
            x += _size(diagram, node) + gap
    centre = {node: x_of[node] + _size(diagram, node) // 2 for node in x_of}
    canvas = _Canvas()
    y = 0
    for index, layer in enumerate(layers):
        leaving = [e for e in edges if e.source in layer]
        for node in layer:
            if node in diagram.nodes:
                attach = (centre[node], y + 2) if any(e.source == node for e in leaving) else None
                canvas.box(x_of[node], y, diagram.nodes[node], _size(diagram, node), attach)
            else:
                canvas.line(centre[node], y, centre[node], y + 2)
        if index == len(layers) - 1:
            break
        sources = [n for n in layer if any(e.source == n for e in leaving)]
        spread = [n for n in sources if any(centre[e.target] != centre[n] for e in leaving if e.source == n)]
        labelled = any(e.label for e in leaving)
        bus = {node: y + 4 + i for i, node in enumerate(spread)}
        arrow_row = y + 4 + len(spread) + (1 if labelled else 0)
        for node in sources:
            bottom = y + 2
            row = bus.get(node, arrow_row)
            canvas.line(centre[node], bottom, centre[node], row)
            for edge in (e for e in leaving if e.source == node):
                tx = centre[edge.target]
                canvas.line(centre[node], row, tx, row)
                end = arrow_row if edge.target in diagram.nodes else arrow_row + 1
                canvas.line(tx, row, tx, end)
                if edge.target in diagram.nodes:
                    if edge.arrow:
                        canvas.put(tx, arrow_row, "▼", "edge")
                    if edge.label:
                        canvas.put(tx + 1, arrow_row - 1 if labelled else arrow_row, edge.label, "label")
        y = arrow_row + 1
    return canvas


def _draw_right(diagram: Diagram, layers: list[list[str]], edges: list[Edge]) -> _Canvas:
    heights = [sum(3 if n in diagram.nodes else 1 for n in layer) + (len(layer) - 1) for layer in layers]
    total = max(heights)
    y_of: dict[str, int] = {}
    for layer, height in zip(layers, heights, strict=True):
        y = (total - height) // 2
        for node in layer:
            y_of[node] = y
            y += (3 if node in diagram.nodes else 1) + 1
    middle = {node: y_of[node] + (1 if node in diagram.nodes else 0) for node in y_of}
    canvas = _Canvas()
    x = 0
    for index, layer in enumerate(layers):
        column = max(_size(diagram, n) for n in layer)
        leaving = [e for e in edges if e.source in layer]
        for node in layer:
            if node in diagram.nodes:
                width = _size(diagram, node)
                attach = (x + width - 1, y_of[node] + 1) if any(e.source == node for e in leaving) else None
                canvas.box(x, y_of[node], diagram.nodes[node], width, attach)
                if attach is not None and width < column:
                    canvas.line(x + width, middle[node], x + column - 1, middle[node])
            else:
                canvas.line(x, middle[node], x + column, middle[node])
        if index == len(layers) - 1:
            break
        x += column
        sources = [n for n in layer if any(e.source == n for e in leaving)]
        spread = [n for n in sources if any(middle[e.target] != middle[n] for e in leaving if e.source == n)]
        label = max((len(e.label) for e in leaving), default=0)
        bus = {node: x + 1 + i for i, node in enumerate(spread)}
        arrow_column = x + 1 + len(spread) + label + (2 if label else 1)
        for node in sources:
            column_x = bus.get(node, x)
            canvas.line(x - 1, middle[node], column_x, middle[node])
            for edge in (e for e in leaving if e.source == node):
                ty = middle[edge.target]
                canvas.line(column_x, middle[node], column_x, ty)
                end = arrow_column if edge.target in diagram.nodes else arrow_column + 1
                canvas.line(column_x, ty, end, ty)
                if edge.target in diagram.nodes and edge.arrow:
                    canvas.put(arrow_column, ty, "▶", "edge")
                if edge.label and ty > 0 and canvas.free(column_x + 1, ty - 1, len(edge.label)):
                    canvas.put(column_x + 1, ty - 1, edge.label, "label")
        x = arrow_column + 1
    return canvas


def render_mermaid(source: str, width: int, styles: dict[str, str]) -> list[Text] | None:
    """The diagram of a flowchart ``source`` as lines at most ``width`` cells wide, styled by role
    (``border``, ``text``, ``edge``, ``label``); ``None`` when it cannot be drawn."""
    diagram = parse_flowchart(source)
    if diagram is None:
        return None
    layers = _layers(diagram)
    if layers is None:
        return None
    layers, edges = _chains(diagram, layers)
    draw = _draw_right if diagram.direction == "LR" else _draw_down
    rows = draw(diagram, layers, edges).rows()
    if max((len(row) for row in rows), default=0) > width:
        return None
    lines: list[Text] = []
    for row in rows:
        line = Text()
        for char, role in row:
            line.append(char, style=styles.get(role, ""))
        lines.append(line)
    return lines

"""Markdown to ANSI text: whole documents (``render_markdown``) and replies still streaming in
(``StreamingMarkdown``).

The look, on top of rich's markdown renderer: headings left-aligned; a single newline is a line break
(as in GitHub comments: models use it that way); links shown as ``text (url)``, or as OSC 8
hyperlinks showing their text where the terminal has them (``Theme.hyperlinks``, without the ids
rich draws at random, so output stays deterministic); HTML blocks shown as their source;
code blocks between dim ```` ``` ```` lines, indented by the theme's ``code_block_indent`` (two
cells unless ``markdown.codeBlockIndent`` says otherwise), highlighted, without a background fill
(so copying code from the terminal copies no padding).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from typing import ClassVar, cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from msgspec import Struct
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, JustifyMethod, RenderableType, RenderResult
from rich.markdown import Heading, Markdown, MarkdownContext, MarkdownElement, TableElement, TextElement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text, TextType

from tau.modes.interactive.render.console import ColorSystem, console_for, to_ansi
from tau.modes.interactive.render.format import terminal_safe
from tau.modes.interactive.render.highlight import highlight_lines, lexer_by_name
from tau.modes.interactive.render.theme import Theme


class _Heading(Heading):
    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = {f"h{level}": "default" for level in range(1, 7)}


class _CodeLines:
    """Highlighted code lines, each after ``indent``; a long line wraps under its own indent (an
    indent that leaves no room for code is left out)."""

    def __init__(self, lines: list[Text], indent: str) -> None:
        self.lines = lines
        self.indent = indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = Text("\n", overflow="fold").join(self.lines)
        cells = cell_len(self.indent)
        if cells >= options.max_width:
            cells = 0
        indent = Segment(self.indent if cells else "")
        new_line = Segment.line()
        for row in console.render_lines(
            text, options.update(width=max(1, options.max_width - cells)), pad=False
        ):
            yield indent
            yield from row
            yield new_line


def _code_parts(
    lines: list[Text], lang: str, theme: Theme, *, header: bool, footer: bool
) -> list[RenderableType]:
    """A code block, or the slice of one that a streaming chunk holds."""
    parts: list[RenderableType] = []
    if header:
        parts.append(Text(f"```{lang}", style=theme.md_code_border))
    if lines:
        parts.append(_CodeLines(lines, theme.code_block_indent))
    if footer:
        parts.append(Text("```", style=theme.md_code_border))
    return parts


def _split_code(content: str) -> list[str]:
    """A code token's content as lines (its final newline ends the last line, it adds no line)."""
    return content.removesuffix("\n").split("\n") if content else []


class _CodeBlock(MarkdownElement):
    """A fenced or indented code block."""

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _CodeBlock:
        assert isinstance(markdown, _Markdown)
        lang = token.info.partition(" ")[0] if token.type == "fence" else ""
        return cls(lang, markdown.theme, diagrams=markdown.diagrams)

    def __init__(self, lang: str, theme: Theme, *, diagrams: bool = False) -> None:
        self.lang = lang
        self.theme = theme
        self.diagrams = diagrams
        self.code = ""

    def on_text(self, context: MarkdownContext, text: TextType) -> None:
        self.code += str(text)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = _split_code(self.code)
        if self.diagrams and self.lang.lower() == "mermaid":
            from tau.modes.interactive.render.mermaid import render_mermaid

            theme = self.theme
            styles = {
                "border": theme.md_code_border,
                "text": theme.text,
                "edge": theme.accent,
                "label": theme.text,
            }
            diagram = render_mermaid(self.code, options.max_width, styles)
            if diagram is not None:
                yield Text("\n").join(diagram)
                return
        highlighted = (
            highlight_lines("\n".join(lines), lexer_by_name(self.lang), self.theme.code_theme)
            if lines
            else []
        )
        yield from _code_parts(highlighted, self.lang, self.theme, header=True, footer=True)


class _HtmlBlock(TextElement):
    """Raw HTML, shown as its dim source rather than dropped."""

    style_name = "markdown.html"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.rstrip()
        yield text


class _Table(TableElement):
    """A table whose narrow cells wrap long words onto more lines rather than cut them with "…"."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for part in super().__rich_console__(console, options):
            if isinstance(part, Table):
                for column in part.columns:
                    column.overflow = "fold"
            yield part


class _Markdown(Markdown):
    """rich's markdown with the elements above, line breaks at single newlines, and exactly one blank
    line between top-level blocks (rich alone puts one before a list even at the top, and two after a
    rule). Each top-level block renders on its own, which is what lets a stream commit whole blocks."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": _Heading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "html_block": _HtmlBlock,
        "table_open": _Table,
    }

    def __init__(self, markup: str, theme: Theme, style: str | None, *, diagrams: bool = False) -> None:
        self.diagrams = diagrams
        """Whether ```` ```mermaid ```` blocks are drawn as diagrams (``render.mermaid``)."""
        super().__init__(
            markup,
            code_theme=theme.code_theme,
            justify="default",
            style=style or "none",
            hyperlinks=theme.hyperlinks,
        )
        self.theme = theme
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        new_line = Segment.line()
        separate = False
        for tokens in _top_level_groups(self.parsed):
            block = copy.copy(self)
            block.parsed = tokens
            # rich's own rendering of the block yields segments only.
            segments = cast(Iterable[Segment], Markdown.__rich_console__(block, console, options))
            lines = list(Segment.split_lines(segments))
            while lines and _blank(lines[-1]):
                lines.pop()
            start = 0
            while start < len(lines) and _blank(lines[start]):
                start += 1
            if start == len(lines):
                continue
            if separate:
                yield new_line
            separate = True
            for line in lines[start:]:
                yield from line
                yield new_line


def _blank(line: list[Segment]) -> bool:
    """Whether a rendered line shows nothing (a table's top and bottom edges are such lines)."""
    return not any(segment.text.strip() for segment in line)


def _top_level_groups(tokens: list[Token]) -> list[list[Token]]:
    """``tokens`` cut into the token runs of the top-level blocks."""
    groups: list[list[Token]] = []
    start = 0
    for index, token in enumerate(tokens):
        if token.level == 0 and token.nesting <= 0:
            groups.append(tokens[start : index + 1])
            start = index + 1
    return groups


# Runs of spaces (and colour codes between them) at line ends: rich pads list items, quotes and
# tables to the full width; without the padding, text copied from the terminal has no trailing blanks.
_TRAILING_SPACES = re.compile(r"(?:[ ]|\x1b\[[0-9;]*m)+$", re.MULTILINE)
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def _strip_line_ends(ansi: str) -> str:
    # rich resets after every styled run, so one reset stands for whatever codes the run held.
    return _TRAILING_SPACES.sub(lambda match: "\x1b[0m" if _SGR.search(match.group()) else "", ansi)


def _render(console: Console, text: str, theme: Theme, style: str | None, *, diagrams: bool = False) -> str:
    """Sanitised markdown as ANSI."""
    if not text.strip():
        return ""
    return _strip_line_ends(to_ansi(console, _Markdown(text, theme, style, diagrams=diagrams)))


def render_markdown(
    text: str,
    width: int,
    theme: Theme,
    *,
    style: str | None = None,
    color_system: ColorSystem = "truecolor",
    diagrams: bool = False,
) -> str:
    """``text`` as ANSI lines of at most ``width`` cells, no trailing newline; ``style`` underlies it all
    (the thinking style for reasoning text). Escape sequences in ``text`` are dropped. ``diagrams``:
    Mermaid blocks drawn (``markdown.mermaid`` not ``off``), for a message pi draws them in."""
    return _render(
        console_for(theme, width, color_system),
        terminal_safe(text),
        theme,
        style,
        diagrams=diagrams and theme.mermaid != "off",
    )


def markdown_renderable(
    text: str, theme: Theme, *, style: str | None = None, diagrams: bool = False
) -> RenderableType:
    """``text`` as a rich renderable, for markdown inside other blocks. Escape sequences are dropped."""
    return _Markdown(terminal_safe(text), theme, style, diagrams=diagrams and theme.mermaid != "off")


# Block structure only: the inline rules are what costs, and boundaries do not depend on them.
# The block rules are rich's (CommonMark plus tables), so both parsers see the same blocks.
_BLOCK_PARSER = MarkdownIt().enable("table").disable(["inline", "text_join"])


def _top_level_blocks(lines: Iterable[str]) -> list[Token]:
    """The opening tokens of the top-level blocks of ``lines``, each with its line range in ``map``."""
    tokens = _BLOCK_PARSER.parse("".join(f"{line}\n" for line in lines))
    return [t for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]


def _is_mermaid(token: Token) -> bool:
    return token.type == "fence" and token.info.strip().partition(" ")[0].lower() == "mermaid"


def _closes_fence(marker: str, line: str) -> bool:
    """Whether ``line`` closes a top-level fence opened by ``marker`` (asked of the parser itself)."""
    stripped = line.lstrip(" ")
    if not stripped.startswith(marker[0]) or len(line) - len(stripped) > 3:
        return False
    (fence,) = _top_level_blocks([marker, line])
    return fence.content == ""


PARAGRAPH_COMMIT_SIZE = 2000
"""Characters of an open paragraph from which its final lines are committed while it streams."""


def _source(lines: list[str], partial: str = "") -> str:
    """Complete lines (each ends in a newline: it matters at the end of an open fence) and a partial one."""
    return "".join(f"{line}\n" for line in lines) + partial


class _OpenFence(Struct):
    """A top-level code fence, opened at column 0, whose first lines are already committed."""

    lang: str
    marker: str
    """The opening run of backticks or tildes; a closing run must be at least as long."""
    code_start: int
    """Index of its first code line."""
    end: int | None = None
    """Index of its closing line, once it has arrived."""
    scanned: int = 0
    """Lines before this index were checked for the closing line."""


class StreamingMarkdown:
    """Markdown arriving in pieces, rendered so that only the unfinished tail is ever re-rendered.

    ``take_stable()`` hands out, once, the ANSI of text that can no longer change its rendering: the
    top-level blocks before the last one. The parser (the same block rules rich uses) decides where
    blocks start, so fences, lists with blank lines between items, HTML blocks and tables are never
    cut. Only complete lines count: a half-arrived line could still turn the line above into something
    else (``***`` becomes ``***x``).

    A top-level code fence at column 0 with more than ``live_code_lines`` uncommitted lines has its
    complete lines committed while still open (the header with the first chunk, the closing line with
    the last), so the live tail and the cost of redrawing it stay small. Committed chunks are
    highlighted with the whole fence so far as context; the live tail of an open fence is highlighted
    on its own (it is redrawn with context when finished).

    Chunks carry their own separators: ``"\\n".join`` of every non-empty result of ``take_stable()``
    and ``finish()`` equals ``render_markdown`` of the whole text, and ``render_tail()`` is laid out
    to follow the committed chunks in the same way. Known exceptions: a reference-style link whose
    definition lands in another chunk renders literally; a line that pygments reads differently once
    later lines exist (a Python docstring whose closing quotes are in a later chunk: its escapes get
    another colour) keeps the colours it was committed with.
    """

    def __init__(
        self,
        width: int,
        theme: Theme,
        *,
        style: str | None = None,
        live_code_lines: int = 24,
        color_system: ColorSystem = "truecolor",
        diagrams: bool = False,
    ) -> None:
        self._console = console_for(theme, width, color_system)
        self._theme = theme
        self._mermaid = theme.mermaid if diagrams else "off"
        """``streaming``: a Mermaid block is committed whole, as a diagram, once closed; ``final``: it
        and what follows wait in the live tail (as code) until ``finish`` draws the diagram."""
        self._style = style
        self._live_code_lines = live_code_lines
        self._lines: list[str] = []
        """Complete lines, sanitised, without their newline."""
        self._partial: list[str] = []
        """Pieces of the line still arriving."""
        self._done = 0
        """Index of the first line not yet committed."""
        self._parsed = 0
        """Number of lines there were when block boundaries were last looked for."""
        self._fence: _OpenFence | None = None
        self._paragraph_retry_at = 0
        self._need_separator = False
        """Whether a new block after what was committed must start with a blank line."""
        self._version = 0
        self._tail_key: tuple[int, int | None] | None = None
        self._tail = ""
        self._live_key: tuple[int, int] | None = None
        self._live_lines: list[Text] = []

    def append(self, delta: str) -> None:
        """Add streamed text (cost proportional to ``delta``)."""
        if not delta:
            return
        self._version += 1
        if "\n" not in delta:
            self._partial.append(delta)
            return
        first, *middle, last = delta.split("\n")
        self._partial.append(first)
        self._lines.append(terminal_safe("".join(self._partial)))
        self._lines.extend(terminal_safe(line) for line in middle)
        self._partial = [last] if last else []

    def take_stable(self) -> str | None:
        """ANSI of the newly completed part, to print once into scrollback; ``None`` if there is none."""
        parts: list[str] = []
        if self._fence is not None:
            self._commit_fence(parts)
        if self._fence is None and self._parsed != len(self._lines):
            self._parsed = len(self._lines)
            self._commit_blocks(parts)
        if self._fence is None:
            self._commit_paragraph_head(parts)
        if not parts:
            return None
        self._version += 1
        return "\n".join(parts)

    def render_tail(self, max_lines: int | None = None) -> str:
        """ANSI of the part not yet committed (its last ``max_lines`` lines if given). Cached until
        the next change; an open fence's tail renders only the code lines that can show."""
        key = (self._version, max_lines)
        if self._tail_key != key:
            text = "\n".join(self._rest(*self._uncommitted(), final=False, max_lines=max_lines))
            if max_lines is not None:
                text = "\n".join(text.split("\n")[-max_lines:]) if max_lines > 0 else ""
            self._tail_key, self._tail = key, text
        return self._tail

    def finish(self) -> str:
        """ANSI of everything not yet committed, rendered for good; ``""`` if nothing is left."""
        text = "\n".join(self._rest(*self._uncommitted(), final=True, max_lines=None))
        partial = "".join(self._partial)
        if partial:
            self._lines.append(terminal_safe(partial))
            self._partial.clear()
        self._done = self._parsed = len(self._lines)
        self._fence = None
        self._version += 1
        return text

    # -- committing ------------------------------------------------------------------------------

    def _new_block(self, text: str) -> str:
        """``text`` starting a block: after committed output it needs the blank line between blocks."""
        out = f"\n{text}" if self._need_separator else text
        self._need_separator = True
        return out

    def _commit_blocks(self, parts: list[str]) -> None:
        region = self._lines[self._done :]
        blocks = _top_level_blocks(region)
        if not blocks:
            return
        last = blocks[-1]
        assert last.map is not None
        start = last.map[0]
        held: int | None = None
        if self._mermaid == "final":
            held = next((b.map[0] for b in blocks[:-1] if b.map is not None and _is_mermaid(b)), None)
        if held is not None:
            start = held
        if start > 0:
            text = _render(
                self._console,
                _source(region[:start]),
                self._theme,
                self._style,
                diagrams=self._mermaid == "streaming",
            )
            if text:
                parts.append(self._new_block(text))
            self._done += start
            self._paragraph_retry_at = 0
        if held is not None or (self._mermaid != "off" and _is_mermaid(last)):
            return  # a Mermaid block is drawn whole, never committed line by line
        code_lines = len(region) - start - 1
        unclosed = last.type == "fence" and last.content.count("\n") == code_lines
        if unclosed and region[start].startswith(last.markup) and code_lines > self._live_code_lines:
            fence = _OpenFence(last.info.partition(" ")[0], last.markup, code_start=self._done + 1)
            code = self._highlight(self._lines[fence.code_start :], fence.lang)
            parts.append(self._new_block(self._code(code, fence.lang, header=True, footer=False)))
            self._need_separator = False  # what follows continues this block
            self._done = fence.scanned = len(self._lines)
            self._fence = fence

    def _commit_paragraph_head(self, parts: list[str]) -> None:
        """A long paragraph still open: commit its lines that can no longer change, keeping the
        last few (see ``paragraph.split_paragraph``), so that a reply of one huge paragraph costs
        the same per frame at its end as at its start."""
        lines = self._lines[self._done :]
        size = sum(len(line) + 1 for line in lines) + sum(len(piece) for piece in self._partial)
        if size < max(PARAGRAPH_COMMIT_SIZE, self._paragraph_retry_at):
            return
        partial = terminal_safe("".join(self._partial))
        blocks = _top_level_blocks([*lines, partial] if partial else lines)
        if len(blocks) != 1 or blocks[0].type != "paragraph_open":
            return
        from tau.modes.interactive.render.paragraph import split_paragraph

        found = split_paragraph(
            lambda text: _render(self._console, text, self._theme, self._style),
            _source(lines, partial),
            keep=2,
        )
        if found is None:
            # Markup left open (or no break found): try again once it has grown by a quarter, so
            # that a paragraph that cannot be cut costs a bounded number of extra renders.
            self._paragraph_retry_at = size + size // 4
            return
        self._paragraph_retry_at = 0
        head, offset = found
        parts.append(self._new_block(head))
        self._need_separator = False  # the rest of the paragraph goes on from the next line
        position = 0
        for index, line in enumerate(lines):
            if offset <= position + len(line):
                self._lines[self._done + index] = line[offset - position :]
                self._done += index
                return
            position += len(line) + 1
        self._partial = [partial[offset - position :]]
        self._done = len(self._lines)

    def _commit_fence(self, parts: list[str]) -> None:
        fence = self._fence
        assert fence is not None
        self._find_fence_end(fence)
        committed = self._done - fence.code_start
        if fence.end is not None:
            code = self._highlight(self._lines[fence.code_start : fence.end], fence.lang)[committed:]
            parts.append(self._code(code, fence.lang, header=False, footer=True))
            self._done = fence.end + 1
            self._fence = None
            self._need_separator = True
            self._parsed = -1  # lines after the closing one may already hold whole blocks
        elif len(self._lines) - self._done > self._live_code_lines:
            code = self._highlight(self._lines[fence.code_start :], fence.lang)[committed:]
            parts.append(self._code(code, fence.lang, header=False, footer=False))
            self._done = len(self._lines)

    def _find_fence_end(self, fence: _OpenFence) -> None:
        if fence.end is not None:
            return
        for index in range(fence.scanned, len(self._lines)):
            if _closes_fence(fence.marker, self._lines[index]):
                fence.end = index
                return
        fence.scanned = len(self._lines)

    # -- rendering ---------------------------------------------------------------------------------

    def _highlight(self, code: list[str], lang: str) -> list[Text]:
        return highlight_lines("\n".join(code), lexer_by_name(lang), self._theme.code_theme) if code else []

    def _code(self, lines: list[Text], lang: str, *, header: bool, footer: bool) -> str:
        parts = _code_parts(lines, lang, self._theme, header=header, footer=footer)
        return _strip_line_ends(to_ansi(self._console, Group(*parts)))

    def _live_highlight(self, code: list[str], lang: str) -> list[Text]:
        """The uncommitted complete lines of the open fence. Each line is highlighted once, when it
        arrives (with the lines that arrived together as context): highlighting them all again for
        every new line made a long fence cost quadratic time. The live view is redrawn with full
        context when the lines are committed."""
        if self._live_key is None or self._live_key[0] != self._done or len(self._live_lines) > len(code):
            self._live_lines = []
        have = len(self._live_lines)
        if have < len(code):
            self._live_lines = self._live_lines + self._highlight(code[have:], lang)
        self._live_key = (self._done, len(code))
        return self._live_lines

    def _uncommitted(self) -> tuple[list[str], str]:
        partial = terminal_safe("".join(self._partial))
        # The parser drops a last line of only blanks that has no newline yet: so must a fence.
        return self._lines[self._done :], partial if partial.strip(" \t") else ""

    def _rest(self, lines: list[str], partial: str, *, final: bool, max_lines: int | None) -> list[str]:
        """The uncommitted complete ``lines`` and ``partial`` line rendered: the rest of an open fence,
        then whole blocks."""
        parts: list[str] = []
        need_separator = self._need_separator
        fence = self._fence
        if fence is not None:
            self._find_fence_end(fence)
            tail = ""  # the fence's own partial line
            if fence.end is not None:
                code, lines = lines[: fence.end - self._done], lines[fence.end - self._done + 1 :]
            elif partial and _closes_fence(fence.marker, partial):
                code, lines, partial = lines, [], ""
            else:
                code, lines, partial, tail = lines, [], "", partial
            if final:
                committed = self._lines[fence.code_start : self._done]
                shown = self._highlight([*committed, *code, tail] if tail else committed + code, fence.lang)
                shown = shown[len(committed) :]
            else:
                # Live lines are highlighted without the committed ones as context: cheap, and redrawn.
                shown = self._live_highlight(code, fence.lang) + self._highlight(
                    [tail] if tail else [], fence.lang
                )
                shown = shown if max_lines is None else shown[-max_lines:]
            parts.append(self._code(shown, fence.lang, header=False, footer=True))
            need_separator = True
        diagrams = self._mermaid == "streaming" or (self._mermaid == "final" and final)
        text = _render(self._console, _source(lines, partial), self._theme, self._style, diagrams=diagrams)
        if text:
            parts.append(f"\n{text}" if need_separator else text)
        return parts

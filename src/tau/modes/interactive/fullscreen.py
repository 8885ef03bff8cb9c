"""The fullscreen mode's transcript: the conversation in a pane of its own on the alternate screen.

In ``tuiMode: "fullscreen"`` the application owns the whole screen: the editor and footer stay at
the bottom, and the conversation scrolls in the pane above them (PageUp/PageDown, Ctrl+Home/End,
the mouse wheel). The blocks are the ones the inline mode prints (``Chat`` and the renderers are
shared): ``Transcript`` takes what ``Chat`` would write into the terminal's scrollback and keeps it
as lines; ``TranscriptView`` draws the lines in view, with the live blocks after them, and handles
search (Ctrl+Shift+F), the scrollbar and mouse selection (a drag, a double- or triple-click
selects, and copies as pi does).
"""

from __future__ import annotations

import asyncio
import atexit
import bisect
import contextlib
import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from msgspec import Struct
from prompt_toolkit.data_structures import Point as MousePosition
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType, MouseModifier
from prompt_toolkit.utils import get_cwidth
from wcwidth import iter_graphemes

from tau.modes.interactive.chat import PromptText
from tau.modes.interactive.clipboard import copy_to_clipboard
from tau.modes.interactive.graphemes import cell_width, cluster_fragments
from tau.modes.interactive.image_layer import Placement, placements_in_view
from tau.modes.interactive.keyboard import lone_escape
from tau.modes.interactive.render.escapes import for_prompt_toolkit, strip_images
from tau.modes.interactive.wheel import WheelSpeed

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.layout import Container, Window

    from tau.config.settings import SettingsManager
    from tau.modes.interactive.chat import Chat
    from tau.modes.interactive.dialogs import Dialog
    from tau.modes.interactive.keymap import Keymap
    from tau.modes.interactive.screen import Scrollback
    from tau.runtime.agent_session import AgentSession

__all__ = [
    "SearchState",
    "Transcript",
    "TranscriptHost",
    "TranscriptKeysHost",
    "TranscriptView",
    "build_bindings",
    "restore_terminal_at_exit",
    "search_box",
]

ALT_WHEEL_FACTOR = 5
"""Alt+wheel moves five times as far, as in pi."""
MULTI_CLICK_SECONDS = 0.4
AUTO_SCROLL_SECONDS = 0.05
_WORD_CHARS = "/-+~._\\"
"""Besides letters and digits, what a double-click takes as part of a word (iTerm2's set, as pi)."""
_SGR = re.compile(r"\x1b\[[0-9;:]*m|\x1b\]8;[^\x07\x1b]*(?:\x07|\x1b\\)")
_PARSED_CACHE = 4096
RESTORE = "\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1049l\x1b[?25h"
"""Mouse reports off, the main screen back, the cursor shown: what a crash must not leave on."""


class TranscriptHost(Protocol):
    """What the transcript pane uses of the mode: the settings, the committed and live text, a
    redraw, the status line's flash and the terminal (a selection copied as OSC 52)."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def scrollback(self) -> Scrollback | Transcript: ...

    @property
    def chat(self) -> Chat: ...

    def invalidate(self) -> None: ...

    def flash(self, text: str) -> None: ...

    def write_raw(self, data: str) -> None: ...


class TranscriptKeysHost(Protocol):
    """What the transcript's keys use of the mode: who has the keys (a dialog, the editor and its
    completion menu) and the keymap."""

    @property
    def dialog(self) -> Dialog | None: ...

    @property
    def editor(self) -> Buffer: ...

    @property
    def editor_window(self) -> Window: ...

    @property
    def keymap(self) -> Keymap: ...


class Transcript:
    """What the inline mode's ``Scrollback`` prints, kept as lines for the fullscreen pane (same
    interface: ``Chat`` writes into either)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.version = 0
        """Grows with every change, so views know when their search results are stale."""
        self.redraws = 0
        """Grows when every line is replaced (a resize, another session): a selection is void then."""
        self.prompts: list[int] = []
        """The lines where a user message starts, in order: where the prompt jumps stop."""
        self._wrote_any = False

    def attach(self, print_above: Callable[[str], None]) -> None:
        pass  # the pane draws the lines; nothing is printed while the application runs

    def detach(self) -> None:
        pass

    async def flush(self) -> None:
        pass

    def waiting_text(self) -> str:
        return ""

    def write(self, text: str, new_block: bool = True) -> None:
        if new_block and self._wrote_any:
            self.lines.append("")
        if isinstance(text, PromptText):
            self.prompts.append(len(self.lines))
        self.lines.extend(text.split("\n"))
        self._wrote_any = True
        self.version += 1

    def redraw(self, blocks: list[str]) -> None:
        self.redraws += 1
        self.lines = []
        self.prompts = []
        self._wrote_any = False
        for block in blocks:
            self.write(block)

    def text(self) -> str:
        return "\n".join(self.lines)


class Match(Struct, frozen=True):
    line: int
    start: int
    end: int
    """Character offsets in the line's plain text."""


class SearchState(Struct, dict=True):
    query: str = ""
    matches: tuple[Match, ...] = ()
    current: int = -1
    version: tuple[int, int] = (-1, -1)


Point = tuple[int, int]
"""(line, cell column) in the transcript."""


class TranscriptView(UIControl):
    """The lines of the transcript in view: scrolled by ``top`` (``None``: follow the end)."""

    def __init__(self, mode: TranscriptHost) -> None:
        self.mode = mode
        self.top: int | None = None
        self.height = 1
        self.search: SearchState | None = None
        self.selection: tuple[Point, Point] | None = None
        self._dragging = False
        self._bar_dragging = False
        self._edge: Point = (0, 0)
        """Where the pointer of a selection drag last was, in the pane (row, column)."""
        self._auto_scrolling: asyncio.TimerHandle | None = None
        self._clicks: tuple[float, Point, int] = (0.0, (-1, -1), 0)
        """The last press: when, where, and how many presses in a row it made there."""
        self._parsed: dict[str, tuple[StyleAndTextTuples, str]] = {}
        self._live: list[str] = []
        self._shown_top = 0
        self._redraws = 0
        self.search_field: Buffer | None = None
        self._width = 80
        self._drawn: list[StyleAndTextTuples] = []
        """The rows as last drawn, to find the cell a mouse event is at."""
        self._wheel = WheelSpeed(self._settings.fullscreen_wheel_scroll_lines)
        self.images: list[Placement] = []
        """The kitty images in view as last drawn, placed over their rows after the frame."""

    @property
    def _settings(self) -> SettingsManager:
        return self.mode.session.services.settings_manager

    @property
    def scrollbar(self) -> str:
        """``fullscreenScrollbar`` (read as the pane draws, so /settings changes it at once)."""
        return str(self._settings.get("fullscreenScrollbar") or "auto")

    @property
    def copy_on_select(self) -> bool:
        return bool(self._settings.get("fullscreenCopyOnSelect", True))

    def _wheel_lines(self, direction: int) -> int:
        """Lines for one wheel event (``fullscreenWheelScrollLines``; a change starts afresh)."""
        setting = self._settings.fullscreen_wheel_scroll_lines
        if setting != self._wheel.setting:
            self._wheel = WheelSpeed(setting)
        return self._wheel.lines(direction, time.monotonic() * 1000)

    # -- lines ---------------------------------------------------------------------------------

    @property
    def committed(self) -> list[str]:
        transcript = self.mode.scrollback
        return transcript.lines if isinstance(transcript, Transcript) else []

    def line_count(self) -> int:
        return len(self.committed) + len(self._live)

    def line(self, index: int) -> str:
        committed = self.committed
        return committed[index] if index < len(committed) else self._live[index - len(committed)]

    def _parse(self, line: str) -> tuple[StyleAndTextTuples, str]:
        parsed = self._parsed.get(line)
        if parsed is None:
            if len(self._parsed) > _PARSED_CACHE:
                self._parsed.clear()
            fragments: StyleAndTextTuples = (
                list(to_formatted_text(ANSI(for_prompt_toolkit(line)))) if "\x1b" in line else [("", line)]
            )
            parsed = self._parsed[line] = (fragments, fragment_list_to_text(fragments))
        return parsed

    def plain(self, index: int) -> str:
        line = self.line(index)
        if "\x1b_" in line:
            line = strip_images(line)
        return _SGR.sub("", line) if "\x1b" in line else line

    def _refresh_live(self) -> None:
        live = self.mode.chat.live_text(max(3, self.height))
        self._live = ["", *live.split("\n")] if live and self.committed else live.split("\n") if live else []

    # -- scrolling -----------------------------------------------------------------------------

    def max_top(self) -> int:
        return max(0, self.line_count() - self.height)

    def scrolled_up(self) -> bool:
        return self.top is not None

    def scroll(self, lines: int) -> None:
        """Down by ``lines`` (up when negative); reaching the end follows new output again."""
        top = (self.max_top() if self.top is None else self.top) + lines
        self.top = None if top >= self.max_top() else max(0, top)
        self.mode.invalidate()

    def page(self, pages: float) -> None:
        self.scroll(int(pages * max(1, self.height - 1)))

    def to_top(self) -> None:
        self.top = 0 if self.max_top() > 0 else None
        self.mode.invalidate()

    def to_bottom(self) -> None:
        self.top = None
        self.mode.invalidate()

    def jump_to_prompt(self, direction: int) -> None:
        """Put the previous user message (-1: the nearest starting above the view's top line) or
        the next one (1) at the top of the view; none that way: stay (as pi)."""
        transcript = self.mode.scrollback
        prompts = transcript.prompts if isinstance(transcript, Transcript) else []
        top = self.max_top() if self.top is None else min(self.top, self.max_top())
        index = bisect.bisect_left(prompts, top) - 1 if direction < 0 else bisect.bisect_right(prompts, top)
        if 0 <= index < len(prompts):
            self.top = prompts[index] if prompts[index] < self.max_top() else None
            self.mode.invalidate()

    def reveal(self, line: int) -> None:
        """Scroll so that ``line`` is in view (about a third from the top when it was not)."""
        top = self.max_top() if self.top is None else self.top
        if not top <= line < top + self.height:
            self.top = max(0, line - self.height // 3)
            if self.top >= self.max_top():
                self.top = None

    # -- drawing -------------------------------------------------------------------------------

    def create_content(self, width: int, height: int) -> UIContent:
        self.height = max(1, height)
        self._refresh_live()
        transcript = self.mode.scrollback
        if isinstance(transcript, Transcript) and transcript.redraws != self._redraws:
            self._redraws = transcript.redraws
            self.selection = None  # its lines are gone, or stand elsewhere now
            self._dragging = False
        search = self.search
        if search is not None and search.version != self._version():
            self._find(search)
        total = self.line_count()
        top = min(self.max_top(), self.top) if self.top is not None else self.max_top()
        self._shown_top = top
        # rich laid the rows out by the cells the terminal draws; prompt_toolkit must agree.
        rows = [cluster_fragments(self._row(index)) for index in range(top, min(total, top + self.height))]
        self._width = width
        bar = self._scrollbar(total, top)
        if bar:
            rows += [[] for _ in range(self.height - len(rows))]
            rows = [_with_bar(row, width, cell) for row, cell in zip(rows, bar, strict=True)]

        self._drawn = rows
        self.images = placements_in_view(self.line, total, top, self.height)

        def get_line(number: int) -> StyleAndTextTuples:
            return rows[number] if number < len(rows) else []

        return UIContent(get_line=get_line, line_count=len(rows), show_cursor=False)

    def _scrollbar(self, total: int, top: int) -> list[tuple[str, str]]:
        """The cells of the scrollbar's column, top to bottom, or none: ``fullscreenScrollbar``
        ``auto`` shows it while the transcript is scrolled up, ``always`` whenever it is longer
        than the pane, ``hidden`` never."""
        shown = total > self.height and (
            self.scrollbar == "always" or (self.scrollbar == "auto" and self.top is not None)
        )
        if not shown:
            return []
        thumb = max(1, self.height * self.height // total)
        start = top * (self.height - thumb) // max(1, total - self.height)
        return [
            ("class:scrollbar.thumb", "┃") if start <= row < start + thumb else ("class:scrollbar.track", "│")
            for row in range(self.height)
        ]

    def _row(self, index: int) -> StyleAndTextTuples:
        fragments, plain = self._parse(self.line(index))
        marks: list[tuple[int, int, str]] = []
        if self.search is not None:
            for number, match in enumerate(self.search.matches):
                if match.line == index:
                    current = number == self.search.current
                    marks.append(
                        (match.start, match.end, "class:search.current" if current else "class:search.match")
                    )
        if self.selection is not None:
            (l0, c0), (l1, c1) = sorted(self.selection)
            if l0 <= index <= l1:
                start = _char_at(plain, c0) if index == l0 else 0
                end = _char_at(plain, c1) if index == l1 else len(plain)
                marks.append((start, end, "class:transcript.selected"))
        return _marked(fragments, marks) if marks else fragments

    # -- search --------------------------------------------------------------------------------

    def _version(self) -> tuple[int, int]:
        transcript = self.mode.scrollback
        return (transcript.version if isinstance(transcript, Transcript) else 0, len(self._live))

    def open_search(self) -> None:
        self.search = SearchState()
        self.mode.invalidate()

    def close_search(self) -> None:
        self.search = None
        self.mode.invalidate()

    def set_query(self, query: str) -> None:
        if self.search is None:
            return
        self.search.query = query
        self._find(self.search, anchor=self.top if self.top is not None else self.max_top())
        self._reveal_current()

    def step(self, direction: int) -> None:
        """To the next match (1, further down, wrapping) or the previous one (-1)."""
        search = self.search
        if search is None or not search.matches:
            return
        search.current = (search.current + direction) % len(search.matches)
        self._reveal_current()

    def _find(self, search: SearchState, anchor: int | None = None) -> None:
        needle = search.query.casefold()
        kept = search.matches[search.current] if 0 <= search.current < len(search.matches) else None
        matches: list[Match] = []
        if needle.strip():
            for index in range(self.line_count()):
                text = self.plain(index).casefold()
                start = text.find(needle)
                while start >= 0:
                    matches.append(Match(index, start, start + len(needle)))
                    start = text.find(needle, start + len(needle))
        search.matches = tuple(matches)
        search.version = self._version()
        if not matches:
            search.current = -1
        elif anchor is not None:  # a new query: the first match from the top of the view on
            search.current = next((n for n, m in enumerate(matches) if m.line >= anchor), 0)
        else:
            search.current = (
                matches.index(kept) if kept in matches else min(max(0, search.current), len(matches) - 1)
            )

    def _reveal_current(self) -> None:
        search = self.search
        if search is not None and 0 <= search.current < len(search.matches):
            self.reveal(search.matches[search.current].line)
        self.mode.invalidate()

    def search_status(self) -> str:
        search = self.search
        if search is None or not search.query:
            return ""
        return f"{search.current + 1}/{len(search.matches)}" if search.matches else "No matches"

    # -- mouse ---------------------------------------------------------------------------------

    def mouse_handler(self, mouse_event: MouseEvent) -> None:
        """prompt_toolkit's report of a mouse event: its ``x`` is the index of the character drawn
        there (a wide one counts once, a cluster's leading code points not at all), made the
        cell column here."""
        position = mouse_event.position
        cells = MousePosition(x=self._cell_column(position.y, position.x), y=position.y)
        self.pointer(MouseEvent(cells, mouse_event.event_type, mouse_event.button, mouse_event.modifiers))

    def _cell_column(self, row: int, index: int) -> int:
        drawn = self._drawn[row] if 0 <= row < len(self._drawn) else []
        cells = 0
        for fragment in drawn:
            if "[ZeroWidthEscape]" in fragment[0]:
                continue
            for char in fragment[1]:
                if index <= 0:
                    return cells
                cells += get_cwidth(char)
                index -= 1
        return cells + index

    def pointer(self, mouse_event: MouseEvent) -> None:
        """A mouse event at a cell of the pane."""
        kind = mouse_event.event_type
        point = (self._shown_top + mouse_event.position.y, mouse_event.position.x)
        factor = ALT_WHEEL_FACTOR if MouseModifier.ALT in mouse_event.modifiers else 1
        if kind == MouseEventType.SCROLL_UP:
            self.scroll(-self._wheel_lines(-1) * factor)
        elif kind == MouseEventType.SCROLL_DOWN:
            self.scroll(self._wheel_lines(1) * factor)
        elif (
            kind == MouseEventType.MOUSE_DOWN
            and mouse_event.position.x == self._width - 1
            and self._scrollbar(self.line_count(), self._shown_top)
        ):  # a press on the scrollbar jumps there, and a drag from it moves the view along
            self._bar_dragging = True
            self._scroll_to_row(mouse_event.position.y)
        elif kind == MouseEventType.MOUSE_MOVE and self._bar_dragging:
            self._scroll_to_row(mouse_event.position.y)
        elif kind == MouseEventType.MOUSE_UP and self._bar_dragging:
            self._bar_dragging = False
        elif kind == MouseEventType.MOUSE_DOWN and mouse_event.button == MouseButton.LEFT:
            at, where, count = self._clicks
            now = time.monotonic()
            count = count + 1 if where == point and now - at < MULTI_CLICK_SECONDS else 1
            self._clicks = (now, point, count)
            if count == 1:
                self.selection = (point, point)
                self._dragging = True
            else:  # a double-click takes the word, a triple-click the line
                self.selection = self._word_at(point) if count == 2 else self._line_at(point)
                self._dragging = False
                if self.copy_on_select:
                    self.copy_selection()
        elif kind == MouseEventType.MOUSE_MOVE and self._dragging and self.selection is not None:
            self.selection = (self.selection[0], point)
            self._edge = (mouse_event.position.y, mouse_event.position.x)
            self._auto_scroll()
        elif kind == MouseEventType.MOUSE_UP and self._dragging:
            self._dragging = False
            if self.selection is not None and self.selection[0] != point:
                self.selection = (self.selection[0], point)
                if self.copy_on_select:
                    self.copy_selection()
            else:
                self.selection = None  # a click: nothing selected
        self.mode.invalidate()

    def jump_label(self) -> StyleAndTextTuples:
        """The line under the pane while it is scrolled up; a click on it jumps to the end."""

        def click(mouse_event: MouseEvent) -> None:
            if mouse_event.event_type == MouseEventType.MOUSE_UP:
                self.to_bottom()

        text = "  ↓ scrolled up · ctrl+end (or a click here) jumps to the latest message"
        return [("class:transcript.jump", text, click)]

    @property
    def width(self) -> int:
        return self._width

    def capturing(self) -> bool:
        """A drag began in the pane and goes on: its mouse events are the pane's wherever they are."""
        return self._dragging or self._bar_dragging

    def _scroll_to_row(self, row: int) -> None:
        """The view where scrollbar row ``row`` stands for (the last row: the end, followed)."""
        self.top = max(0, row) * self.max_top() // max(1, self.height - 1)
        if self.top >= self.max_top():
            self.top = None

    def _auto_scroll(self) -> None:
        """While a selection drag holds the pane's first or last row, the view scrolls a line
        every ``AUTO_SCROLL_SECONDS`` that way and the selection follows (as pi)."""
        if self._auto_scrolling is not None:
            return
        row, column = self._edge
        direction = -1 if row <= 0 else 1 if row >= self.height - 1 else 0
        top = self.max_top() if self.top is None else self.top
        if not self._dragging or self.selection is None or direction == 0:
            return
        if (direction < 0 and top == 0) or (direction > 0 and self.top is None):
            return
        self.scroll(direction)
        top = self.max_top() if self.top is None else self.top
        self.selection = (self.selection[0], (top + row, column))

        def again() -> None:
            self._auto_scrolling = None
            self._auto_scroll()

        self._auto_scrolling = asyncio.get_running_loop().call_later(AUTO_SCROLL_SECONDS, again)

    def _word_at(self, point: Point) -> tuple[Point, Point] | None:
        line, column = point
        if line >= self.line_count():
            return None
        plain = self._parse(self.line(line))[1]
        index = _char_at(plain, column)
        if index >= len(plain) or not _is_word(plain[index]):
            return None
        start, end = index, index + 1
        while start > 0 and _is_word(plain[start - 1]):
            start -= 1
        while end < len(plain) and _is_word(plain[end]):
            end += 1
        return (line, _cells(plain[:start])), (line, _cells(plain[:end]))

    def _line_at(self, point: Point) -> tuple[Point, Point] | None:
        line = point[0]
        if line >= self.line_count():
            return None
        plain = self._parse(self.line(line))[1]
        return (line, 0), (line, _cells(plain.rstrip()))

    def selected_text(self) -> str:
        if self.selection is None:
            return ""
        (l0, c0), (l1, c1) = sorted(self.selection)
        out: list[str] = []
        for index in range(l0, min(l1, self.line_count() - 1) + 1):
            plain = self._parse(self.line(index))[1]
            start = _char_at(plain, c0) if index == l0 else 0
            end = _char_at(plain, c1) if index == l1 else len(plain)
            out.append(plain[start:end].rstrip())
        return "\n".join(out)

    def copy_selection(self) -> bool:
        text = self.selected_text()
        if not text:
            return False
        copy_to_clipboard(self.mode.write_raw, text)
        self.mode.flash("Copied")
        return True


def _with_bar(fragments: StyleAndTextTuples, width: int, bar: tuple[str, str]) -> StyleAndTextTuples:
    """``fragments`` (as ``cluster_fragments`` draws them) cut or padded to ``width - 1`` cells,
    then the scrollbar's cell. A cluster's leading code points go out only with its cell."""
    out: StyleAndTextTuples = []
    cells = 0
    escape: tuple[str, str] | None = None
    for fragment in fragments:
        style, text = fragment[0], fragment[1]
        if "[ZeroWidthEscape]" in style:
            escape = (style, text)
            continue
        kept = ""
        for char in text:
            if cells + get_cwidth(char) > width - 1:
                break
            kept += char
            cells += get_cwidth(char)
        if kept:
            out.extend([escape, (style, kept)] if escape is not None else [(style, kept)])
        escape = None
        if len(kept) < len(text):
            break
    out.append(("", " " * (width - 1 - cells)))
    out.append(bar)
    return out


def _is_word(char: str) -> bool:
    return char.isalnum() or char in _WORD_CHARS


def _cells(text: str) -> int:
    return cell_width(text)


def _char_at(text: str, column: int) -> int:
    """The index of the cluster at cell ``column`` of ``text`` (its length past the end)."""
    cells = 0
    index = 0
    for cluster in iter_graphemes(text):
        if cells >= column:
            return index
        cells += cell_width(cluster)
        index += len(cluster)
    return len(text)


def _marked(fragments: StyleAndTextTuples, marks: list[tuple[int, int, str]]) -> StyleAndTextTuples:
    """``fragments`` with the character ranges of ``marks`` given an extra style (later marks win)."""
    out: StyleAndTextTuples = []
    position = 0
    for fragment in fragments:
        style, text = fragment[0], fragment[1]
        if "[ZeroWidthEscape]" in style:
            out.append((style, text))
            continue
        for char in text:
            extra = ""
            for start, end, mark in marks:
                if start <= position < end:
                    extra = mark
            out.append((f"{style} {extra}" if extra else style, char))
            position += 1
    return out


_active_fd: list[int] = []


def restore_terminal_at_exit(fd: int | None) -> Callable[[], None]:
    """Until the returned function is called, an exit that skips the application's own teardown
    (a crash, ``sys.exit`` from a thread) still gives the terminal its main screen and mouse back."""
    if fd is None:
        return lambda: None
    _active_fd.append(fd)

    def done() -> None:
        if fd in _active_fd:
            _active_fd.remove(fd)

    return done


@atexit.register
def _restore() -> None:
    for fd in _active_fd:
        with contextlib.suppress(OSError):  # the terminal is gone
            os.write(fd, RESTORE.encode())


def search_box(view: TranscriptView) -> tuple[Container, Window]:
    """The search field at the top right of the transcript (as pi places it): a box with the
    query and ``n/m``; returns the box and the field's window (to focus)."""
    from prompt_toolkit.buffer import Buffer
    from prompt_toolkit.layout import HSplit, VSplit, Window
    from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
    from prompt_toolkit.layout.processors import AfterInput

    field = Buffer(multiline=False, on_text_changed=lambda buffer: view.set_query(buffer.text))
    view.search_field = field
    border = "class:search.border"
    window = Window(
        BufferControl(
            field,
            input_processors=[
                AfterInput(lambda: "" if field.text else "Find in transcript", "class:search.hint")
            ],
        ),
        height=1,
    )
    box = HSplit(
        [
            Window(height=1, char="─", style=border),
            VSplit(
                [
                    window,
                    Window(
                        FormattedTextControl(lambda: [("class:search.hint", f" {view.search_status()} ")]),
                        dont_extend_width=True,
                    ),
                ]
            ),
            Window(
                FormattedTextControl(lambda: [("class:search.hint", " enter ↓ · shift+enter ↑ · esc close")]),
                height=1,
            ),
            Window(height=1, char="─", style=border),
        ],
        style="class:search",
    )
    return box, window


def build_bindings(mode: TranscriptKeysHost, view: TranscriptView, search_window: Window) -> KeyBindings:
    """The transcript's keys (pi's ``tui.altScreen.*``): before the editor's, except while a
    dialog or the completion menu has the keys."""
    from prompt_toolkit.application import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()
    editing = Condition(lambda: mode.dialog is None and mode.editor.complete_state is None)
    searching = Condition(lambda: view.search is not None)
    in_field = Condition(lambda: view.search is not None and get_app().layout.current_window is search_window)

    actions: dict[str, Callable[[], None]] = {
        "tui.altScreen.pageUp": lambda: view.page(-1),
        "tui.altScreen.pageDown": lambda: view.page(1),
        "tui.altScreen.halfPageUp": lambda: view.page(-0.5),
        "tui.altScreen.halfPageDown": lambda: view.page(0.5),
        "tui.altScreen.lineUp": lambda: view.scroll(-1),
        "tui.altScreen.lineDown": lambda: view.scroll(1),
        "tui.altScreen.previousPrompt": lambda: view.jump_to_prompt(-1),
        "tui.altScreen.nextPrompt": lambda: view.jump_to_prompt(1),
        "tui.altScreen.top": view.to_top,
        "tui.altScreen.bottom": view.to_bottom,
    }
    keys = mode.keymap.keys
    for action, act in actions.items():
        for sequence in keys(action):
            bindings.add(*sequence, filter=editing)(lambda event, act=act: act())

    def toggle_search(event: KeyPressEvent) -> None:
        if view.search is not None:
            close_search(event)
            return
        view.open_search()
        if view.search_field is not None:
            view.search_field.reset()
        event.app.layout.focus(search_window)

    def close_search(event: KeyPressEvent) -> None:
        view.close_search()
        event.app.layout.focus(mode.dialog.focus if mode.dialog is not None else mode.editor_window)

    def copy(event: KeyPressEvent) -> None:
        """With ``fullscreenCopyOnSelect: false`` a selection is copied by Ctrl+X (as pi)."""
        view.copy_selection()

    for sequence in keys("tui.altScreen.search"):
        bindings.add(*sequence)(toggle_search)
    selected = Condition(lambda: view.selection is not None and not view.copy_on_select)
    for sequence in keys("app.message.copy"):
        bindings.add(*sequence, filter=selected)(copy)

    @bindings.add(Keys.Vt100MouseEvent, filter=Condition(view.capturing))
    def captured(event: KeyPressEvent) -> None:
        """A drag that began in the pane (a selection, the scrollbar's thumb) keeps the mouse
        when the pointer leaves it: past the pane's edge the drag holds that edge (and
        auto-scrolls), and the release ends it wherever it happens."""
        from prompt_toolkit.key_binding.bindings.mouse import xterm_sgr_mouse_events

        data = event.data
        parts = data[3:-1].split(";")
        if not data.startswith("\x1b[<") or len(parts) != 3 or not all(p.isdigit() for p in parts):
            return
        kind = xterm_sgr_mouse_events.get((int(parts[0]), data[-1]))
        if kind is None:
            return
        button, event_type, modifiers = kind
        # The pane is the layout's first row on: screen rows are its rows.
        x = min(max(0, int(parts[1]) - 1), view.width - 1)
        y = min(max(0, int(parts[2]) - 1), view.height - 1)
        view.pointer(MouseEvent(MousePosition(x=x, y=y), event_type, button, modifiers))

    for sequence in keys("tui.altScreen.searchClose"):
        bindings.add(*sequence, filter=searching, eager=lone_escape if sequence == ("escape",) else False)(
            close_search
        )
    for sequence in keys("tui.altScreen.searchNext"):
        bindings.add(*sequence, filter=in_field)(lambda event: view.step(1))
    for sequence in keys("tui.altScreen.searchPrevious"):
        bindings.add(*sequence, filter=in_field)(lambda event: view.step(-1))
    return bindings

"""A real pseudo-terminal for TUI tests: the program runs under pexpect, its output is fed to a
pyte screen (with scrollback), and cursor position and device attribute requests are answered as
a terminal would; ``kitty=True`` makes it a terminal that speaks the kitty keyboard protocol."""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import pexpect
import pyte
from wcwidth import iter_graphemes, wcwidth, width

_WORKING_RULE = re.compile(r"── .* ─{3,}$")


def is_rule(line: str) -> bool:
    """Whether ``line`` is one of the editor's rules: a whole line of "─", or the top one with
    the agent at work written into it ("── ⠋ Working ───", as pi 1.6 draws it)."""
    return line.startswith("─" * 20) or bool(_WORKING_RULE.match(line.rstrip()))


_CPR = re.compile(rb"\x1b\[6n")
_KITTY_QUERY = re.compile(rb"\x1b\[\?u")
_KITTY_POP = re.compile(rb"\x1b\[<\d*u")
_ALTERNATE = 1049
_BACKGROUND_QUERY = re.compile(rb"\x1b\]11;\?(?:\x07|\x1b\\)")
_COLOUR_QUERY = re.compile(rb"\x1b\](10|4;\d+);\?(?:\x07|\x1b\\)")
_APC = re.compile(rb"\x1b_[^\x1b]*\x1b\\")
"""An application program command (kitty's images): a terminal takes it in whole, pyte would draw it."""


class _AnsweringScreen(pyte.HistoryScreen):
    """A screen that sends its answers (DA1) back to the program; cursor reports are answered in
    ``Terminal.pump`` (where the cursor is when the request arrives). It has xterm's
    alternate screen (mode 1049), which pyte lacks: entering it keeps the main screen and its
    scrollback aside, leaving it brings them back as they were."""

    def __init__(self, columns: int, lines: int, answer: Callable[[str], None]) -> None:
        super().__init__(columns, lines, history=5000)
        self._answer = answer
        self.main_screen: tuple[Any, Any, Any] | None = None
        """The main screen's lines, scrollback and cursor while the alternate screen is shown."""
        self._last_drawn: tuple[int, int, int] | None = None  # the row and columns of the last cluster

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and _ALTERNATE in modes and self.main_screen is None:
            self.main_screen = (
                copy.deepcopy(self.buffer),
                copy.deepcopy(self.history),
                copy.copy(self.cursor),
            )
            self.erase_in_display(2)
        super().set_mode(
            *(mode for mode in modes if mode != _ALTERNATE or not kwargs.get("private")), **kwargs
        )

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and _ALTERNATE in modes and self.main_screen is not None:
            self.buffer, self.history, self.cursor = self.main_screen
            self.main_screen = None
            self.dirty.update(range(self.lines))
        super().reset_mode(
            *(mode for mode in modes if mode != _ALTERNATE or not kwargs.get("private")), **kwargs
        )

    def write_process_input(self, data: str) -> None:
        if not data.endswith("R"):
            self._answer(data)

    def draw(self, data: str) -> None:
        for char in data:
            if self._join(char):
                continue
            super().draw(char)
            size = wcwidth(char)
            self._last_drawn = (self.cursor.y, self.cursor.x - size, self.cursor.x) if size > 0 else None

    def _join(self, char: str) -> bool:
        """Put ``char`` into the cluster drawn just before, if it continues that cluster."""
        last = self._last_drawn
        if last is None or (self.cursor.y, self.cursor.x) != (last[0], last[2]):
            return False
        y, start, end = last
        cell = self.buffer[y][start]
        joined = cell.data + char
        if len(list(iter_graphemes(joined))) != 1:
            return False
        self.buffer[y][start] = cell._replace(data=joined)
        grown = min(self.columns, start + max(1, width(joined))) - end
        for x in range(end, end + max(0, grown)):
            self.buffer[y][x] = cell._replace(data="")
        self.cursor.x += max(0, grown)
        self._last_drawn = (y, start, end + max(0, grown))
        self.dirty.add(y)
        return True

    @property
    def display(self) -> list[str]:
        # a wide cell's second column holds "", so joining every cell shows each cluster once
        return ["".join(self.buffer[y][x].data for x in range(self.columns)) for y in range(self.lines)]


class Terminal:
    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        env: dict[str, str],
        rows: int = 30,
        cols: int = 100,
        kitty: bool = False,
        background: str | None = None,
        foreground: str | None = None,
        palette: Sequence[str] | None = None,
    ) -> None:
        self.rows, self.cols = rows, cols
        self.kitty = kitty
        self.background = background
        """The colour answered to OSC 11 (``rgb:ffff/ffff/ffff``); ``None``: the query goes unanswered."""
        self.foreground = foreground
        """The colour answered to OSC 10, as ``background``."""
        self.palette = list(palette) if palette is not None else None
        """The 16 colours answered to OSC 4 (``rgb:...``); ``None``: those queries go unanswered."""
        self.screen = _AnsweringScreen(cols, rows, self._answer)
        self.screen.set_mode(pyte.modes.LNM)  # the tty turns \n into \r\n, as a real terminal shows it
        self.stream = pyte.ByteStream(self.screen)
        env = {**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
        env.pop("NO_COLOR", None)
        # poll, not select: select fails on a descriptor numbered above 1023
        self.child = pexpect.spawn(
            argv[0], list(argv[1:]), cwd=cwd, env=env, dimensions=(rows, cols), use_poll=True
        )
        self.child.delaybeforesend = None  # see _pause
        self._sent_at = 0.0
        self.raw = bytearray()
        self._drawn: dict[str, tuple[int, str]] = {}
        """``display()`` and ``text()`` as last built, with the screen version they were built at:
        built again only when output arrived or the size changed (a long scrollback takes tens of ms
        to join, and ``wait_for`` asks twenty times a second)."""
        self._version = 0
        self._open_apc = b""
        """The start of an APC string whose end has not arrived yet."""

    def pump(self, timeout: float = 0.05) -> None:
        """Read whatever the program wrote and put it on the screen."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=max(0.0, deadline - time.monotonic()))
            except pexpect.TIMEOUT:
                return
            except pexpect.EOF:
                return
            self.raw.extend(data)
            for query in _COLOUR_QUERY.findall(
                data
            ):  # answered before the DA1 after them (pyte answers that)
                if query == b"10" and self.foreground is not None:
                    self._answer(f"\x1b]10;{self.foreground}\x1b\\")
                elif query.startswith(b"4;") and self.palette is not None:
                    index = int(query[2:])
                    self._answer(f"\x1b]4;{index};{self.palette[index]}\x07")
            if self.background is not None:
                for _ in _BACKGROUND_QUERY.findall(data):
                    self._answer(f"\x1b]11;{self.background}\x1b\\")
            if self.kitty:
                for _ in _KITTY_QUERY.findall(data):
                    self._answer("\x1b[?1u")  # the flags tau pushed just before
            data = _KITTY_POP.sub(b"", data)  # pyte would draw its final "u"
            data = _APC.sub(b"", self._open_apc + data)
            start = data.rfind(b"\x1b_")
            self._open_apc, data = (data[start:], data[:start]) if start >= 0 else (b"", data)
            # A cursor report tells where the cursor is when the request arrives: what came
            # before it in this read is drawn first (the program may print, then ask).
            drawn = 0
            for request in _CPR.finditer(data):
                self.stream.feed(data[drawn : request.end()])
                drawn = request.end()
                y, x = self.screen.cursor.y + 1, self.screen.cursor.x + 1
                self._answer(f"\x1b[{y};{x}R")
            self.stream.feed(data[drawn:])
            self._version += 1
            if time.monotonic() >= deadline:
                return

    @property
    def on_alternate_screen(self) -> bool:
        return self.screen.main_screen is not None

    def display(self) -> str:
        return self._built("display", lambda: "\n".join(line.rstrip() for line in self.screen.display))

    def text(self) -> str:
        """Scrollback and screen together."""

        def build() -> str:
            history = [
                "".join(line[x].data for x in range(self.cols)).rstrip() for line in self.screen.history.top
            ]
            return "\n".join([*history, self.display()])

        return self._built("text", build)

    def _built(self, name: str, build: Callable[[], str]) -> str:
        version, shown = self._drawn.get(name, (-1, ""))
        if version != self._version:
            shown = build()
            self._drawn[name] = (self._version, shown)
        return shown

    def wait_for(self, what: str | Callable[[], bool], timeout: float = 15.0, *, where: str = "text") -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.pump()
            if callable(what):
                if what():
                    return
            elif what in (self.text() if where == "text" else self.display()):
                return
            if time.monotonic() > deadline or (not self.child.isalive() and not self._more_output()):
                shown = self.text()
                raise AssertionError(f"waited {timeout}s for {what!r}; the terminal shows:\n{shown}")

    def settle(self, quiet: float = 0.3, timeout: float = 10.0) -> None:
        """Read until the program has written nothing for ``quiet`` seconds (its last frame drawn),
        or ``timeout`` has passed."""
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            before = len(self.raw)
            self.pump(0.05)
            if len(self.raw) != before:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet:
                return

    def _more_output(self) -> bool:
        before = len(self.raw)
        self.pump(0.05)
        return len(self.raw) != before

    def send(self, data: str) -> None:
        self._pause()
        self.child.send(data.encode())
        self._sent_at = time.monotonic()

    def _pause(self) -> None:
        """Each ``send`` or ``type`` starts at least 50 ms after the last one ended, as pexpect's
        own delay did, so a key that opens a dialog has it open before the next keys come, and a
        lone Escape is not read as the start of an Alt key. (pexpect waited before every key,
        so a test that typed a few hundred keys spent most of its time waiting.)"""
        wait = self._sent_at + 0.05 - time.monotonic()
        if wait > 0:
            time.sleep(wait)

    def _answer(self, data: str) -> None:
        """A reply of the terminal's own: at once, as a terminal answers (pexpect's ``send``
        waited 50 ms first, which hid answers arriving before the program's tty was raw)."""
        os.write(self.child.child_fd, data.encode())

    def type(self, text: str) -> None:
        self._pause()
        for char in text:
            self.child.send(char.encode())
            time.sleep(0.002)
        self._sent_at = time.monotonic()

    def resize(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.screen.resize(rows, cols)
        self._version += 1
        self.child.setwinsize(rows, cols)

    def wait_exit(self, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < deadline:
            self.pump(0.1)
        self.pump(0.1)
        if self.child.isalive():
            raise AssertionError(f"still running after {timeout}s:\n{self.text()}")
        self.child.close()
        return int(
            self.child.exitstatus if self.child.exitstatus is not None else -(self.child.signalstatus or 0)
        )

    def close(self) -> None:
        if self.child.isalive():
            self.child.kill(9)
        self.child.close(force=True)


ENTER = "\r"
ESCAPE = "\x1b"
CTRL_C = "\x03"
CTRL_D = "\x04"
ALT_ENTER = "\x1b\r"

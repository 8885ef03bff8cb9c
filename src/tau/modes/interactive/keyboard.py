"""Modified keys from the terminal: asking for them, reading them, and giving the terminal back.

Legacy terminal input cannot tell Shift+Enter from Enter, and under tmux not even Shift+Tab from
Tab. As pi does, tau asks at start-up: it pushes the kitty keyboard protocol (flag 1,
*disambiguate*: modified keys as ``CSI code;mods u``), queries it (``CSI ?u``) and sends a device
attributes query (``CSI c``) as a sentinel. A terminal that speaks the protocol answers the query
first (``CSI ?1u``); one that does not only answers DA, and then gets xterm's modifyOtherKeys level
2 (``CSI >4;2m``: modified keys as ``CSI 27;mods;code ~``), which xterm, tmux (``extended-keys``) and
most others understand. Only flag 1 is pushed: tau binds no key releases or alternate layouts.

``KeyParser`` turns both forms into the keys prompt_toolkit binds (Shift+Enter as F24, see
``keymap.SHIFT_ENTER``; Ctrl+C as ``c-c``; Alt+x as Esc, x) and swallows the answers. What was
switched on is switched off again on exit, on SIGTERM/SIGHUP, on a crash (``atexit``) and while
suspended (Ctrl+Z). ``lone_escape`` tells a press of Esc from the Esc that starts an Alt+key.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition
from prompt_toolkit.input.vt100_parser import Vt100Parser
from prompt_toolkit.key_binding.key_processor import KeyPress
from prompt_toolkit.keys import Keys

from tau.modes.interactive.keymap import CTRL_BACKSPACE, SHIFT_ENTER

if TYPE_CHECKING:
    from tau.modes.interactive.program_status import ProgramStatus

__all__ = ["CTRL_SHIFT_KEYS", "KeyParser", "KeyboardProtocol", "decode_key", "lone_escape"]


@Condition
def lone_escape() -> bool:
    """Esc with nothing after it in the same read from the terminal: a press of Esc itself, to
    act on at once. Esc with more behind it (ESC CR, ESC b, the ESC [1;3A that the parser splits
    into Esc + Up) is a terminal's Alt+key and waits for its second half."""
    return not get_app().key_processor.input_queue


KITTY_QUERY = "\x1b[>1u\x1b[?u"
QUERY = KITTY_QUERY + "\x1b[c"
"""Push kitty flags 1, ask for the flags in force, then DA1 (answered by every terminal); the
program status query (OSC 7501), when asked, goes before DA1, as pi sends it."""
MODIFY_OTHER_KEYS_ON = "\x1b[>4;2m"
MODIFY_OTHER_KEYS_OFF = "\x1b[>4;0m"
KITTY_POP = "\x1b[<u"

# Answers and extended keys: kitty flags (CSI ? n u), DA1 (CSI ? ... c), kitty keys
# (CSI code[:alternates] [; mods[:event] [; text]] u) and xterm's (CSI 27 ; mods ; code ~).
_SEQUENCE = re.compile(r"\x1b\[(?:\?(\d+)u|\?997;(\d)n|\?[\d;]*c|([\d:;]+)u|27;(\d+);(\d+)~)")
_PASTE_START = "\x1b[200~"
_OSC_REPLY = re.compile(r"\x1b\](\d+);([^\x07\x1b]*)(?:\x07|\x1b\\)")
BACKGROUND_QUERY = "\x1b]11;?\x07"
COLOUR_QUERY = "\x1b]10;?\x07" + BACKGROUND_QUERY + "".join(f"\x1b]4;{index};?\x07" for index in range(16))
"""OSC 10, 11 and 4: the terminal's foreground, background and 16 ANSI colours (the ``system``
theme's colours are derived from them, as pi's); the DA1 request sent after them marks the end of
the answers, since every terminal answers DA1 and answers in order."""
DA1 = "\x1b[c"
APPEARANCE_REPORTS_ON = "\x1b[?2031h"
"""Mode 2031: the terminal says when it turns light or dark (``CSI ?997;1n`` dark, ``;2n`` light)."""
APPEARANCE_REPORTS_OFF = "\x1b[?2031l"
"""OSC 11: the terminal's background colour (the ``system`` theme's light or dark, as pi asks)."""

_SHIFT, _ALT, _CTRL = 1, 2, 4
_LOCKS = 64 | 128  # Caps Lock and Num Lock: they change no binding
_KEYPAD_ENTER = 57414

CTRL_SHIFT_KEYS = {"f": Keys.F23, "g": Keys.F22}
"""Ctrl+Shift+F and Ctrl+Shift+G (the fullscreen transcript's search keys, as pi's) arrive as
keys prompt_toolkit has no name for: they are read as these spare function keys."""

KeyList = list[tuple[str, str]]
"""(prompt_toolkit key, the text it inserts)."""


def decode_key(code: int, modifiers: int, shifted: int | None = None) -> KeyList:
    """The keys for a key ``code`` (a Unicode code point) pressed with ``modifiers`` (the protocol's
    1 + bit set: shift 1, alt 2, ctrl 4); ``shifted`` is the shifted key, when the terminal says.
    Empty when nothing tau binds could mean it (super, hyper; Ctrl+Shift+letter but F and G)."""
    bits = max(0, modifiers - 1) & ~_LOCKS
    if bits & ~(_SHIFT | _ALT | _CTRL):
        return []
    shift, alt, ctrl = bits & _SHIFT, bits & _ALT, bits & _CTRL
    main: str | None
    text = ""
    if code in (13, _KEYPAD_ENTER):
        main = SHIFT_ENTER if shift and not ctrl else None if ctrl else Keys.ControlM
        text = "\r" if main == Keys.ControlM else ""
    elif code == 9:
        main = Keys.BackTab if shift and not ctrl else None if ctrl else Keys.ControlI
    elif code in (127, 8):
        main = CTRL_BACKSPACE if ctrl else Keys.ControlH  # told from Backspace, see keymap
    elif code == 27:
        main = Keys.Escape
    elif code == 32:
        main = Keys.ControlAt if ctrl else " "
        text = "" if ctrl else " "
    elif 32 < code < 0x110000 and not 0xE000 <= code <= 0xF8FF:  # the private use area: keypad etc.
        char = chr(code)
        if ctrl:
            if shift and char.isalpha():
                ctrl_shift = CTRL_SHIFT_KEYS.get(char.lower())
                return [(ctrl_shift, "")] if ctrl_shift is not None else []
            main = _control_key(char)
        else:
            if shift:
                char = chr(shifted) if shifted else char.upper()
            main, text = char, char
    else:
        return []
    if main is None:
        return []
    key = main if len(main) == 1 else Keys(main)
    return [(Keys.Escape, ""), (key, text)] if alt else [(key, text)]


def _control_key(char: str) -> str | None:
    lowered = char.lower()
    if "a" <= lowered <= "z":
        return f"c-{lowered}"
    return {"@": "c-@", "[": Keys.Escape, "\\": "c-\\", "]": "c-]", "^": "c-^", "_": "c-_"}.get(char)


def _kitty_key(fields: str) -> KeyList:
    """Keys of a ``CSI ... u`` body; a release (event 3) is none."""
    parts = fields.split(";")
    codes = parts[0].split(":")
    mods = parts[1].split(":") if len(parts) > 1 else ["1"]
    try:
        code = int(codes[0])
        shifted = int(codes[1]) if len(codes) > 1 and codes[1] else None
        modifiers = int(mods[0] or 1)
        event = int(mods[1]) if len(mods) > 1 and mods[1] else 1
    except ValueError:
        return []
    return [] if event == 3 else decode_key(code, modifiers, shifted)


class KeyParser(Vt100Parser):
    """prompt_toolkit's input parser, reading the extended key forms and the protocol's answers
    as well. ``on_answer(kind, flags)`` gets ``("kitty", flags)`` and ``("da", 0)``."""

    def __init__(
        self,
        feed_key_callback: Callable[[KeyPress], None],
        on_answer: Callable[[str, int], None],
        on_colour: Callable[[int, str], None] = lambda number, value: None,
        on_input: Callable[[str], str] | None = None,
    ):
        self._on_answer = on_answer
        self._on_colour = on_colour
        self._on_input = on_input
        """Extensions' raw input listeners (``ctx.ui.on_terminal_input``): what they leave is read."""
        super().__init__(feed_key_callback)

    def _input(self, data: str) -> str:
        return self._on_input(data) if self._on_input is not None and data else data

    def feed(self, data: str) -> None:
        if "\x1b]" in data and not self._in_bracketed_paste:
            # Answers to colour queries (OSC 10/11 ``rgb:...``): taken out, never typed.
            for match in _OSC_REPLY.finditer(data):
                self._on_colour(int(match.group(1)), match.group(2))
            data = _OSC_REPLY.sub("", data)
        if self._in_bracketed_paste or "\x1b[" not in data:
            super().feed(self._input(data))
            return
        paste = data.find(_PASTE_START)
        scan, rest = (data, "") if paste < 0 else (data[:paste], data[paste:])
        position = 0
        for match in _SEQUENCE.finditer(scan):
            if match.start() > position:
                super().feed(self._input(scan[position : match.start()]))
            super().flush()  # what came before is complete: this sequence cannot continue it
            key = match.group(3) is not None or match.group(5) is not None  # a key, not an answer
            seen = self._input(match.group(0)) if key else match.group(0)
            if seen == match.group(0):
                self._handle(match)
            elif seen:
                super().feed(seen)
            position = match.end()
        if position < len(scan):
            super().feed(self._input(scan[position:]))
        if rest:
            super().feed(self._input(rest))

    def _handle(self, match: re.Match[str]) -> None:
        kitty_flags, appearance, kitty_key, modifiers, code = match.groups()
        if kitty_flags is not None:
            self._on_answer("kitty", int(kitty_flags))
            return
        if appearance is not None:
            self._on_answer("appearance", int(appearance))
            return
        if kitty_key is not None:
            keys = _kitty_key(kitty_key)
        elif code is not None:
            keys = decode_key(int(code), int(modifiers))
        else:
            self._on_answer("da", 0)
            return
        for key, text in keys:
            self.feed_key_callback(KeyPress(key, text))


class KeyboardProtocol:
    """The negotiation with one terminal, and its undoing."""

    def __init__(self, write: Callable[[str], None], fd: int | None) -> None:
        self._write = write
        self._fd = fd
        self.kitty = False
        self.modify_other_keys = False
        self._pushed = False
        self._asked = False
        self.on_background: Callable[[str], None] | None = None
        """Set to ask for the background colour (``start``); called with the reply's colour."""
        self.on_appearance: Callable[[bool], None] | None = None
        """Called with whether the terminal turned light (mode 2031), while ``on_background`` is set."""
        self.on_colour: Callable[[int, str], None] | None = None
        """Called with each colour answer (OSC number, value), while ``on_background`` is set."""
        self.on_colours_end: Callable[[], None] | None = None
        """Called when the colour answers are over (the DA1 after them), answered or not."""
        self._colours_asked = 0
        self._appearance_reports = False
        self.input_listeners: list[Callable[[str], Any]] = []
        """``ctx.ui.on_terminal_input`` handlers, in the order they were added (pi's listeners)."""
        self.program_status: ProgramStatus | None = None
        """Asked for with the key queries (OSC 7501); told when the terminal answers, cleared on restore."""
        self._starting = False
        atexit.register(self._restore_at_exit)

    def _colour(self, number: int, value: str) -> None:
        if number == 7501:  # the program status query's answer
            if value.startswith("?") and self.program_status is not None:
                self.program_status.answered()
            return
        if number == 11 and self.on_background is not None:
            self.on_background(value)
        if self.on_colour is not None:
            self.on_colour(number, value)

    def ask_colours(self) -> None:
        """Ask for the terminal's colours again (it turned light or dark)."""
        if self.on_background is not None:
            self._colours_asked += 1
            self._write(COLOUR_QUERY + DA1)

    def install(self, app_input: Any) -> bool:
        """Read keys through ``KeyParser`` (a vt100 input only); whether it could."""
        parser = getattr(app_input, "vt100_parser", None)
        if not isinstance(parser, Vt100Parser):
            return False
        app_input.vt100_parser = KeyParser(
            parser.feed_key_callback, self.on_answer, self._colour, self._listen
        )
        return True

    def _listen(self, data: str) -> str:
        """Raw input through the extensions' listeners, as pi's: ``{"consume": True}`` swallows it,
        ``{"data": text}`` hands the next one (and tau) ``text`` instead."""
        for listener in list(self.input_listeners):
            result = listener(data)
            if isinstance(result, dict):
                if result.get("consume"):
                    return ""
                if isinstance(result.get("data"), str):
                    data = result["data"]
        return data

    def start(self) -> None:
        """Push the kitty flags and ask which protocol the terminal speaks, when the next frame
        has been drawn (``on_render``): the terminal answers at once, and until the application
        has put the tty in raw mode the tty echoes the answers onto the screen (``^[[?1;2c``)."""
        self._starting = True

    def on_render(self, _app: object = None) -> None:
        """After each frame (the tty is raw then): what ``start`` asked for, once."""
        if not self._starting:
            return
        self._starting = False
        self._pushed = True
        self._asked = True
        colours = ""
        if self.on_background is not None:
            colours = APPEARANCE_REPORTS_ON + COLOUR_QUERY
            self._appearance_reports = True
            self._colours_asked += 1
        status_query = self.program_status.query() if self.program_status is not None else ""
        self._write(colours + KITTY_QUERY + status_query + DA1)
        if self.program_status is not None:
            self.program_status.report()  # sent now when TAU_PROGRAM_STATUS=1 needs no answer

    def on_answer(self, kind: str, flags: int) -> None:
        if kind == "appearance":
            if self.on_appearance is not None:
                self.on_appearance(flags == 2)
            return
        if kind == "kitty":
            self.kitty = flags != 0
            if self.kitty:
                self._asked = False
            return
        if self._colours_asked:  # a DA1 answer ends one round of colour answers
            self._colours_asked -= 1
            if self.on_colours_end is not None:
                self.on_colours_end()
        if self._asked and not self.kitty and not self.modify_other_keys:
            self.modify_other_keys = True
            self._write(MODIFY_OTHER_KEYS_ON)
        self._asked = False

    def restore_sequence(self) -> str:
        out = KITTY_POP if self._pushed else ""
        out += APPEARANCE_REPORTS_OFF if self._appearance_reports else ""
        return out + (MODIFY_OTHER_KEYS_OFF if self.modify_other_keys else "")

    def restore(self) -> None:
        """Give the terminal its keys back (idempotent); the program status is cleared."""
        if self.program_status is not None:
            self.program_status.stop()
        sequence = self.restore_sequence()
        self._pushed = self.kitty = self.modify_other_keys = self._asked = self._appearance_reports = False
        self._starting = False
        if sequence:
            self._write(sequence)

    def _restore_at_exit(self) -> None:
        sequence = self.restore_sequence()
        if sequence and self._fd is not None:
            with contextlib.suppress(OSError):  # the terminal is gone
                os.write(self._fd, sequence.encode())

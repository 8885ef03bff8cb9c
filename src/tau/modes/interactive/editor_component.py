"""An extension's editor in place of tau's (``ctx.ui.set_editor_component``), as pi's
``setEditorComponent``.

The text stays in tau's editor buffer: the extension's editor is drawn where the editor was (its
``render(width)`` lines) by a control over that same buffer, so completion, ``ctx.ui``'s editor
text and the app's keys keep working on it. Every key typed goes to the component's
``handle_input`` first; what a ``CustomEditor`` passes on (``super().handle_input(key)``) is fed
back to prompt_toolkit as that key, and goes past this control to tau's bindings (editing, Enter,
Escape, Ctrl+D, ...). ``None`` gives the editor back to tau, with the text as it is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

from prompt_toolkit.application.current import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, to_formatted_text
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.controls import BufferControl, UIContent
from prompt_toolkit.mouse_events import MouseEvent
from wcwidth import wcwidth

from tau.modes.interactive.keyboard import lone_escape
from tau.modes.interactive.keymap import PROMPT_TOOLKIT_KEY_NAMES, to_prompt_toolkit_keys
from tau.modes.interactive.render.format import truncate_to_width

__all__ = ["EditorHost", "EditorSlot"]


class EditorHost(Protocol):
    """What the slot needs of the interactive mode."""

    @property
    def editor(self) -> Buffer: ...

    @property
    def app(self) -> Any: ...

    @property
    def dialog(self) -> Any: ...

    @property
    def builtin_editor_window(self) -> Any: ...

    def theme(self) -> Any: ...

    def invalidate(self) -> None: ...

    def border_colour(self) -> str: ...

    def editor_padding(self) -> int: ...


_NAMED = PROMPT_TOOLKIT_KEY_NAMES
_CAUGHT = (*_NAMED, *(f"c-{letter}" for letter in "abcdefgklnopqrstuvwxyz"))
_PRESS = {"enter": "c-m", "tab": "c-i", "backspace": "c-h", "shift+tab": "s-tab"}
_ANSI_COLOURS = {
    "black": 30, "red": 31, "green": 32, "yellow": 33, "blue": 34, "magenta": 35, "cyan": 36,
    "gray": 37, "brightblack": 90, "brightred": 91, "brightgreen": 92, "brightyellow": 93,
    "brightblue": 94, "brightmagenta": 95, "brightcyan": 96, "white": 97,
}  # fmt: skip


def _name(press: KeyPress) -> str | None:
    """The key's name for ``handle_input``, ``None`` for what is no key (a paste, a mouse event)."""
    key = press.key.value if isinstance(press.key, Keys) else str(press.key)
    if key in _NAMED:
        return _NAMED[key]
    if key.startswith("c-") and len(key) == 3:
        return f"ctrl+{key[2]}"
    if len(press.data) == 1 and press.data.isprintable():
        return press.data
    return None


def _presses(key: str) -> list[KeyPress]:
    """The key presses prompt_toolkit reads for ``key`` (a name or a character)."""
    if len(key) == 1:
        return [KeyPress(key, key)]
    sequence = (_PRESS[key],) if key in _PRESS else to_prompt_toolkit_keys(key)
    if sequence is None:
        return []
    presses = []
    for part in sequence:
        try:
            presses.append(KeyPress(Keys(part)))
        except ValueError:
            presses.append(KeyPress(part, part))
    return presses


def _sgr(colour: str) -> str:
    """A prompt_toolkit colour (``#rrggbb`` or ``ansiblue``) as a foreground SGR sequence."""
    if colour.startswith("#") and len(colour) == 7:
        red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        return f"\x1b[38;2;{red};{green};{blue}m"
    code = _ANSI_COLOURS.get(colour.removeprefix("ansi"))
    return f"\x1b[{code}m" if code is not None else ""


class _Builtin:
    """tau's editor as a ``CustomEditor`` reaches it (``tau.extensions.custom_editor.BuiltinEditor``)."""

    def __init__(self, slot: EditorSlot) -> None:
        self._slot = slot

    def handle_input(self, key: str) -> None:
        self._slot.pass_on(_presses(key))

    def render(self, width: int) -> list[str]:
        host = self._slot.host
        border = f"{_sgr(host.border_colour())}{'─' * width}\x1b[0m"
        padding = " " * host.editor_padding()
        inner = max(1, width - 2 * len(padding))
        buffer = host.editor
        rows: list[str] = []
        offset = 0
        for line in buffer.text.split("\n"):
            cursor = (
                buffer.cursor_position - offset if 0 <= buffer.cursor_position - offset <= len(line) else -1
            )
            rows.extend(padding + row for row in _wrap(line, cursor, inner))
            offset += len(line) + 1
        return [border, *rows, border]

    def get_text(self) -> str:
        return self._slot.host.editor.text

    def set_text(self, text: str) -> None:
        self._slot.host.editor.set_document(Document(text, len(text)), bypass_readonly=True)
        self._slot.host.invalidate()


def _wrap(line: str, cursor: int, width: int) -> list[str]:
    """``line`` in rows of ``width`` cells, the character at ``cursor`` (or a space after the end)
    drawn in reverse video."""
    cells = [*line, " "] if cursor == len(line) else list(line)
    rows: list[str] = []
    row, used = "", 0
    for index, char in enumerate(cells):
        size = max(0, wcwidth(char))
        if used + size > width and row:
            rows.append(row)
            row, used = "", 0
        row += f"\x1b[7m{char}\x1b[27m" if index == cursor else char
        used += size
    rows.append(row)
    return rows


class _Control(BufferControl):
    """The extension's editor over tau's buffer: its lines drawn, its keys caught first."""

    def __init__(self, slot: EditorSlot, buffer: Buffer, bindings: KeyBindings) -> None:
        super().__init__(buffer, key_bindings=bindings, focusable=True)
        self._slot = slot

    def _lines(self, width: int) -> list[str]:
        """The component's lines (the window cuts what is wider than it)."""
        try:
            return [str(line) for line in self._slot.component.render(width)]
        except Exception as error:  # an extension must never take the screen down
            return [truncate_to_width(f"[editor failed: {type(error).__name__}: {error}]", width)]

    def create_content(self, width: int, height: int | None, preview_search: bool = False) -> UIContent:
        fragments = [to_formatted_text(ANSI(line)) for line in self._lines(width)]
        return UIContent(get_line=lambda i: fragments[i], line_count=max(1, len(fragments)))

    def preferred_height(
        self, width: int, max_available_height: int, wrap_lines: bool, get_line_prefix: Any
    ) -> int | None:
        return max(1, len(self._lines(width)))

    def mouse_handler(self, mouse_event: MouseEvent) -> Any:
        return NotImplemented


class EditorSlot:
    """The editor an extension set, if any (one interactive mode has one slot)."""

    def __init__(self, host: EditorHost, tui: Any, keybindings: Any) -> None:
        self.host = host
        self._tui = tui
        self._keybindings = keybindings
        self.factory: Callable[..., Any] | None = None
        self.component: Any = None
        self.window: Window | None = None
        """The extension's editor as drawn, ``None`` while tau's own is shown."""
        self._passed: deque[KeyPress] = deque(maxlen=64)
        """Key presses handed on to tau's bindings (this control lets them by)."""
        self._collected: list[KeyPress] | None = None

    def set(self, factory: Callable[..., Any] | None) -> None:
        from tau.extensions.custom_editor import CustomEditor

        self.factory = factory
        if factory is None:
            self.component, self.window = None, None
        else:
            self.component = factory(self._tui, self.host.theme(), self._keybindings)
            if isinstance(self.component, CustomEditor):
                self.component.builtin = _Builtin(self)
            control = _Control(self, self.host.editor, self._bindings())
            self.window = Window(control, dont_extend_height=True, wrap_lines=False, always_hide_cursor=True)
        app = getattr(self.host, "app", None)
        if app is not None and self.host.dialog is None:
            app.layout.focus(self.window or self.host.builtin_editor_window)
        self.host.invalidate()

    def _bindings(self) -> KeyBindings:
        bindings = KeyBindings()
        caught = Condition(self._not_passed)
        for key in _CAUGHT:
            bindings.add(key, filter=caught, eager=lone_escape if key == "escape" else False)(self._key)
        bindings.add(Keys.Any, filter=caught)(self._key)
        return bindings

    def _not_passed(self) -> bool:
        """Whether the key being matched was typed, not handed on by ``pass_on``."""
        keys = get_app().key_processor.key_buffer
        return not any(press is passed for press in keys for passed in self._passed)

    def _key(self, event: KeyPressEvent) -> None:
        press = event.key_sequence[-1]
        name = _name(press)
        handle = getattr(self.component, "handle_input", None)
        if name is None or not callable(handle):
            self.pass_on([KeyPress(press.key, press.data)])
            return
        self._collected = []
        try:
            handle(name)
        finally:
            collected, self._collected = self._collected, None
            if collected:
                self._feed(collected)
            self.host.invalidate()

    def pass_on(self, presses: list[KeyPress]) -> None:
        """Hand ``presses`` to tau's bindings: after the key being handled, or now."""
        if self._collected is not None:
            self._collected.extend(presses)
            return
        self._feed(presses)
        app = self.host.app
        if app is not None and app.is_running:
            app.key_processor.process_keys()

    def _feed(self, presses: list[KeyPress]) -> None:
        self._passed.extend(presses)
        app = self.host.app
        if app is not None and app.is_running:
            app.key_processor.feed_multiple(presses, first=True)

"""Dialogs shown in place of the editor: a filterable list picker, a one-line input and a
multi-line editor. Each resolves an ``asyncio`` future; the app swaps it in and awaits it.

Extension dialogs (``ctx.ui.select/confirm/input/editor``) and the built-in selectors (model,
session, tree, settings) are all one of these three.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from msgspec import Struct
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.key_binding import DynamicKeyBindings, KeyBindings, KeyPressEvent, merge_key_bindings
from prompt_toolkit.layout import ConditionalContainer, HSplit, Window
from prompt_toolkit.layout.containers import Container
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.processors import BeforeInput, PasswordProcessor

from tau.modes.interactive.fuzzy import fuzzy_filter, fuzzy_score
from tau.modes.interactive.keyboard import lone_escape
from tau.modes.interactive.keymap import Keymap, load_keymap
from tau.modes.interactive.render.format import truncate_to_width

__all__ = ["Dialog", "EditorDialog", "InputDialog", "ListDialog", "ListItem"]

T = TypeVar("T")
_VISIBLE_ROWS = 12


class ListItem(Struct, Generic[T]):
    label: str
    value: T
    description: str = ""
    search_text: str | None = None


class Dialog:
    """Something that takes the editor's place until it has an answer."""

    def __init__(self) -> None:
        self.future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.container: Container
        self.focus: Window

    def use_keymap(self, keymap: Keymap) -> None:
        """The user's keys for the dialog's keymap actions (the app calls this on showing it)."""

    def close(self, value: Any) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def _cancel_bindings(self) -> KeyBindings:
        """Esc and Ctrl+C answer ``None``."""
        bindings = KeyBindings()

        @bindings.add("escape", eager=lone_escape)
        @bindings.add("c-c")
        def _cancel(event: KeyPressEvent) -> None:
            self.close(None)

        return bindings


def _title_window(title: Callable[[], str]) -> Window:
    """The title, a line for each of its lines (as pi draws an extension's ``"Title\nDetail"``)."""
    return Window(
        FormattedTextControl(lambda: [("class:dialog.title", title())]),
        height=lambda: title().count("\n") + 1,
        dont_extend_height=True,
    )


def _hint_window(hint: Callable[[], str]) -> Window:
    """The keys' line, wrapped rather than cut where it is wider than the terminal (as pi's)."""
    return Window(
        FormattedTextControl(lambda: [("class:dialog.hint", hint())]),
        wrap_lines=True,
        dont_extend_height=True,
    )


class ListDialog(Dialog, Generic[T]):
    """Pick one of ``items``; typing filters them (fuzzy). Answers the item, or ``None``.

    ``keys`` adds bindings (prompt_toolkit key names) that get the highlighted item; ``actions``
    the same by keymap action id (``app.session.rename``), on the keys the user's keymap gives it.
    Moving, choosing and cancelling are the keymap's ``tui.select.*``."""

    def __init__(
        self,
        title: str,
        items: Sequence[ListItem[T]],
        *,
        message: str = "",
        hint: str = "↑↓ move · enter choose · esc cancel · type to filter",
        filterable: bool = True,
        selected: int = 0,
        keys: dict[str, Callable[[ListDialog[T], ListItem[T]], None]] | None = None,
        actions: dict[str, Callable[[ListDialog[T], ListItem[T]], None]] | None = None,
        keep_order: bool = False,
        empty: str = "(no matches)",
        description_below: bool = False,
        search_prompt: str = "filter: ",
        counter: bool = False,
        matcher: Callable[[str, list[ListItem[T]]], list[ListItem[T]]] | None = None,
    ) -> None:
        super().__init__()
        self._matcher = matcher
        """Filters and ranks the items for a query instead of tau's fuzzy search."""
        self.empty = empty
        """What the list says when it shows nothing."""
        self._description_below = description_below
        self._counter = counter
        """pi's ``(3/33)`` under the rows: where the highlight is among those shown."""
        """The highlighted item's description under the list (pi's settings) instead of on each row."""
        self._keep_order = keep_order
        """A search only filters: the matches stay in the list's order rather than best first."""
        self.title = title
        self.hint = hint
        self.items = list(items)
        self.shown = list(self.items)
        self.index = max(0, min(selected, len(self.items) - 1))
        self._filterable = filterable
        self.query = Buffer(multiline=False, on_text_changed=lambda _: self._refilter())
        bindings = KeyBindings()
        for key, action in (keys or {}).items():
            bindings.add(key)(self._bound(action))
        self._bindings = bindings
        self._actions = dict(actions or {})
        self._empty_actions: dict[str, Callable[[ListDialog[T]], None]] = {}
        self._keymap = load_keymap(None)
        self._select = self._select_bindings(self._keymap)

        list_window = Window(
            FormattedTextControl(self._rows, focusable=False),
            height=Dimension(min=1, max=_VISIBLE_ROWS),
            dont_extend_height=True,
        )
        # Not filterable: the query line is there (it holds the key bindings) but zero rows high.
        self.focus = Window(
            BufferControl(
                self.query,
                key_bindings=merge_key_bindings([DynamicKeyBindings(lambda: self._select), bindings]),
                input_processors=[BeforeInput([("class:dialog.hint", search_prompt)])],
            ),
            height=1 if filterable else 0,
        )
        self._message = message
        self.container = HSplit(
            [
                Window(height=1, char="─", style="class:dialog.border"),
                _title_window(lambda: self.title),
                ConditionalContainer(
                    Window(
                        FormattedTextControl(lambda: self.message_text()),
                        dont_extend_height=True,
                        wrap_lines=True,
                    ),
                    filter=Condition(lambda: bool(self.message_text())),
                ),
                self.focus,
                list_window,
                ConditionalContainer(
                    Window(
                        FormattedTextControl(
                            lambda: [("class:dialog.hint", f"  ({self.index + 1}/{len(self.shown)})")]
                        ),
                        height=1,
                    ),
                    filter=Condition(lambda: self._counter and bool(self.shown)),
                ),
                ConditionalContainer(
                    Window(
                        FormattedTextControl(
                            lambda: [("class:dialog.hint", self._highlighted_description())]
                        ),
                        dont_extend_height=True,
                        wrap_lines=True,
                    ),
                    filter=Condition(lambda: bool(self._highlighted_description())),
                ),
                _hint_window(lambda: self.hint_text()),
            ]
        )

    def message_text(self) -> str:
        """The line(s) under the title (a subclass may work them out as the list changes)."""
        return self._message

    def hint_text(self) -> str:
        """The keys' line under the list."""
        return self.hint

    def _highlighted_description(self) -> str:
        if not self._description_below or not self.shown:
            return ""
        about = self.shown[min(self.index, len(self.shown) - 1)].description
        return f"\n  {about}" if about else ""

    def on_empty_key(self, key: str, action: Callable[[ListDialog[T]], None]) -> None:
        """Bind ``key`` to ``action(dialog)`` whether or not anything is listed (Tab in the session
        picker)."""
        self._bindings.add(key)(lambda event: action(self))

    def on_empty_action(self, action_id: str, action: Callable[[ListDialog[T]], None]) -> None:
        """``on_empty_key`` on the keys of keymap action ``action_id``."""
        self._empty_actions[action_id] = action
        self._select = self._select_bindings(self._keymap)

    def use_keymap(self, keymap: Keymap) -> None:
        self._keymap = keymap
        self._select = self._select_bindings(keymap)

    def _select_bindings(self, keymap: Keymap) -> KeyBindings:
        bindings = KeyBindings()

        def add(action: str, handler: Callable[[KeyPressEvent], None]) -> None:
            for keys in keymap.keys(action):
                bindings.add(*keys, eager=lone_escape if keys == ("escape",) else False)(handler)

        add("tui.select.cancel", lambda event: self.close(None))
        add("tui.select.up", lambda event: self.move(-1))
        add("tui.select.down", lambda event: self.move(1))
        add("tui.select.pageUp", lambda event: self.move(-_VISIBLE_ROWS))
        add("tui.select.pageDown", lambda event: self.move(_VISIBLE_ROWS))
        add("tui.select.confirm", lambda event: self.close(self.shown[self.index] if self.shown else None))
        for action_id, on_item in self._actions.items():
            add(action_id, self._bound(on_item))
        for action_id, on_any in self._empty_actions.items():
            add(action_id, self._always(on_any))
        return bindings

    def _always(self, action: Callable[[ListDialog[T]], None]) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            action(self)

        return handler

    def _bound(self, action: Callable[[ListDialog[T], ListItem[T]], None]) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            if self.shown:
                action(self, self.shown[self.index])

        return handler

    def move(self, delta: int) -> None:
        if self.shown:
            self.index = max(0, min(len(self.shown) - 1, self.index + delta))

    def _refilter(self) -> None:
        query = self.query.text.strip() if self._filterable else ""
        if not query:
            self.shown = list(self.items)
        elif self._matcher is not None:
            self.shown = self._matcher(query, self.items)
        elif self._keep_order:
            self.shown = [i for i in self.items if fuzzy_score(query, i.search_text or i.label) is not None]
        else:
            self.shown = fuzzy_filter(query, self.items, lambda i: i.search_text or i.label)
        self.index = 0

    def _rows(self) -> StyleAndTextTuples:
        from prompt_toolkit.application import get_app

        width = get_app().output.get_size().columns
        if not self.shown:
            return [("class:dialog.hint", f"  {self.empty}")]
        start = max(0, min(self.index - _VISIBLE_ROWS // 2, len(self.shown) - _VISIBLE_ROWS))
        rows: StyleAndTextTuples = []
        for position in range(start, min(len(self.shown), start + _VISIBLE_ROWS)):
            item = self.shown[position]
            chosen = position == self.index
            marker = "› " if chosen else "  "
            text = marker + item.label
            if item.description and not self._description_below:
                text += "  " + item.description
            style = "class:dialog.selected" if chosen else ""
            if rows:
                rows.append(("", "\n"))
            rows.append((style, truncate_to_width(text, max(1, width - 1))))
        return rows


class InputDialog(Dialog):
    """One line of text; Enter answers it, Esc answers ``None``."""

    def __init__(
        self, title: str, *, placeholder: str = "", initial: str = "", password: bool = False
    ) -> None:
        super().__init__()
        self.buffer = Buffer(multiline=False, document=None)
        self.buffer.text = initial
        self.buffer.cursor_position = len(initial)
        bindings = self._cancel_bindings()

        @bindings.add("enter")
        def _accept(event: KeyPressEvent) -> None:
            self.close(self.buffer.text)

        hint = "enter confirm · esc cancel" + (f" · {placeholder}" if placeholder else "")
        self.focus = Window(
            BufferControl(
                self.buffer, key_bindings=bindings, input_processors=[PasswordProcessor()] if password else []
            ),
            height=1,
        )
        self.container = HSplit(
            [
                Window(height=1, char="─", style="class:dialog.border"),
                _title_window(lambda: title),
                self.focus,
                _hint_window(lambda: hint),
            ]
        )


class EditorDialog(Dialog):
    """Several lines of text; Ctrl+S answers it (Enter is a new line), Esc answers ``None``;
    ``external_editor(buffer)``, when given, is what Ctrl+G does (edit the text in another program)."""

    def __init__(
        self, title: str, prefill: str = "", *, external_editor: Callable[[Buffer], None] | None = None
    ) -> None:
        super().__init__()
        self.buffer = Buffer(multiline=True)
        self.buffer.text = prefill
        bindings = self._cancel_bindings()

        @bindings.add("c-s")
        def _accept(event: KeyPressEvent) -> None:
            self.close(self.buffer.text)

        if external_editor is not None:
            bindings.add("c-g")(lambda event: external_editor(self.buffer))

        self.focus = Window(
            BufferControl(self.buffer, key_bindings=bindings),
            height=Dimension(min=3, max=15),
            wrap_lines=True,
        )
        self.container = HSplit(
            [
                Window(height=1, char="─", style="class:dialog.border"),
                _title_window(lambda: title),
                self.focus,
                _hint_window(
                    lambda: (
                        "ctrl+s save · ctrl+g external editor · esc cancel"
                        if external_editor is not None
                        else "ctrl+s save · esc cancel"
                    )
                ),
            ]
        )

"""Extensions' own components in the terminal UI (``ctx.ui.custom``, ``set_header``,
``set_footer``, ``add_autocomplete_provider``; ``set_editor_component`` in ``editor_component``), as pi's ``docs/tui.md`` describes them, in Python.

A component is any object with ``render(width) -> list[str]``: lines of text that may carry colour
(SGR) sequences, each cut to ``width``. It may also have ``handle_input(key)``, called with each key
while it has the focus, in the names ``keybindings.json`` uses (``"up"``, ``"enter"``, ``"escape"``,
``"ctrl+x"``, ``"shift+tab"``) or the character typed, and ``invalidate()``, called when the theme
changes. Factories receive:

- ``tui``: ``request_render()`` (draw again after a change), ``width``, ``height``;
- ``theme``: the active theme;
- ``keybindings``: ``matches(key, action)`` for the user's keys of an action (``"tui.select.up"``);
- ``done(value)`` (``custom`` only): ends the interaction; ``custom`` returns ``value``.

``custom(factory)`` puts the component where the editor is until ``done``; with ``overlay=True``
it floats above the screen (``overlay_options``: ``anchor`` such as ``"center"`` or ``"top-right"``,
``width`` as cells or ``"50%"``, ``margin``). The app registers the overlay layer, the header and
the footer through ``ComponentHost``; nothing else in the app knows about them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, Float, FloatContainer, Window
from prompt_toolkit.layout.containers import Container
from prompt_toolkit.layout.controls import UIContent, UIControl

from tau.modes.interactive.dialogs import Dialog
from tau.modes.interactive.keyboard import lone_escape
from tau.modes.interactive.keymap import PROMPT_TOOLKIT_KEY_NAMES, to_prompt_toolkit_keys
from tau.modes.interactive.render.format import truncate_to_width

if TYPE_CHECKING:
    from tau.modes.interactive.keymap import Keymap

__all__ = ["ComponentHost", "ComponentMode", "key_name"]


class ComponentMode(Protocol):
    """What the extensions' components reach of the interactive mode: its size and redraws, the
    editor and dialogs they stand in for, the keys, the theme and the footer's data."""

    @property
    def width(self) -> int: ...

    @property
    def keymap(self) -> Keymap: ...

    @property
    def app(self) -> Any: ...

    @property
    def editor(self) -> Any: ...

    @property
    def editor_window(self) -> Any: ...

    @property
    def builtin_editor_window(self) -> Any: ...

    @property
    def dialog(self) -> Any: ...

    @property
    def statuses(self) -> Any: ...

    @property
    def branch(self) -> str | None: ...

    def theme(self) -> Any: ...

    def invalidate(self) -> None: ...

    def redraw_all(self, *, reload_messages: bool = False) -> None: ...

    def show_dialog(self, dialog: Any) -> Any: ...

    def border_colour(self) -> str: ...

    def editor_padding(self) -> int: ...


_NAMED_KEYS = PROMPT_TOOLKIT_KEY_NAMES
_PASSED_KEYS: tuple[str, ...] = (
    *_NAMED_KEYS,
    *(f"c-{letter}" for letter in "abcdefgklnopqrstuvwxyz"),
)


def key_name(key: str, data: str) -> str:
    """A prompt_toolkit key as ``keybindings.json`` names it (``c-x`` → ``ctrl+x``), or the character."""
    if key in _NAMED_KEYS:
        return _NAMED_KEYS[key]
    if key.startswith("c-") and len(key) == 3:
        return f"ctrl+{key[2]}"
    return data or key


class _Tui:
    """The ``tui`` a factory receives."""

    def __init__(self, mode: ComponentMode) -> None:
        self._mode = mode

    def request_render(self) -> None:
        self._mode.invalidate()

    @property
    def width(self) -> int:
        return self._mode.width

    @property
    def height(self) -> int:
        app = getattr(self._mode, "app", None)
        return app.output.get_size().rows if app is not None and app.is_running else 24


class _Keybindings:
    """The ``keybindings`` a factory receives: the user's keys of tau's actions."""

    def __init__(self, keymap: Callable[[], Keymap]) -> None:
        self._keymap = keymap

    def matches(self, key: str, action: str) -> bool:
        """Whether ``key`` (as ``handle_input`` got it) is one of ``action``'s keys."""
        try:
            bound = self._keymap().keys(action)
        except KeyError:
            return False
        sequence = to_prompt_toolkit_keys(key) if len(key) > 1 else (key,)
        return sequence is not None and sequence in bound


class FooterData:
    """What a custom footer may show besides its own state: the git branch and the statuses
    extensions set (``ctx.ui.set_status``)."""

    def __init__(self, mode: ComponentMode) -> None:
        self._mode = mode

    @property
    def git_branch(self) -> str | None:
        return self._mode.branch

    @property
    def statuses(self) -> dict[str, str]:
        return dict(self._mode.statuses)


def _lines(component: Any, width: int) -> list[str]:
    """``component.render(width)``, each line cut to ``width``; an error line when it fails."""
    try:
        lines = component.render(width)
        return [truncate_to_width(str(line), width) for line in lines]
    except Exception as error:  # an extension must never take the screen down
        return [truncate_to_width(f"[component failed: {type(error).__name__}: {error}]", width)]


class _ComponentControl(UIControl):
    """A component drawn in a window; its keys go to ``handle_input``."""

    def __init__(self, component: Any, request_render: Callable[[], None]) -> None:
        self.component = component
        self._request_render = request_render
        self._bindings = KeyBindings()
        for key in _PASSED_KEYS:
            eager = lone_escape if key == "escape" else False
            self._bindings.add(key, eager=eager)(self._key)
        self._bindings.add(Keys.Any)(self._key)

    def _key(self, event: KeyPressEvent) -> None:
        handle = getattr(self.component, "handle_input", None)
        if callable(handle):
            press = event.key_sequence[-1]
            handle(key_name(str(press.key.value if isinstance(press.key, Keys) else press.key), press.data))
            self._request_render()

    def create_content(self, width: int, height: int | None) -> UIContent:
        fragments = [to_formatted_text(ANSI(line)) for line in _lines(self.component, width)]
        return UIContent(get_line=lambda i: fragments[i], line_count=len(fragments))

    def preferred_height(
        self, width: int, max_available_height: int, wrap_lines: bool, get_line_prefix: Any
    ) -> int | None:
        return len(_lines(self.component, width))

    def is_focusable(self) -> bool:
        return True

    def get_key_bindings(self) -> KeyBindings:
        return self._bindings


class _ComponentDialog(Dialog):
    """``ctx.ui.custom``'s component in the editor's place."""

    def __init__(self, control: _ComponentControl) -> None:
        super().__init__()
        self.focus = Window(control, dont_extend_height=True, wrap_lines=False)
        self.container = self.focus


class _Overlay:
    def __init__(self, control: _ComponentControl, options: Mapping[str, Any]) -> None:
        self.control = control
        self.window = Window(control, dont_extend_height=True, wrap_lines=False, style="class:dialog")
        self.options = options


class ComponentHost:
    """The components extensions set in one interactive mode."""

    def __init__(self, mode: ComponentMode) -> None:
        self._mode = mode
        self.tui = _Tui(mode)
        self.keybindings = _Keybindings(lambda: mode.keymap)
        self.header: Any = None
        self.footer: Any = None
        self._floats: FloatContainer | None = None
        self._overlays: list[_Overlay] = []
        from tau.modes.interactive.editor_component import EditorSlot

        self.editor_slot = EditorSlot(mode, self.tui, self.keybindings)
        """The editor an extension put in place of tau's (``set_editor_component``)."""

    # -- the app's hooks ---------------------------------------------------------------------------

    @property
    def has_overlays(self) -> bool:
        """Whether an overlay floats above the screen now."""
        return bool(self._overlays)

    def with_overlays(self, root: Container) -> Container:
        """``root`` under the layer overlays float in (the app calls this when it builds its layout)."""
        self._floats = FloatContainer(root, floats=[self._float(o) for o in self._overlays])
        return self._floats

    def header_text(self) -> str | None:
        """The custom header's text, or ``None`` for tau's own."""
        if self.header is None:
            return None
        return "\n".join(_lines(self.header, self._mode.width))

    def footer_fragments(self) -> StyleAndTextTuples | None:
        """The custom footer, or ``None`` for tau's own."""
        if self.footer is None:
            return None
        out: StyleAndTextTuples = []
        for line in _lines(self.footer, self._mode.width):
            if out:
                out.append(("", "\n"))
            out.extend(to_formatted_text(ANSI(line)))
        return out

    # -- ctx.ui --------------------------------------------------------------------------------------

    def set_header(self, factory: Callable[..., Any] | None) -> None:
        self.header = None if factory is None else factory(self.tui, self._mode.theme())
        self._mode.redraw_all()

    def set_footer(self, factory: Callable[..., Any] | None) -> None:
        self.footer = (
            None if factory is None else factory(self.tui, self._mode.theme(), FooterData(self._mode))
        )
        self._mode.invalidate()

    async def custom(
        self, factory: Callable[..., Any], *, overlay: bool = False, overlay_options: Any = None
    ) -> Any:
        import asyncio

        finished: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def done(value: Any = None) -> None:
            if not finished.done():
                finished.set_result(value)

        component = factory(self.tui, self._mode.theme(), self.keybindings, done)
        control = _ComponentControl(component, self._mode.invalidate)
        if not overlay:
            dialog = _ComponentDialog(control)
            finished.add_done_callback(lambda f: dialog.close(f.result()))
            return await self._mode.show_dialog(dialog)
        options = overlay_options(self.tui) if callable(overlay_options) else dict(overlay_options or {})
        shown = _Overlay(control, options)
        self._overlays.append(shown)
        self._refloat()
        app = self._mode.app
        app.layout.focus(shown.window)
        try:
            return await finished
        finally:
            self._overlays.remove(shown)
            self._refloat()
            focus = self._mode.dialog.focus if self._mode.dialog is not None else self._mode.editor_window
            if self._overlays:
                focus = self._overlays[-1].window
            app.layout.focus(focus)
            self._mode.invalidate()

    def _refloat(self) -> None:
        if self._floats is not None:
            self._floats.floats[:] = [self._float(o) for o in self._overlays]
        self._mode.invalidate()

    def _float(self, overlay: _Overlay) -> Float:
        options = overlay.options
        anchor = str(options.get("anchor", "center"))
        margin = int(options.get("margin", 0) or 0)
        width = _cells(options.get("width"), self._mode.width)
        place: dict[str, Any] = {}
        if "top" in anchor:
            place["top"] = margin
        if "bottom" in anchor:
            place["bottom"] = margin
        if "left" in anchor:
            place["left"] = margin
        if "right" in anchor:
            place["right"] = margin
        shown = ConditionalContainer(overlay.window, filter=Condition(lambda: True))
        return Float(shown, width=width, **place)

    def set_editor_component(self, factory: Callable[..., Any] | None) -> None:
        self.editor_slot.set(factory)

    @property
    def editor_factory(self) -> Callable[..., Any] | None:
        return self.editor_slot.factory

    def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None:
        editor = self._mode.editor
        below = editor.completer or _NoCompletions()
        editor.completer = _ProviderCompleter(factory(_BuiltinProvider(below)), below)


def _cells(width: Any, total: int) -> int | None:
    if isinstance(width, int) and not isinstance(width, bool):
        return max(1, min(width, total))
    if isinstance(width, str) and width.endswith("%"):
        try:
            return max(1, total * int(width[:-1]) // 100)
        except ValueError:
            return None
    return None


# -- autocomplete ---------------------------------------------------------------------------------


class _NoCompletions(Completer):
    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        return []


def _document(lines: Sequence[str], line: int, col: int) -> Document:
    before = sum(len(text) + 1 for text in lines[:line])
    return Document("\n".join(lines), before + col)


class _BuiltinProvider:
    """The provider below an extension's (``current``): tau's slash-command and path completion."""

    def __init__(self, completer: Completer) -> None:
        self._completer = completer

    def get_suggestions(
        self,
        lines: Sequence[str],
        cursor_line: int,
        cursor_col: int,
        options: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        document = _document(lines, cursor_line, cursor_col)
        force = bool((options or {}).get("force", False))
        found = list(self._completer.get_completions(document, CompleteEvent(completion_requested=force)))
        if not found:
            return None
        length = max(-c.start_position for c in found)
        return {
            "prefix": document.text_before_cursor[len(document.text_before_cursor) - length :],
            "items": [
                {"value": c.text, "label": c.display_text, "description": c.display_meta_text} for c in found
            ],
        }

    def apply_completion(
        self, lines: Sequence[str], cursor_line: int, cursor_col: int, item: Mapping[str, Any], prefix: str
    ) -> dict[str, Any]:
        """The lines with ``prefix`` before the cursor replaced by the item's value."""
        text = lines[cursor_line]
        value = str(item.get("value", ""))
        start = cursor_col - len(prefix)
        new_lines = list(lines)
        new_lines[cursor_line] = text[:start] + value + text[cursor_col:]
        return {"lines": new_lines, "cursor_line": cursor_line, "cursor_col": start + len(value)}


class _ProviderCompleter(Completer):
    """An extension's provider as a prompt_toolkit completer (its ``None`` falls to the one below)."""

    def __init__(self, provider: Any, below: Completer) -> None:
        self._provider = provider
        self._below = below

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        found = self._ask(document, complete_event)
        if inspect.iscoroutine(found):
            found.close()  # an async provider answers through get_completions_async only
            return []
        return self._completions(found)

    async def get_completions_async(self, document: Document, complete_event: CompleteEvent) -> Any:
        found = self._ask(document, complete_event)
        if inspect.isawaitable(found):
            try:
                found = await found
            except Exception:
                found = None
        for completion in self._completions(found):
            yield completion

    def _ask(self, document: Document, complete_event: CompleteEvent) -> Any:
        options = {"force": complete_event.completion_requested}
        try:
            return self._provider.get_suggestions(
                document.lines, document.cursor_position_row, document.cursor_position_col, options
            )
        except Exception:  # a failing provider offers nothing; typing goes on
            return None

    @staticmethod
    def _completions(found: Any) -> list[Completion]:
        if not isinstance(found, Mapping):
            return []
        prefix = str(found.get("prefix", ""))
        out: list[Completion] = []
        for item in found.get("items") or []:
            if not isinstance(item, Mapping) or "value" not in item:
                continue
            value = str(item["value"])
            out.append(
                Completion(
                    value,
                    start_position=-len(prefix),
                    display=str(item.get("label") or value),
                    display_meta=str(item.get("description") or ""),
                )
            )
        return out

"""The completion menu under the editor (``/`` commands, ``@`` files, paths), drawn as pi 1.6's
list draws it: ``→`` before the highlighted row, the names in a column as wide as the widest
(12 to 32 cells for commands, 32 otherwise) and the descriptions after it, at most
``autocompleteMaxVisible`` rows kept centred on the highlighted one, and under them ``(3/26)``
when not every row fits. The highlighted row is the editor's (``EditorBuffer.menu_index``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from prompt_toolkit.completion import Completion
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.layout import ConditionalContainer, Container, Dimension, FormattedTextControl, Window
from prompt_toolkit.mouse_events import MouseButton, MouseEvent, MouseEventType
from prompt_toolkit.utils import get_cwidth

__all__ = ["MenuSource", "menu_container", "menu_lines"]

_GAP = 2
"""Cells between the name column and the description."""
_COMMAND_COLUMN = (12, 32)
_OTHER_COLUMN = (32, 32)
_MIN_DESCRIPTION = 10


class MenuSource(Protocol):
    """What the menu reads of the editor."""

    def menu_choices(self) -> list[Completion]: ...

    def menu_index(self) -> int: ...

    def menu_is_commands(self) -> bool: ...

    def menu_pick(self, index: int, *, take: bool) -> None: ...


def _clip(text: str, cells: int, ellipsis: str = "") -> str:
    """``text`` cut to ``cells`` terminal cells, ``ellipsis`` (counted in) marking a cut."""
    if get_cwidth(text) <= cells:
        return text
    room = cells - get_cwidth(ellipsis)
    out, used = [], 0
    for char in text:
        width = get_cwidth(char)
        if used + width > room:
            break
        out.append(char)
        used += width
    return "".join(out) + ellipsis


def _one_line(text: str) -> str:
    """A name on one row: line breaks and tabs as spaces (pi's list does so for descriptions)."""
    return text.replace("\r", " ").replace("\n", " ").replace("\t", " ")


def menu_lines(
    choices: list[Completion],
    selected: int,
    width: int,
    max_visible: int,
    *,
    commands: bool,
    pick: Callable[[int, bool], None] | None = None,
) -> StyleAndTextTuples:
    """The menu's rows, then the counter line when the rows do not all fit, as styled text;
    ``pick(index, take)`` is told of a click on a row (a press, then its release)."""
    count = len(choices)
    if count == 0:
        return []
    visible = max(1, max_visible)
    start = max(0, min(selected - visible // 2, count - visible))
    end = min(start + visible, count)
    low, high = _COMMAND_COLUMN if commands else _OTHER_COLUMN
    widest = max(get_cwidth(_one_line(choice.display_text)) + _GAP for choice in choices)
    column = max(1, min(max(low, min(widest, high)), width - 2 - 4))
    lines: StyleAndTextTuples = []

    def clicks(index: int) -> Callable[[MouseEvent], object]:
        def handler(event: MouseEvent) -> object:
            if pick is None or event.button != MouseButton.LEFT:
                return NotImplemented
            if event.event_type in (MouseEventType.MOUSE_DOWN, MouseEventType.MOUSE_UP):
                pick(index, event.event_type == MouseEventType.MOUSE_UP)
                return None
            return NotImplemented

        return handler

    for index in range(start, end):
        choice = choices[index]
        chosen = index == selected
        prefix = "→ " if chosen else "  "
        description = " ".join(choice.display_meta_text.split())
        shown = _one_line(choice.display_text)
        name_style = "class:menu.selected" if chosen else ""
        click = clicks(index)
        if description and width > 40:
            name = _clip(shown, max(1, column - _GAP), "…")
            spacing = " " * max(1, column - get_cwidth(name))
            room = width - (2 + get_cwidth(name) + len(spacing)) - 2
            if room > _MIN_DESCRIPTION:
                rest = spacing + _clip(description, room)
                lines += [
                    (name_style, prefix + name, click),
                    (name_style or "class:menu.description", rest, click),
                ]
                lines.append(("", "\n"))
                continue
        lines += [
            (name_style, prefix + _clip(shown, max(1, width - 4), "…"), click),
            ("", "\n"),
        ]
    if start > 0 or end < count:
        lines += [("class:menu.description", _clip(f"  ({selected + 1}/{count})", max(1, width - 2)))]
    elif lines:
        lines.pop()  # no newline after the last row
    return lines


def menu_container(source: MenuSource, width: Callable[[], int], max_visible: Callable[[], int]) -> Container:
    """The menu as a part of the layout: as tall as its lines, shown while there are choices."""

    def lines() -> StyleAndTextTuples:
        return menu_lines(
            source.menu_choices(),
            source.menu_index(),
            width(),
            max_visible(),
            commands=source.menu_is_commands(),
            pick=lambda index, take: source.menu_pick(index, take=take),
        )

    def height() -> Dimension:
        count = len(source.menu_choices())
        rows = min(count, max(1, max_visible()))
        lines = rows + (1 if count > rows else 0)
        # A terminal too short for all of it gets its first rows rather than no picture at all.
        return Dimension(min=1, max=lines, preferred=lines)

    window = Window(FormattedTextControl(lines), height=height, dont_extend_height=True)
    return ConditionalContainer(window, filter=Condition(lambda: bool(source.menu_choices())))

"""The ``/tree`` picker: the list of ``tree_view`` rows with pi 1.6's branch keys.

``app.tree.foldOrUp`` (Ctrl+Left, Alt+Left) folds the highlighted branch (its rows go, ``⊞`` marks
it) or, where there is nothing to fold, moves up to the start of the branch segment (the first
entry after a fork), then the one above; ``app.tree.unfoldOrDown`` (Ctrl+Right, Alt+Right) unfolds
it, or moves down to the next fork's first branch, or the end of the branch. What can fold is a
root or the first entry of a branch, with rows under it (``⊟``). ``app.tree.toggleLabelTimestamp``
(Shift+T) shows when each label was set. All of it works on the rows shown: a filter or a search
leaves entries out, and the rows then hang under their nearest shown ancestor, as in pi. Typing
a search unfolds everything, as pi's does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.buffer import Buffer

from tau.modes.interactive.dialogs import ListDialog, ListItem
from tau.modes.interactive.keymap import Keymap
from tau.modes.interactive.tree_view import TreeRows, format_label_time

__all__ = ["TreeDialog", "tree_help"]

FOLDED = "⊞"
FOLDABLE = "⊟"


class TreeDialog(ListDialog[str]):
    """``ListDialog`` over ``TreeRows`` (the current leaf's row highlighted unless ``selected``
    says); ``folded`` and ``label_times`` are its state, for the caller to carry into the next one
    (after a label edit, say)."""

    def __init__(
        self,
        title: str,
        rows: TreeRows,
        *,
        folded: set[str] | None = None,
        label_times: bool = False,
        filter_mode: str = "default",
        **options: Any,
    ) -> None:
        self._tree = rows
        self._filter_mode = filter_mode
        self._title = title
        self.folded = {value for value in folded or () if value in rows.indents}
        self.label_times = label_times
        self._visible_parent: dict[str, str | None] = {}
        self._visible_children: dict[str | None, list[str]] = {}
        options.setdefault("selected", rows.selected)
        options.setdefault("empty", "No entries found")  # pi's words
        options.setdefault("search_prompt", "Type to search: ")
        super().__init__(title, rows.items, **options)
        self._matches = list(self.shown)
        """The rows the search leaves, before folding."""
        self.query.on_text_changed += self._searched
        selected = self.items[self.index].value if self.items else None
        self._apply(selected)
        for action_id, action in (
            ("app.tree.foldOrUp", TreeDialog.fold_or_up),
            ("app.tree.unfoldOrDown", TreeDialog.unfold_or_down),
            ("app.tree.toggleLabelTimestamp", TreeDialog.toggle_label_times),
        ):
            self.on_empty_action(action_id, _as_list_action(action))

    def message_text(self) -> str:
        """pi 1.6's help under the title: the keys the user's keymap gives the picker's actions,
        wrapped between them."""
        from prompt_toolkit.application import get_app

        return _wrap(tree_help(self._keymap), get_app().output.get_size().columns)

    def hint_text(self) -> str:
        """pi 1.6's line under the rows: where the highlight is, the filter, label times shown."""
        position = f"({self.index + 1 if self.shown else 0}/{len(self.shown)})"
        return (
            position
            + _FILTER_LABELS.get(self._filter_mode, "")
            + (" [+label time]" if self.label_times else "")
        )

    # The keys.

    def fold_or_up(self) -> None:
        current = self._current()
        if current is not None and self.foldable(current) and current not in self.folded:
            self.folded.add(current)
            self._apply(current)
        else:
            self._go(self._segment_start_above(current))

    def unfold_or_down(self) -> None:
        current = self._current()
        if current is not None and current in self.folded:
            self.folded.discard(current)
            self._apply(current)
        else:
            self._go(self._segment_start_below(current))

    def toggle_label_times(self) -> None:
        self.label_times = not self.label_times
        self._apply(self._current())

    def foldable(self, value: str) -> bool:
        """A shown row with shown rows under it that is a root or the first of a branch."""
        if not self._visible_children.get(value):
            return False
        parent = self._visible_parent.get(value)
        return parent is None or len(self._visible_children.get(parent, [])) > 1

    # What is shown.

    def _searched(self, _query: Buffer) -> None:
        """After the list's own search (the handler before this one): what it left, unfolded."""
        self.folded.clear()  # a new search shows every match, as pi's
        self._matches = list(self.shown)
        self._apply(None)

    def _apply(self, keep: str | None) -> None:
        """Drop the rows under folded ones, work out the shown tree, mark the rows; the highlight
        stays on ``keep`` or, when it went, on its nearest shown ancestor."""
        parents = self._tree.parents
        hidden: set[str] = set()
        for value, parent in parents.items():  # parents before children
            if parent is not None and (parent in self.folded or parent in hidden):
                hidden.add(value)
        shown = [item for item in self._matches if item.value not in hidden]
        shown_values = {item.value for item in shown}
        nearest: dict[str, str | None] = {}
        for value, parent in parents.items():
            nearest[value] = parent if parent is None or parent in shown_values else nearest.get(parent)
        self._visible_parent = {item.value: nearest.get(item.value) for item in shown}
        self._visible_children = {}
        for item in shown:
            self._visible_children.setdefault(self._visible_parent[item.value], []).append(item.value)
        self.shown = [self._marked(item) for item in shown]
        position = {item.value: index for index, item in enumerate(self.shown)}
        while keep is not None and keep not in position:
            keep = parents.get(keep)
        if keep is not None:
            self.index = position[keep]
        self.index = max(0, min(self.index, len(self.shown) - 1))

    def _marked(self, item: ListItem[str]) -> ListItem[str]:
        label = item.label
        time = self._tree.label_times.get(item.value)
        if self.label_times and time is not None:
            label += " " + format_label_time(time)
        indent = self._tree.indents.get(item.value, 0)
        mark = FOLDED if item.value in self.folded else FOLDABLE if self.foldable(item.value) else ""
        if mark and indent >= 2:
            label = label[: indent - 2] + mark + " " + label[indent:]
        elif mark == FOLDED:
            label = mark + " " + label
        if label == item.label:
            return item
        return ListItem(label, item.value, item.description, item.search_text)

    # Moving.

    def _current(self) -> str | None:
        return self.shown[self.index].value if self.shown else None

    def _go(self, value: str | None) -> None:
        for index, item in enumerate(self.shown):
            if item.value == value:
                self.index = index
                return

    def _segment_start_below(self, value: str | None) -> str | None:
        """Down the first branch to the next fork's first branch, or to the branch's end."""
        while value is not None:
            children = self._visible_children.get(value, [])
            if not children:
                return value
            if len(children) > 1:
                return children[0]
            value = children[0]
        return None

    def _segment_start_above(self, value: str | None) -> str | None:
        """Up to the first row of the branch the highlight is in (above it), else the root."""
        position = {item.value: index for index, item in enumerate(self.shown)}
        while value is not None:
            parent = self._visible_parent.get(value)
            if parent is None:
                return value
            if len(self._visible_children.get(parent, [])) > 1 and position[value] < self.index:
                return value
            value = parent
        return None


_FILTER_LABELS = {
    "no-tools": " [no-tools]",
    "user-only": " [user]",
    "labeled-only": " [labeled]",
    "all": " [all]",
}
"""How the line under the rows names each filter but the default (pi's words)."""

_HELP = (
    (("tui.select.up", "tui.select.down"), "move", False),
    (("tui.select.pageUp", "tui.select.pageDown"), "page", False),
    (("app.tree.foldOrUp", "app.tree.unfoldOrDown"), "branch", False),
    (("app.tree.editLabel",), "label", False),
    (("app.tree.toggleLabelTimestamp",), "label time", False),
    (
        (
            "app.tree.filter.default",
            "app.tree.filter.noTools",
            "app.tree.filter.userOnly",
            "app.tree.filter.labeledOnly",
            "app.tree.filter.all",
        ),
        "filters",
        True,
    ),
    (("app.tree.filter.cycleForward", "app.tree.filter.cycleBackward"), "cycle", True),
)
"""The picker's help as pi 1.6 orders it: the actions, what they do, whether the word comes first."""


def tree_help(keymap: Keymap) -> list[str]:
    """The picker's help items (``ctrl+←/→ branch``, ``filters ctrl+d/t/u/a``), naming the first
    key the user's keymap gives each action; an action without keys is left out, a group with
    none at all says its word alone. Keys sharing their modifiers are written once, as pi does."""
    items = []
    for actions, what, word_first in _HELP:
        keys = [_short(keymap.describe(action).split(", ")[0]) for action in actions]
        text = _compact([key for key in keys if key])
        items.append(what if not text else f"{what} {text}" if word_first else f"{text} {what}")
    return items


def _compact(keys: list[str]) -> str:
    if len(keys) < 2:
        return "".join(keys)
    prefixes = {key.rpartition("+")[0] for key in keys}
    if len(prefixes) == 1 and "" not in prefixes:
        return prefixes.pop() + "+" + "/".join(key.rpartition("+")[2] for key in keys)
    return "/".join(keys)


def _wrap(items: list[str], width: int) -> str:
    """``items`` joined with `` · ``, a line broken only between two of them."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 3 + len(item) <= width - 1:
            lines[-1] += " · " + item
        else:
            lines.append(item)
    return "\n".join(lines)


_ARROWS = {"left": "←", "right": "→", "up": "↑", "down": "↓", "pageup": "pgup", "pagedown": "pgdn"}


def _short(key: str) -> str:
    modifiers, plus, name = key.rpartition("+")
    return modifiers + plus + _ARROWS.get(name, name)


def _as_list_action(action: Callable[[TreeDialog], None]) -> Callable[[ListDialog[str]], None]:
    def run(dialog: ListDialog[str]) -> None:
        if isinstance(dialog, TreeDialog):
            action(dialog)

    return run

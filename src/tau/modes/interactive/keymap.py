"""Key bindings by action id, with the user's overrides from ``keybindings.json``.

The file is pi's: ``{"<action>": "<key>" | ["<key>", ...]}`` in ``<agent dir>/keybindings.json``,
keys written ``ctrl+x``, ``alt+enter``, ``shift+tab``. Action ids are pi 1.6's (``app.tools.expand``,
``tui.editor.cursorLeft``, ``tui.select.up`` ...); pi 0.x's names (``expandTools``) are read as the
id they became, and lose to that id when a file has both (as in pi). A configured value replaces
the action's default keys; ``[]`` unbinds it.

Text editing (the ``tui.editor.*`` actions) is prompt_toolkit's Emacs mode until the user rebinds
one: then its new keys run the same editing command and its old ones stop doing it. An id of pi's
that tau has no action for, an id neither knows, a key this terminal layer cannot tell apart
(``ctrl+shift+p`` in most terminals): each is one warning line, and is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Final

from msgspec import Struct, field

__all__ = [
    "CTRL_BACKSPACE",
    "DEFAULT_BINDINGS",
    "DESCRIPTIONS",
    "EDITOR_COMMANDS",
    "LEGACY_NAMES",
    "UNSUPPORTED",
    "Keymap",
    "load_keymap",
    "register_enter_sequences",
    "to_prompt_toolkit_keys",
]

KeySequence = tuple[str, ...]

DEFAULT_BINDINGS: Final[Mapping[str, tuple[str, ...]]] = {
    # The main editor (the keys of pi 1.6 on Linux and macOS).
    "tui.input.submit": ("enter",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"),
    "tui.input.tab": ("tab",),
    "tui.editor.cursorUp": ("up",),
    "tui.editor.cursorDown": ("down",),
    "tui.editor.historyPrevious": (),
    "tui.editor.historyNext": (),
    "tui.editor.cursorLeft": ("left", "ctrl+b"),
    "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+a"),
    "tui.editor.cursorLineEnd": ("end", "ctrl+e"),
    "tui.editor.jumpForward": ("ctrl+]",),
    "tui.editor.jumpBackward": ("ctrl+alt+]",),
    "tui.editor.deleteCharBackward": ("backspace",),
    "tui.editor.deleteCharForward": ("delete",),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"),
    "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",),
    "tui.editor.deleteToLineEnd": ("ctrl+k",),
    "tui.editor.yank": ("ctrl+y",),
    "tui.editor.yankPop": ("alt+y",),
    "tui.editor.undo": ("ctrl+-",),
    "tui.editor.pageUp": ("pageup", "ctrl+pageup"),
    "tui.editor.pageDown": ("pagedown", "ctrl+pagedown"),
    # Lists (pickers, selectors, extension ``select`` dialogs).
    "tui.select.up": ("up",),
    "tui.select.down": ("down",),
    "tui.select.pageUp": ("pageup",),
    "tui.select.pageDown": ("pagedown",),
    "tui.select.confirm": ("enter",),
    "tui.select.cancel": ("escape", "ctrl+c"),
    # The application.
    "app.message.followUp": ("alt+enter",),
    "app.message.dequeue": ("alt+up",),
    "app.message.copy": ("ctrl+x",),
    "app.interrupt": ("escape",),
    "app.clear": ("ctrl+c",),
    "app.exit": ("ctrl+d",),
    "app.suspend": ("ctrl+z",),
    "app.editor.external": ("ctrl+g",),
    "app.clipboard.pasteImage": ("ctrl+v",),
    "app.model.select": ("ctrl+l",),
    "app.model.cycleForward": ("ctrl+p",),
    "app.model.cycleBackward": ("shift+ctrl+p",),
    "app.models.save": ("ctrl+s",),
    "app.models.enableAll": ("ctrl+a",),
    "app.models.clearAll": ("ctrl+x",),
    "app.models.toggleProvider": ("ctrl+p",),
    "app.models.reorderUp": ("alt+up",),
    "app.models.reorderDown": ("alt+down",),
    "app.thinking.cycle": ("shift+tab",),
    "app.tools.expand": ("ctrl+o",),
    "app.thinking.toggle": ("ctrl+t",),
    # The /tree picker's branch keys and the session picker's Ctrl+Backspace.
    "app.tree.foldOrUp": ("ctrl+left", "alt+left"),
    "app.tree.unfoldOrDown": ("ctrl+right", "alt+right"),
    "app.tree.toggleLabelTimestamp": ("shift+t",),
    "app.session.deleteNoninvasive": ("ctrl+backspace",),
    "app.session.new": (),
    "app.session.tree": (),
    "app.session.fork": (),
    "app.session.resume": (),
    "app.session.rename": ("ctrl+r",),
    "app.session.delete": ("ctrl+d",),
    "app.session.toggleSort": ("ctrl+s",),
    "app.session.toggleNamedFilter": ("ctrl+n",),
    "app.session.togglePath": ("ctrl+p",),
    "app.tree.editLabel": ("ctrl+l",),  # pi: shift+l; tau's tree list takes typed letters as a search
    "app.tree.filter.cycleForward": ("ctrl+o",),
    "app.tree.filter.cycleBackward": ("shift+ctrl+o",),
    "app.tree.filter.default": ("ctrl+d",),
    "app.tree.filter.noTools": ("ctrl+t",),
    "app.tree.filter.userOnly": ("ctrl+u",),
    "app.tree.filter.labeledOnly": (),  # pi: ctrl+l, which is tau's app.tree.editLabel
    "app.tree.filter.all": ("ctrl+a",),
    # The fullscreen transcript's.
    "tui.altScreen.pageUp": ("pageup",),
    "tui.altScreen.pageDown": ("pagedown",),
    "tui.altScreen.halfPageUp": (),
    "tui.altScreen.halfPageDown": (),
    "tui.altScreen.lineUp": (),
    "tui.altScreen.lineDown": (),
    "tui.altScreen.previousPrompt": ("ctrl+shift+up",),
    "tui.altScreen.nextPrompt": ("ctrl+shift+down",),
    "tui.altScreen.search": ("ctrl+shift+f",),
    "tui.altScreen.searchNext": ("enter", "ctrl+g"),
    "tui.altScreen.searchPrevious": ("shift+enter", "ctrl+shift+g"),
    "tui.altScreen.searchClose": ("escape",),
    "tui.altScreen.top": ("ctrl+home",),
    "tui.altScreen.bottom": ("ctrl+end",),
}

EDITOR_COMMANDS: Final[Mapping[str, str]] = {
    "tui.editor.cursorLeft": "backward-char",
    "tui.editor.cursorRight": "forward-char",
    "tui.editor.cursorWordLeft": "backward-word",
    "tui.editor.cursorWordRight": "forward-word",
    "tui.editor.cursorLineStart": "beginning-of-line",
    "tui.editor.cursorLineEnd": "end-of-line",
    "tui.editor.deleteCharBackward": "backward-delete-char",
    "tui.editor.deleteCharForward": "delete-char",
    "tui.editor.deleteWordBackward": "unix-word-rubout",
    "tui.editor.deleteWordForward": "kill-word",
    "tui.editor.deleteToLineStart": "unix-line-discard",
    "tui.editor.deleteToLineEnd": "kill-line",
    "tui.editor.yank": "yank",
    "tui.editor.yankPop": "yank-pop",
    "tui.editor.undo": "undo",
}
"""The editing actions prompt_toolkit's Emacs mode does by itself (its named command for each):
bound by tau only once ``keybindings.json`` rebinds them."""

UNSUPPORTED: Final[frozenset[str]] = frozenset(
    {
        "tui.input.copy",
        "app.thinking.save",
    }
)
"""pi 1.6's ids that tau has no action for: a binding of one is reported, not silently dropped."""

LEGACY_NAMES: Final[Mapping[str, str]] = {
    "cursorUp": "tui.editor.cursorUp",
    "cursorDown": "tui.editor.cursorDown",
    "cursorLeft": "tui.editor.cursorLeft",
    "cursorRight": "tui.editor.cursorRight",
    "cursorWordLeft": "tui.editor.cursorWordLeft",
    "cursorWordRight": "tui.editor.cursorWordRight",
    "cursorLineStart": "tui.editor.cursorLineStart",
    "cursorLineEnd": "tui.editor.cursorLineEnd",
    "jumpForward": "tui.editor.jumpForward",
    "jumpBackward": "tui.editor.jumpBackward",
    "pageUp": "tui.editor.pageUp",
    "pageDown": "tui.editor.pageDown",
    "deleteCharBackward": "tui.editor.deleteCharBackward",
    "deleteCharForward": "tui.editor.deleteCharForward",
    "deleteWordBackward": "tui.editor.deleteWordBackward",
    "deleteWordForward": "tui.editor.deleteWordForward",
    "deleteToLineStart": "tui.editor.deleteToLineStart",
    "deleteToLineEnd": "tui.editor.deleteToLineEnd",
    "yank": "tui.editor.yank",
    "yankPop": "tui.editor.yankPop",
    "undo": "tui.editor.undo",
    "newLine": "tui.input.newLine",
    "submit": "tui.input.submit",
    "tab": "tui.input.tab",
    "copy": "tui.input.copy",
    "selectUp": "tui.select.up",
    "selectDown": "tui.select.down",
    "selectPageUp": "tui.select.pageUp",
    "selectPageDown": "tui.select.pageDown",
    "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel",
    "interrupt": "app.interrupt",
    "clear": "app.clear",
    "exit": "app.exit",
    "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle",
    "cycleModelForward": "app.model.cycleForward",
    "cycleModelBackward": "app.model.cycleBackward",
    "selectModel": "app.model.select",
    "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle",
    "toggleSessionNamedFilter": "app.session.toggleNamedFilter",
    "externalEditor": "app.editor.external",
    "followUp": "app.message.followUp",
    "dequeue": "app.message.dequeue",
    "pasteImage": "app.clipboard.pasteImage",
    "newSession": "app.session.new",
    "tree": "app.session.tree",
    "fork": "app.session.fork",
    "resume": "app.session.resume",
    "treeFoldOrUp": "app.tree.foldOrUp",
    "treeUnfoldOrDown": "app.tree.unfoldOrDown",
    "treeEditLabel": "app.tree.editLabel",
    "treeToggleLabelTimestamp": "app.tree.toggleLabelTimestamp",
    "toggleSessionPath": "app.session.togglePath",
    "toggleSessionSort": "app.session.toggleSort",
    "renameSession": "app.session.rename",
    "deleteSession": "app.session.delete",
    "deleteSessionNoninvasive": "app.session.deleteNoninvasive",
}
"""pi 0.x's action names and the pi 1.6 id each became."""

DESCRIPTIONS: Final[Mapping[str, str]] = {
    "tui.input.submit": "Send the message (queues a steering message while the agent works)",
    "tui.input.newLine": "Insert a new line (also: end a line with \\ and press Enter)",
    "app.message.followUp": "Queue a follow-up message",
    "app.message.dequeue": "Move queued messages back into the editor",
    "app.interrupt": "Abort the run / close a dialog; twice on an empty editor: /tree",
    "app.clear": "Clear the editor; twice quickly: quit",
    "app.exit": "Quit (on an empty editor)",
    "app.suspend": "Suspend to the background",
    "app.editor.external": "Edit the message in the externalEditor setting / $VISUAL / $EDITOR",
    "app.clipboard.pasteImage": "Attach the image on the clipboard",
    "app.model.select": "Choose a model",
    "app.model.cycleForward": "Next model",
    "app.model.cycleBackward": "Previous model",
    "app.thinking.cycle": "Next thinking level",
    "app.tools.expand": "Expand or collapse tool output",
    "app.thinking.toggle": "Show or hide thinking",
    "app.session.new": "New session (/new)",
    "app.session.tree": "Session tree (/tree)",
    "app.session.fork": "Fork from an earlier message (/fork)",
    "app.session.resume": "Resume another session (/resume)",
    "tui.editor.historyPrevious": "The previous message sent (wherever the cursor is)",
    "tui.editor.historyNext": "The next message sent (wherever the cursor is)",
    "tui.altScreen.pageUp": "Fullscreen: scroll the transcript up a page",
    "tui.altScreen.pageDown": "Fullscreen: scroll the transcript down a page",
    "tui.altScreen.halfPageUp": "Fullscreen: scroll the transcript up half a page",
    "tui.altScreen.halfPageDown": "Fullscreen: scroll the transcript down half a page",
    "tui.altScreen.lineUp": "Fullscreen: scroll the transcript up a line",
    "tui.altScreen.lineDown": "Fullscreen: scroll the transcript down a line",
    "tui.altScreen.previousPrompt": "Fullscreen: jump to the previous message you sent",
    "tui.altScreen.nextPrompt": "Fullscreen: jump to the next message you sent",
    "tui.altScreen.search": "Fullscreen: search the transcript",
    "tui.altScreen.top": "Fullscreen: the start of the transcript",
    "tui.altScreen.bottom": "Fullscreen: the end of the transcript, following new output",
    "app.message.copy": "Fullscreen: copy the selection (with fullscreenCopyOnSelect off)",
}
"""What ``/hotkeys`` lists (the editing keys are summed up after these)."""

_NAMED: Final[Mapping[str, str]] = {
    "escape": "escape", "esc": "escape", "enter": "enter", "return": "enter", "tab": "tab",
    "space": "space", "backspace": "backspace", "delete": "delete", "insert": "insert",
    "home": "home", "end": "end", "pageup": "pageup", "pagedown": "pagedown",
    "up": "up", "down": "down", "left": "left", "right": "right",
}  # fmt: skip
_ARROWS: Final = ("up", "down", "left", "right", "home", "end")
CTRL_SHIFT_LETTERS: Final[Mapping[str, str]] = {"f": "f23", "g": "f22"}
"""Ctrl+Shift+F and Ctrl+Shift+G (pi's transcript search keys): ``keyboard`` reads them, from
terminals that report them, as these spare function keys; no other Ctrl+Shift+letter is told apart."""
CTRL_BACKSPACE: Final = "f21"
"""Ctrl+Backspace, from terminals that tell it from Backspace (the kitty protocol, modifyOtherKeys),
arrives as this spare function key; it deletes a word as Alt+Backspace does unless a picker takes it
(pi's ``app.session.deleteNoninvasive``). A legacy terminal's Ctrl+Backspace is Backspace's byte."""
SHIFT_ENTER: Final = "f24"
"""Shift+Enter arrives as F24: ``register_enter_sequences`` maps the sequences terminals that tell
it from Enter send (CSI 13;2u, CSI 27;2;13~) to that otherwise unused key."""


def register_enter_sequences() -> None:
    """Teach prompt_toolkit's input parser the modified-Enter sequences (once per process):
    Shift+Enter as F24, and Alt+Enter in the kitty / xterm modifyOtherKeys forms as the Esc, Enter
    pair it is in every other terminal (else their tail, ``[13;3u``, lands in the editor)."""
    from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
    from prompt_toolkit.keys import Keys

    for sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
        ANSI_SEQUENCES[sequence] = Keys.F24
    for sequence in ("\x1b[13;3u", "\x1b[27;3;13~"):
        ANSI_SEQUENCES[sequence] = (Keys.Escape, Keys.ControlM)
    # prompt_toolkit's table has these two swapped; xterm's Ctrl+Shift+Up is CSI 1;6A.
    ANSI_SEQUENCES["\x1b[1;6A"] = Keys.ControlShiftUp
    ANSI_SEQUENCES["\x1b[1;6B"] = Keys.ControlShiftDown


def to_prompt_toolkit_keys(key: str) -> KeySequence | None:
    """``"alt+enter"`` → ``("escape", "enter")``; ``None`` when the terminal cannot send it."""
    parts = [p.strip().lower() for p in key.split("+") if p.strip()]
    if not parts:
        return None
    base = parts[-1]
    mods = set(parts[:-1])
    if not mods <= {"ctrl", "alt", "shift"}:
        return None
    name = _NAMED.get(base, base if len(base) == 1 or (base.startswith("f") and base[1:].isdigit()) else "")
    if not name:
        return None
    ctrl, alt, shift = "ctrl" in mods, "alt" in mods, "shift" in mods
    if name == "enter" and shift and not ctrl:
        main = SHIFT_ENTER
    elif ctrl and shift:
        if name in CTRL_SHIFT_LETTERS:
            main = CTRL_SHIFT_LETTERS[name]
        elif name in _ARROWS:
            main = f"c-s-{name}"
        else:
            return None
    elif ctrl:
        if name == "backspace":
            main = CTRL_BACKSPACE
        elif name == "-":
            main = "c-_"  # what Ctrl+- sends in most terminals
        elif len(name) == 1 or name in _ARROWS or name in ("delete", "pageup", "pagedown", "home", "end"):
            main = f"c-{name}"
        else:
            return None
    elif shift:
        if name == "tab":
            main = "s-tab"
        elif name in _ARROWS or name in ("delete", "pageup", "pagedown"):
            main = f"s-{name}"
        elif len(name) == 1:
            main = name.upper()
        else:
            return None
    else:
        main = name
    return ("escape", main) if alt else (main,)


class Keymap(Struct, dict=True):
    """The keys of each action, after the user's overrides."""

    bindings: dict[str, list[KeySequence]]
    labels: dict[str, list[str]]
    warnings: list[str] = field(default_factory=list)
    overridden: frozenset[str] = frozenset()
    """The actions ``keybindings.json`` set (the editing ones tau binds only then)."""

    def keys(self, action: str) -> list[KeySequence]:
        return self.bindings.get(_known(action), [])

    def describe(self, action: str) -> str:
        """The keys of ``action`` as the user writes them (``ctrl+o``), or ``""``."""
        return ", ".join(self.labels.get(_known(action), []))

    def released_editor_keys(self) -> list[KeySequence]:
        """Default keys of rebound editing actions that no action has now: pi lets them do
        nothing, where prompt_toolkit's Emacs mode would still run the old command."""
        taken = {
            keys
            for action, sequences in self.bindings.items()
            if not action.startswith(("app.tree.", "app.models.", "app.session.toggle"))  # pickers' keys
            for keys in sequences
        }
        released: list[KeySequence] = []
        for action in sorted(self.overridden & EDITOR_COMMANDS.keys()):
            for key in DEFAULT_BINDINGS[action]:
                sequence = to_prompt_toolkit_keys(key)
                if sequence is not None and sequence not in taken and sequence not in released:
                    released.append(sequence)
        return released


def _known(action: str) -> str:
    """``action``, when it is one of tau's: a misspelt id in tau's code is a bug to hear of, not
    an action that silently has no keys."""
    if action not in DEFAULT_BINDINGS:
        raise KeyError(f"no keymap action {action!r}")
    return action


def _read_overrides(path: str, warnings: list[str]) -> dict[str, tuple[str, ...]]:
    """The actions ``path`` binds, by pi 1.6 id; what cannot be used is a warning."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        warnings.append(f"{path} is not valid ({exc}); using the default keys")
        return {}
    if not isinstance(data, dict):
        warnings.append(
            f"{path} is not valid (expected an object of action → key(s)); using the default keys"
        )
        return {}
    overrides: dict[str, tuple[str, ...]] = {}
    for name, value in data.items():
        if name == "$schema":
            continue
        action = LEGACY_NAMES.get(name, name)
        if action != name and action in data:
            continue  # pi 1.6's own id is in the file too and wins
        if action in UNSUPPORTED:
            warnings.append(f"keybindings.json: {name}: tau has no such action; ignored")
            continue
        if action not in DEFAULT_BINDINGS:
            shown = name if name.isprintable() else repr(name)  # a warning stays one line
            warnings.append(f"keybindings.json: {shown}: not a keybinding id tau knows; ignored")
            continue
        keys = (value,) if isinstance(value, str) else value
        if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
            warnings.append(f"keybindings.json: {name}: expected a key or a list of keys")
            continue
        overrides[action] = tuple(keys)
    return overrides


def load_keymap(agent_dir: str | None) -> Keymap:
    """The default bindings with ``<agent dir>/keybindings.json`` laid over them."""
    warnings: list[str] = []
    path = os.path.join(agent_dir, "keybindings.json") if agent_dir else None
    overrides = _read_overrides(path, warnings) if path and os.path.isfile(path) else {}
    chosen = {**DEFAULT_BINDINGS, **overrides}
    bindings: dict[str, list[KeySequence]] = {}
    labels: dict[str, list[str]] = {}
    for action, keys in chosen.items():
        for key in keys:
            sequence = to_prompt_toolkit_keys(key)
            if sequence is None:
                if action not in overrides:
                    continue  # a default this terminal layer cannot see: not the user's doing
                warnings.append(f"keybindings.json: {action}: this terminal cannot send {key!r}")
                continue
            bindings.setdefault(action, []).append(sequence)
            labels.setdefault(action, []).append(key)
    return Keymap(bindings, labels, warnings, frozenset(overrides))

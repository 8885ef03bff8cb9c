"""Application key bindings by action id, with the user's overrides from ``keybindings.json``.

The file is pi's: ``{"<action>": "<key>" | ["<key>", ...]}`` in ``<agent dir>/keybindings.json``,
keys written ``ctrl+x``, ``alt+enter``, ``shift+tab``. Only the actions below are looked up here;
text editing inside the editor (movement, kill and yank, undo) is prompt_toolkit's Emacs mode.
A key this terminal layer cannot tell apart (``ctrl+shift+p`` in most terminals) is reported
once as a warning and skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Final

from msgspec import Struct, field

__all__ = ["DEFAULT_BINDINGS", "Keymap", "load_keymap", "register_enter_sequences", "to_prompt_toolkit_keys"]

KeySequence = tuple[str, ...]

DEFAULT_BINDINGS: Final[Mapping[str, tuple[str, ...]]] = {
    "submit": ("enter",),
    "newLine": ("shift+enter", "ctrl+j"),
    "followUp": ("alt+enter",),
    "dequeue": ("alt+up",),
    "interrupt": ("escape",),
    "clear": ("ctrl+c",),
    "exit": ("ctrl+d",),
    "suspend": ("ctrl+z",),
    "externalEditor": ("ctrl+g",),
    "pasteImage": ("ctrl+v",),
    "selectModel": ("ctrl+l",),
    "cycleModelForward": ("ctrl+p",),
    "cycleModelBackward": ("shift+ctrl+p",),
    "cycleThinkingLevel": ("shift+tab",),
    "expandTools": ("ctrl+o",),
    "toggleThinking": ("ctrl+t",),
    "newSession": (),
    "tree": (),
    "fork": (),
    "resume": (),
    # The fullscreen transcript's (pi's ids and defaults; search keeps Ctrl+Shift+F, which this
    # terminal layer cannot bind by name).
    "tui.altScreen.pageUp": ("pageup",),
    "tui.altScreen.pageDown": ("pagedown",),
    "tui.altScreen.halfPageUp": (),
    "tui.altScreen.halfPageDown": (),
    "tui.altScreen.lineUp": (),
    "tui.altScreen.lineDown": (),
    "tui.altScreen.previousPrompt": ("ctrl+shift+up",),
    "tui.altScreen.nextPrompt": ("ctrl+shift+down",),
    "tui.altScreen.top": ("ctrl+home",),
    "tui.altScreen.bottom": ("ctrl+end",),
}

DESCRIPTIONS: Final[Mapping[str, str]] = {
    "submit": "Send the message (queues a steering message while the agent works)",
    "newLine": "Insert a new line (also: end a line with \\ and press Enter)",
    "followUp": "Queue a follow-up message",
    "dequeue": "Move queued messages back into the editor",
    "interrupt": "Abort the run / close a dialog; twice on an empty editor: /tree",
    "clear": "Clear the editor; twice quickly: quit",
    "exit": "Quit (on an empty editor)",
    "suspend": "Suspend to the background",
    "externalEditor": "Edit the message in the externalEditor setting / $VISUAL / $EDITOR",
    "pasteImage": "Attach the image on the clipboard",
    "selectModel": "Choose a model",
    "cycleModelForward": "Next model",
    "cycleModelBackward": "Previous model",
    "cycleThinkingLevel": "Next thinking level",
    "expandTools": "Expand or collapse tool output",
    "toggleThinking": "Show or hide thinking",
    "newSession": "New session (/new)",
    "tree": "Session tree (/tree)",
    "fork": "Fork from an earlier message (/fork)",
    "resume": "Resume another session (/resume)",
    "tui.altScreen.pageUp": "Fullscreen: scroll the transcript up a page",
    "tui.altScreen.pageDown": "Fullscreen: scroll the transcript down a page",
    "tui.altScreen.halfPageUp": "Fullscreen: scroll the transcript up half a page",
    "tui.altScreen.halfPageDown": "Fullscreen: scroll the transcript down half a page",
    "tui.altScreen.lineUp": "Fullscreen: scroll the transcript up a line",
    "tui.altScreen.lineDown": "Fullscreen: scroll the transcript down a line",
    "tui.altScreen.previousPrompt": "Fullscreen: jump to the previous message you sent",
    "tui.altScreen.nextPrompt": "Fullscreen: jump to the next message you sent",
    "tui.altScreen.top": "Fullscreen: the start of the transcript",
    "tui.altScreen.bottom": "Fullscreen: the end of the transcript, following new output",
}

_NAMED: Final[Mapping[str, str]] = {
    "escape": "escape", "esc": "escape", "enter": "enter", "return": "enter", "tab": "tab",
    "space": "space", "backspace": "backspace", "delete": "delete", "insert": "insert",
    "home": "home", "end": "end", "pageup": "pageup", "pagedown": "pagedown",
    "up": "up", "down": "down", "left": "left", "right": "right",
}  # fmt: skip
_ARROWS: Final = ("up", "down", "left", "right", "home", "end")
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
        if name not in _ARROWS:
            return None
        main = f"c-s-{name}"
    elif ctrl:
        if name == "-":
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

    def keys(self, action: str) -> list[KeySequence]:
        return self.bindings.get(action, [])

    def describe(self, action: str) -> str:
        """The keys of ``action`` as the user writes them (``ctrl+o``), or ``""``."""
        return ", ".join(self.labels.get(action, []))


def load_keymap(agent_dir: str | None) -> Keymap:
    """The default bindings with ``<agent dir>/keybindings.json`` laid over them."""
    chosen: dict[str, tuple[str, ...]] = dict(DEFAULT_BINDINGS)
    warnings: list[str] = []
    path = os.path.join(agent_dir, "keybindings.json") if agent_dir else None
    if path and os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
            if not isinstance(data, dict):
                raise ValueError("expected an object of action → key(s)")
            for action, value in data.items():
                keys = (value,) if isinstance(value, str) else value
                if action not in DEFAULT_BINDINGS:
                    continue  # an editor or picker action of pi's that prompt_toolkit handles itself
                if not isinstance(keys, list | tuple) or not all(isinstance(k, str) for k in keys):
                    warnings.append(f"{path}: {action}: expected a key or a list of keys")
                    continue
                chosen[action] = tuple(keys)
        except (OSError, ValueError) as exc:
            warnings.append(f"{path} is not valid ({exc}); using the default keys")
    bindings: dict[str, list[KeySequence]] = {}
    labels: dict[str, list[str]] = {}
    for action, keys in chosen.items():
        for key in keys:
            sequence = to_prompt_toolkit_keys(key)
            if sequence is None:
                if action in DEFAULT_BINDINGS and key in DEFAULT_BINDINGS[action]:
                    continue  # a default this terminal layer cannot see: not the user's doing
                warnings.append(f"keybindings.json: {action}: this terminal cannot send {key!r}")
                continue
            bindings.setdefault(action, []).append(sequence)
            labels.setdefault(action, []).append(key)
    return Keymap(bindings, labels, warnings)

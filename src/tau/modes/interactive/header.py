"""The lines at the top of the chat: version, the most useful keys, what was loaded.

Drawn with plain SGR codes (no rich), so the first screen needs nothing heavy imported.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from tau import __version__
from tau.modes.interactive.keymap import DESCRIPTIONS, Keymap
from tau.modes.interactive.render.format import truncate_to_width, visible_width

if TYPE_CHECKING:
    from tau.runtime.agent_session import AgentSession

__all__ = ["HeaderHost", "hotkey_lines", "startup_header"]


class HeaderHost(Protocol):
    """What the header shows: the session's resources, the keys, and the view's width and state."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def keymap(self) -> Keymap: ...

    @property
    def verbose(self) -> bool: ...

    @property
    def tools_expanded(self) -> bool: ...

    @property
    def width(self) -> int: ...


_DIM = "\x1b[2m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"
_KEY_COLUMN = 23
"""Where a key's description starts in the full help."""


def startup_header(mode: HeaderHost) -> str:
    """The version and one line of the main keys, whole hints only, as many as the width takes;
    with tool output expanded (Ctrl+O) every key instead, as ``/hotkeys`` lists them. Then what was
    loaded. ``quietStartup`` ``true`` leaves all of it out (empty text), ``"header"`` keeps the
    version and keys only; ``--verbose`` shows everything whatever the setting says (as pi)."""
    quiet = False if mode.verbose else mode.session.services.settings_manager.quiet_startup
    if quiet is True:
        return ""
    keys = mode.keymap
    more = keys.describe("app.tools.expand")
    lines = [f"{_BOLD}tau{_RESET} {_DIM}v{__version__}{_RESET}"]
    if mode.tools_expanded:
        # Descriptions go on under their column while that leaves room for a few words.
        indent = _KEY_COLUMN if mode.width - _KEY_COLUMN >= 30 else 0
        lines += [
            _DIM + row + _RESET
            for line in hotkey_lines(mode.keymap)
            for row in _wrap(line, mode.width, indent)
        ]
    else:
        hints = [
            f"{keys.describe('app.interrupt')} interrupt",
            f"{keys.describe('app.clear')} clear",
            f"{keys.describe('app.exit')} quit",
            "/ commands",
            "! bash",
            "@ files",
            f"{keys.describe('tui.input.newLine').split(',')[-1].strip()} new line",
        ]
        lines.append(
            _DIM + _whole_hints(hints, f"{more} more" if more else "/hotkeys more", mode.width) + _RESET
        )
        if more:
            lines += [
                _DIM + row + _RESET for row in _wrap(f"Press {more} to show full startup help.", mode.width)
            ]
    if quiet == "header":
        return "\n".join(lines)
    session = mode.session
    loader = session.services.resource_loader
    home = os.path.expanduser("~")
    loaded: list[tuple[str, list[str]]] = [
        ("context", [_short(f.path, home) for f in loader.context_files]),
        ("skills", [s.name for s in loader.skills]),
        ("prompts", ["/" + t.name for t in loader.prompt_templates]),
    ]
    runner = session.extension_runner
    if runner is not None:
        # pi's built-ins (mcp, codemode, llama.cpp) are part of tau, not extensions the user added.
        loaded.append(
            ("extensions", [e.name for e in runner.extensions if not e.path.startswith("<builtin:")])
        )
    for label, names in loaded:
        if names:
            lines += [_DIM + row + _RESET for row in _wrap(f"[{label}] " + ", ".join(names), mode.width)]
    return "\n".join(lines)


def _short(path: str, home: str) -> str:
    return "~" + path[len(home) :] if home and path.startswith(home + os.sep) else path


def hotkey_lines(keymap: Keymap) -> list[str]:
    """Every key and what it does: the actions of the keymap, then the editor's own."""
    pad = _KEY_COLUMN - 1
    lines = [
        f"{keymap.describe(action) or '(unbound)':<{pad}} {text}" for action, text in DESCRIPTIONS.items()
    ]
    lines += [
        f"{'@':<{pad}} Reference a project file (fuzzy)",
        f"{'tab':<{pad}} Complete a path",
        f"{'!cmd / !!cmd':<{pad}} Run a shell command (!! keeps the output from the model)",
        f"{'ctrl+a/e/k/u/w/y':<{pad}} Emacs-style editing; ctrl+_ undo",
    ]
    return lines


def _whole_hints(hints: list[str], last: str, width: int) -> str:
    """As many of ``hints`` as fit before ``last`` in ``width`` cells; none is cut in half."""
    kept: list[str] = []
    for hint in hints:
        if visible_width(" · ".join([*kept, hint, last])) > width:
            break
        kept.append(hint)
    return _fit(" · ".join([*kept, last]), width)


def _wrap(text: str, width: int, indent: int = 0) -> list[str]:
    """``text`` in rows of at most ``width`` cells, broken between words (as pi's header text
    wraps), the rows after the first ``indent`` cells in; a word wider than a row is cut."""
    rows: list[str] = []
    row = ""
    for word in text.split(" "):
        if row.strip() and visible_width(f"{row} {word}") > width:
            rows.append(row)
            row = " " * indent + word
        else:
            row = f"{row} {word}" if row else word
    return [_fit(row, width) for row in [*rows, row]]


def _fit(text: str, width: int) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return truncate_to_width(text, width)

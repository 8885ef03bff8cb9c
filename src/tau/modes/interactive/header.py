"""The lines at the top of the chat: version, the most useful keys, what was loaded.

Drawn with plain SGR codes (no rich), so the first screen needs nothing heavy imported.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tau import __version__
from tau.modes.interactive.render.format import truncate_to_width

if TYPE_CHECKING:
    from tau.modes.interactive.app import InteractiveMode

__all__ = ["startup_header"]

_DIM = "\x1b[2m"
_BOLD = "\x1b[1m"
_RESET = "\x1b[0m"


def startup_header(mode: InteractiveMode) -> str:
    keys = mode.keymap
    hints = [
        f"{keys.describe('interrupt')} interrupt",
        f"{keys.describe('clear')} clear",
        f"{keys.describe('exit')} quit",
        "/ commands",
        "! bash",
        "@ files",
        f"{keys.describe('expandTools')} tools",
        f"{keys.describe('toggleThinking')} thinking",
        f"{keys.describe('newLine').split(',')[-1].strip()} new line",
    ]
    lines = [
        f"{_BOLD}tau{_RESET} {_DIM}v{__version__}{_RESET}",
        _DIM + _fit(" · ".join(hints), mode.width) + _RESET,
    ]
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
        loaded.append(("extensions", [e.name for e in runner.extensions]))
    for label, names in loaded:
        if names:
            lines.append(_DIM + _fit(f"[{label}] " + ", ".join(names), mode.width) + _RESET)
    return "\n".join(lines)


def _short(path: str, home: str) -> str:
    return "~" + path[len(home) :] if home and path.startswith(home + os.sep) else path


def _fit(text: str, width: int) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return truncate_to_width(text, width)

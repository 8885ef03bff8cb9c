"""Extensions tau finds but cannot run: pi's TypeScript and JavaScript ones.

pi loads ``*.ts``/``*.js`` files and folders with an ``index.ts``/``index.js`` from the same places
tau looks for Python extensions. tau runs Python only: such an extension is named in one line
saying so, never dropped in silence.
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["SCRIPT_SUFFIXES", "not_loadable_reason", "script_language"]

_TYPESCRIPT: Final = (".ts", ".mts", ".cts")
_JAVASCRIPT: Final = (".js", ".mjs", ".cjs")
SCRIPT_SUFFIXES: Final = (*_TYPESCRIPT, *_JAVASCRIPT)


def script_language(path: str) -> str | None:
    """``"TypeScript"`` or ``"JavaScript"`` when ``path`` is an extension of pi's (a script file,
    or a folder whose entry point is ``index.ts``/``index.js`` and that is no Python package)."""
    if os.path.isdir(path):
        if os.path.isfile(os.path.join(path, "__init__.py")):
            return None
        for name in ("index.ts", "index.js"):
            if os.path.isfile(os.path.join(path, name)):
                return script_language(os.path.join(path, name))
        return None
    if path.endswith(_TYPESCRIPT):
        return "TypeScript"
    if path.endswith(_JAVASCRIPT):
        return "JavaScript"
    return None


def not_loadable_reason(language: str) -> str:
    """Why an extension of ``language`` is skipped, and where to look instead (one line)."""
    return (
        f"not loadable ({language}): tau runs Python extensions only; "
        "see tau's docs/extensions.md to write it as one"
    )

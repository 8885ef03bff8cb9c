"""Errors in configuration files, and reading JSON so that every error names file, line and column.

A ``ConfigError`` reads as one line, like a compiler message: ``/home/u/.tau/agent/settings.json:3:5:
Expecting ',' delimiter``. Callers show it and carry on with defaults; nothing here exits.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from tau.errors import TauError

__all__ = ["MAX_DEPTH", "ConfigError", "read_json_file", "strip_json_comments"]

MAX_DEPTH = 100
"""How deeply a configuration file may nest arrays and objects."""


class ConfigError(TauError):
    """A configuration file tau cannot use: which file, where in it (when known), and what is wrong."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        problem: str,
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.problem = problem
        self.line = line
        self.column = column
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The one-line description: ``file[:line[:column]]: problem``."""
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.problem}"


def read_json_file(path: Path, *, allow_comments: bool = False) -> Any:
    """The parsed content of ``path``; ``None`` when the file is missing, empty or blank.

    ``allow_comments`` accepts ``//`` and ``/* */`` comments and trailing commas (models.json).
    Raises ``ConfigError`` for unreadable files and invalid JSON, with the position of the problem.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(path, f"cannot read file: {error}") from error
    if not text.strip():
        return None
    if allow_comments:
        text = strip_json_comments(text)
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except _NotANumber as error:
        raise ConfigError(path, f"invalid JSON: {error}") from None
    except json.JSONDecodeError as error:
        raise ConfigError(
            path, f"invalid JSON: {error.msg}", line=error.lineno, column=error.colno
        ) from error
    except RecursionError:  # the parser recurses once per level
        too_deep = True
    else:
        # Copying, merging and validating recurse too; no real configuration nests this deep.
        too_deep = _depth_exceeds(data, MAX_DEPTH)
    if too_deep:
        raise ConfigError(path, f"arrays and objects nested more than {MAX_DEPTH} levels deep")
    return data


class _NotANumber(TauError, ValueError):
    """A number tau cannot use as one: ``NaN``, ``Infinity`` (not JSON, but Python would accept them)
    or a literal too large for a float (``1e400``)."""


def _refuse_constant(name: str) -> float:
    raise _NotANumber(f"{name} is not a JSON number")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _NotANumber(f"the number {literal[:20]} is too large")
    return value


def _depth_exceeds(data: Any, limit: int) -> bool:
    """Whether arrays and objects in ``data`` nest deeper than ``limit``; iterative, so any depth is safe."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def strip_json_comments(text: str) -> str:
    """``text`` with comments and trailing commas blanked out; every other character keeps its position.

    Comments become spaces (newlines kept), so line and column numbers in a later JSON error still
    point into the user's file.
    """
    out = list(text)
    i = 0
    length = len(text)
    pending_comma: int | None = None
    previous = ""  # the last significant character before the current one
    while i < length:
        char = text[i]
        if char == '"':
            pending_comma = None
            previous = char
            i = _skip_string(text, i)
            continue
        if char == "/" and i + 1 < length and text[i + 1] in "/*":
            end = _comment_end(text, i)
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        if char in "}]" and pending_comma is not None:
            out[pending_comma] = " "
        if not char.isspace():
            # Only a comma after a value can be trailing; "{," or ",," stay for json to reject.
            pending_comma = i if char == "," and previous not in ("", "{", "[", ",") else None
            previous = char
        i += 1
    return "".join(out)


def _skip_string(text: str, start: int) -> int:
    """The index just past the JSON string opening at ``start`` (or the end of text if unterminated)."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        if text[i] == "\n":
            # Unterminated string: leave the rest for json to report.
            return i
        i += 1
    return len(text)


def _comment_end(text: str, start: int) -> int:
    if text[start + 1] == "/":
        newline = text.find("\n", start)
        return len(text) if newline == -1 else newline
    close = text.find("*/", start + 2)
    return len(text) if close == -1 else close + 2

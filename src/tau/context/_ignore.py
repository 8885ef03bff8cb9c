"""The subset of ``.gitignore`` rules skill discovery honours (also read from ``.ignore``/``.fdignore``).

Each folder's ignore files add rules scoped to that folder. A pattern without an inner ``/`` matches
a name at any depth below it; one with a leading or inner ``/`` is anchored to the folder. A trailing
``/`` matches folders only and ``!`` re-includes. The last matching rule decides.
"""

from __future__ import annotations

import os
import re

from msgspec import Struct

from tau.tools.glob_match import glob_to_regex

IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


class _Rule(Struct, frozen=True):
    base: str
    regex: re.Pattern[str]
    negated: bool
    dirs_only: bool


def _parse_rule(line: str, base: str) -> _Rule | None:
    line = line.rstrip()
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\"):  # a backslash escapes a leading "#" or "!"
        line = line[1:]
    dirs_only = line.endswith("/")
    line = line.rstrip("/")
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    pattern = line if anchored else "**/" + line
    return _Rule(base, re.compile(glob_to_regex(pattern)), negated, dirs_only)


class IgnoreRules:
    """The rules in force in one folder: its parents' plus its own ignore files."""

    def __init__(self, rules: tuple[_Rule, ...] = ()) -> None:
        self._rules = rules

    def enter(self, folder: str) -> IgnoreRules:
        """The rules for ``folder``: these plus those of the ignore files it holds."""
        added: list[_Rule] = []
        for name in IGNORE_FILE_NAMES:
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            added.extend(r for r in (_parse_rule(line, folder) for line in lines) if r is not None)
        return IgnoreRules(self._rules + tuple(added)) if added else self

    def is_ignored(self, path: str, *, is_dir: bool) -> bool:
        ignored = False
        for rule in self._rules:
            if rule.dirs_only and not is_dir:
                continue
            relative = os.path.relpath(path, rule.base).replace(os.sep, "/")
            if relative.startswith("../"):
                continue
            if rule.regex.fullmatch(relative):
                ignored = not rule.negated
        return ignored

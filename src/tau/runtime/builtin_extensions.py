"""pi 1.6's built-in extensions, by name, as switches for tau's equivalents.

pi ships ``mcp``, ``codemode``, ``tool-search`` and ``llama.cpp`` as extensions named
``builtin:<name>``: they load by default, ``"-builtin:<name>"`` in the ``extensions`` setting
switches one off (a project's ``+``/``-``/``!`` entry over the user's), ``--no-extensions`` switches
them all off and ``-e builtin:<name>`` on again. tau's MCP support holds the first three (``codemode``
and ``tool_search`` are tools of it); ``llama.cpp`` it does not have, and naming that (or a name
neither knows) to turn on is one line saying so.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Final

__all__ = [
    "BUILTIN_PREFIX",
    "TAU_BUILTINS",
    "builtin_enabled",
    "builtin_entry_problems",
    "builtin_name",
    "missing_builtin",
    "without_builtin_entries",
]

BUILTIN_PREFIX: Final = "builtin:"
TAU_BUILTINS: Final = ("mcp", "codemode", "tool-search", "llama.cpp")
_PI_ONLY: Final[dict[str, str]] = {}


def builtin_name(entry: str) -> str | None:
    """``"builtin:mcp"`` → ``"mcp"``; ``None`` for anything else."""
    text = entry.strip()
    return text[len(BUILTIN_PREFIX) :] if text.startswith(BUILTIN_PREFIX) else None


def missing_builtin(name: str) -> str | None:
    """Why tau cannot turn built-in ``name`` on (one line), or ``None`` when it can."""
    if name in TAU_BUILTINS:
        return None
    have = f"tau's are {', '.join(TAU_BUILTINS[:-1])} and {TAU_BUILTINS[-1]}"
    if name in _PI_ONLY:
        return f"tau has no built-in extension {name} ({_PI_ONLY[name]}); {have}"
    return f"no built-in extension {name!r}; {have}"


def _target(entry: str) -> tuple[str, str]:
    """An ``extensions`` entry split into its switch (``+``, ``-``, ``!`` or ``""``) and its path."""
    text = entry.strip()
    if text[:1] in ("+", "-", "!"):
        return text[0], text[1:].strip()
    return "", text


def _is_builtin_entry(entry: str) -> bool:
    return _target(entry)[1].startswith(BUILTIN_PREFIX)


def without_builtin_entries(entries: Iterable[str]) -> list[str]:
    """The ``extensions`` entries that name files (those about built-ins are this module's)."""
    return [e for e in entries if not _is_builtin_entry(e)]


def _decision(name: str, entries: Sequence[str]) -> bool | None:
    """What ``entries`` say about built-in ``name`` (the last entry to name it wins), if anything."""
    path = BUILTIN_PREFIX + name
    decided: bool | None = None
    for entry in entries:
        switch, target = _target(entry)
        if not target.startswith(BUILTIN_PREFIX):
            continue
        if switch == "!" and fnmatch.fnmatchcase(path, target):
            decided = False
        elif target == path and switch in ("+", "-", ""):
            decided = switch != "-"
    return decided


def builtin_enabled(
    name: str, project: Sequence[str], user: Sequence[str], *, explicit: Iterable[str], no_extensions: bool
) -> bool:
    """Whether built-in ``name`` is on: ``-e builtin:<name>`` (``explicit``) always; else not with
    ``--no-extensions``; else the project's entries decide, then the user's, else on."""
    if name in explicit:
        return True
    if no_extensions:
        return False
    for entries in (project, user):
        decided = _decision(name, entries)
        if decided is not None:
            return decided
    return True


def builtin_entry_problems(entries: Iterable[str]) -> list[str]:
    """One line per settings entry that turns on a built-in tau lacks (switching one off is no
    problem: it is off)."""
    problems: list[str] = []
    for entry in entries:
        switch, target = _target(entry)
        name = builtin_name(target)
        if name is not None and switch in ("", "+") and (why := missing_builtin(name)) is not None:
            problems.append(f'"extensions" entry {entry!r}: {why}')
    return problems

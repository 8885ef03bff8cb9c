"""Regular expressions compiled on first use.

    _WORD = lazy_pattern(r"\\w+")      # at module level, instead of re.compile
    _WORD.search(text)                 # compiles here, the first time

Compiling a pattern costs 0.1-0.5 ms, and most of the patterns the modules of a run define are
never used in it (terminal output cleaning, tool-argument repair, template placeholders): at module
level, compiled at once, they were 2-3 ms of every start. After the first use the pattern's own
methods sit on the object, so a call costs what it costs on a compiled pattern.

Kept free of any tau import: modules of every layer use it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["lazy_pattern"]

# What callers use; each is copied from the compiled pattern onto the object at first use.
_ATTRIBUTES = (
    "search",
    "match",
    "fullmatch",
    "sub",
    "subn",
    "split",
    "findall",
    "finditer",
    "pattern",
    "flags",
    "groups",
    "groupindex",
)


class _LazyPattern:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Only reached while an attribute is missing: before the first use (or for a name no
        # pattern has, which raises as it would on the pattern).
        compiled = re.compile(*self._source)
        for attribute in _ATTRIBUTES:
            setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source[0]!r}, {self._source[1]})"


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done the first time the result is used. It is not a
    ``re.Pattern`` (``isinstance`` says no; ``re.sub(p, ...)`` refuses it): call its methods."""
    return _LazyPattern(pattern, int(flags))  # type: ignore[return-value]

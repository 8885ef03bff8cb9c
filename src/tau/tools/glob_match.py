"""Glob patterns as fd understands them: ``*`` and ``?`` stay within one path segment, ``**`` spans
segments, ``[...]`` classes, ``{a,b}`` alternatives, ``\\`` escapes; smart case (case-insensitive
unless the pattern has an upper-case letter)."""

from __future__ import annotations

import re


def _class_end(pattern: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``, or -1."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "]":
            return i
        i += 1
    return -1


def glob_to_regex(pattern: str) -> str:
    """A regular expression (for ``fullmatch``) equivalent to ``pattern``."""
    out: list[str] = []
    depth = 0
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
                if pattern.startswith("**/", i):
                    out.append("(?:[^/]*/)*")
                    i += 3
                    continue
                if i + 2 == n:
                    out.append(".*")
                    i += 2
                    continue
            while i + 1 < n and pattern[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(pattern, i)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    out.append(")" * depth)
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """The compiled matcher of ``pattern``, smart-case like fd."""
    flags = 0 if any(ch.isupper() for ch in pattern) else re.IGNORECASE
    return re.compile(glob_to_regex(pattern), flags | re.DOTALL)

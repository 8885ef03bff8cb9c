"""Best-effort parsing of tool-call argument JSON while it is still streaming in."""

from __future__ import annotations

import json
import re
from typing import Any

import jiter

# A string literal, possibly unterminated at the end of the text.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.DOTALL)
# Inside a string: a valid escape (kept), a stray backslash, or a raw control character.
_FIXABLE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])|\\|[\x00-\x1f]')
# Something to repair: a raw control character, or a backslash that does not start a valid escape.
# Every backslash is checked, even the second of a ``\\\\`` pair, so this can find more than there is
# (then the repair changes nothing) but never less. Most text, escaped newlines and all, has none.
_NEEDS_REPAIR = re.compile(r'[\x00-\x1f]|\\(?:[^u"\\/bfnrt]|u(?![0-9a-fA-F]{4})|\Z)')
_SHORT_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _fix(match: re.Match[str]) -> str:
    token = match.group(0)
    if len(token) > 1:
        return token
    if token == "\\":
        return "\\\\"
    return _SHORT_CONTROL_ESCAPES.get(token) or f"\\u{ord(token):04x}"


def _repair_string(match: re.Match[str]) -> str:
    literal = match.group(0)
    if _NEEDS_REPAIR.search(literal) is None:
        return literal
    return _FIXABLE.sub(_fix, literal)


def repair_json(text: str) -> str:
    """Escape raw control characters and stray backslashes inside the string literals of ``text``."""
    if _NEEDS_REPAIR.search(text) is None:
        return text
    return _STRING.sub(_repair_string, text)


def parse_streaming_json(text: str | None) -> dict[str, Any]:
    """Parse possibly incomplete or slightly malformed JSON into an object; never raises, ``{}`` on failure."""
    if text is None or not text.strip():
        return {}
    result = _parse_strict(text)
    if result is None:
        repaired = repair_json(text)
        if repaired != text:
            result = _parse_strict(repaired)
        if result is None:
            result = _parse_partial(text)
        if result is None and repaired != text:
            result = _parse_partial(repaired)
    return result if isinstance(result, dict) else {}


def parse_complete_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is one complete JSON value (after repair), else ``(False, None)``."""
    result = _parse_strict(text)
    if result is None:
        repaired = repair_json(text)
        if repaired != text:
            result = _parse_strict(repaired)
    if result is None and text.strip() != "null":
        return False, None
    return True, result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"not valid JSON: {name}")


def _parse_strict(text: str) -> Any:
    """Strict JSON (no NaN/Infinity); ``None`` when the text is not a complete document."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except Exception:
        return None


def _parse_partial(text: str) -> Any:
    """Lenient parse of a truncated document: open containers closed, a truncated string kept."""
    try:
        data = text.encode("utf-8", "surrogatepass")
        return jiter.from_json(data, partial_mode="trailing-strings", allow_inf_nan=False)
    except Exception:
        return None

"""Best-effort parsing of tool-call argument JSON while it is still streaming in."""

from __future__ import annotations

import json
from typing import Any

import jiter

# Characters that may follow a backslash in a JSON string ("u" additionally needs four hex digits).
_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_SHORT_CONTROL_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def repair_json(text: str) -> str:
    """Escape raw control characters and stray backslashes inside the string literals of ``text``."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if not in_string:
            out.append(char)
            in_string = char == '"'
        elif char == '"':
            out.append(char)
            in_string = False
        elif char == "\\":
            following = text[i + 1] if i + 1 < n else ""
            if following == "u" and _is_hex4(text[i + 2 : i + 6]):
                out.append(text[i : i + 6])
                i += 6
                continue
            if following and following in _VALID_ESCAPES and following != "u":
                out.append(text[i : i + 2])
                i += 2
                continue
            # A backslash that starts no valid escape stands for itself.
            out.append("\\\\")
        elif char < " ":
            out.append(_SHORT_CONTROL_ESCAPES.get(char) or f"\\u{ord(char):04x}")
        else:
            out.append(char)
        i += 1
    return "".join(out)


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


def _is_hex4(chars: str) -> bool:
    return len(chars) == 4 and all(c in _HEX_DIGITS for c in chars)


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

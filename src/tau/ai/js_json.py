"""``JSON.stringify`` as JavaScript writes it, for text that must match pi's byte for byte.

Python's ``json`` writes ``1.0`` where JavaScript writes ``1`` and ``1e-07`` where it writes
``1e-7``; ``js_json`` writes numbers as ECMAScript's ``Number::toString`` does, keeps non-ASCII
characters, escapes lone surrogates, writes NaN and infinities as ``null``, and with ``indent``
lays values out as ``JSON.stringify(value, null, indent)`` (empty objects and arrays stay ``{}`` and
``[]``). pi sends such text inside request bodies: OpenAI Decisions' state, and the llama.cpp
classifier's prompts.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["js_json", "js_number", "js_values"]

_LONE_SURROGATE = "[\ud800-\udfff]"


def js_json(value: Any, indent: int = 0) -> str:
    """``JSON.stringify(value)`` (``indent`` > 0: ``JSON.stringify(value, null, indent)``)."""
    return _write(value, " " * indent, "\n" if indent > 0 else "")


def js_values(value: Any) -> Any:
    """``value`` with its whole floats as ints, so a JSON encoder writes ``1`` for ``1.0`` as
    JavaScript does (for a value that goes inside a request body rather than as text)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {key: js_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [js_values(item) for item in value]
    return value


def _write(value: Any, step: str, newline: str, depth: int = 0) -> str:
    if value is None or value is True or value is False:
        return "null" if value is None else ("true" if value else "false")
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    inner = newline + step * (depth + 1)
    close = newline + step * depth
    colon = ": " if newline else ":"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{_js_string(str(k))}{colon}{_write(v, step, newline, depth + 1)}" for k, v in value.items()
        ]
        return "{" + inner + ("," + inner).join(items) + close + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [_write(v, step, newline, depth + 1) for v in value]
        return "[" + inner + ("," + inner).join(items) + close + "]"
    return _js_string(str(value))


def _js_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    if not text.isascii() and re.search(_LONE_SURROGATE, encoded):
        # JavaScript escapes unpaired surrogates; paired ones never reach here as separate chars.
        encoded = re.sub(_LONE_SURROGATE, lambda m: f"\\u{ord(m.group()):04x}", encoded)
    return encoded


def js_number(value: float) -> str:
    """ECMAScript ``Number::toString`` for a double: Python's shortest round-trip digits, laid out
    the way JavaScript lays them out (NaN and infinities: ``null``, as in JSON)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    from decimal import Decimal  # imported on the first use: a few ms of every start-up

    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int)
    point = len(digit_tuple) + exponent  # the value is 0.<digits> x 10^point
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    count = len(digits)
    if count <= point <= 21:
        return sign + digits + "0" * (point - count)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    power = point - 1
    mantissa = digits[0] + ("." + digits[1:] if count > 1 else "")
    return f"{sign}{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"

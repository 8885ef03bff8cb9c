"""Text that holds UTF-16 surrogates, made safe to keep, send and show.

A Python ``str`` can hold surrogate code points (U+D800–U+DFFF), which UTF-8 cannot encode: JSON
allows ``"\\ud83d"`` on its own, a provider may send the two halves of an emoji in two stream
events, a command line's undecodable bytes arrive as ``\\udc80``–``\\udcff``. JavaScript strings are
UTF-16, so in pi two halves appended one after the other are the character, and ``JSON.stringify``
writes a lone half as a ``\\uXXXX`` escape. The functions here do the same for tau:

- ``join_split_pair``: two halves that meet at the boundary of two appended pieces become the one
  character (what appending does in JavaScript); ``join_pairs`` does it inside one piece;
- ``well_formed``: text for a reader of plain text (a terminal, print mode's answer): pairs joined,
  every lone half replaced by U+FFFD (JavaScript's ``toWellFormed``);
- ``escape_lone_surrogates``: JSON text whose lone halves are written as ``\\uXXXX`` escapes (what
  ``JSON.stringify`` writes), so the line encodes as UTF-8 and reads back to the same string;
- ``dumps``: compact JSON as ``JSON.stringify`` writes it, non-ASCII kept, lone halves escaped.

Kept free of any tau import: modules of every layer use it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    import re
    from typing import Any

__all__ = ["ascii_json", "dumps", "escape_lone_surrogates", "join_pairs", "join_split_pair", "well_formed"]

_HIGH_FIRST, _HIGH_LAST = "\ud800", "\udbff"
_LOW_FIRST, _LOW_LAST = "\udc00", "\udfff"


def join_split_pair(before: str, piece: str) -> tuple[str, str] | None:
    """When ``before`` ends with a high surrogate and ``piece`` starts with a low one: ``before``
    with its last code point replaced by the whole character, and the rest of ``piece``. ``None``
    otherwise (the common case, decided from one code point of each)."""
    if not piece or not before or not (_LOW_FIRST <= piece[0] <= _LOW_LAST):
        return None
    high = before[-1]
    if not (_HIGH_FIRST <= high <= _HIGH_LAST):
        return None
    character = chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(piece[0]) - 0xDC00))
    return before[:-1] + character, piece[1:]


def join_pairs(text: str) -> str:
    """``text`` with each high surrogate followed by a low one turned into the character; lone
    halves stay (a later piece may complete one)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def well_formed(text: str) -> str:
    """``text`` with surrogate pairs joined and each lone surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def escape_lone_surrogates(json_text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every surrogate code
    point written as a ``\\uXXXX`` escape. Outside strings JSON text is ASCII and inside them every
    escape is whole, so the escape always lands inside a string and reads back as the same code
    point; a pair written as two escapes reads back as the one character."""
    if json_text.isascii():
        return json_text
    try:
        json_text.encode("utf-8")
    except UnicodeEncodeError:
        # backslashreplace writes a surrogate as \udXXX: exactly JSON's escape for it.
        return json_text.encode("utf-8", "backslashreplace").decode("utf-8")
    return json_text


def ascii_json(json_text: str) -> str:
    """JSON text with every non-ASCII code point escaped (UTF-16 units, as ``ensure_ascii`` does),
    for an output whose encoding cannot hold the text itself."""
    if json_text.isascii():
        return json_text
    import re

    return re.sub("[^\x00-\x7f]", _unit_escapes, json_text)


def _unit_escapes(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def dumps(data: Any, **kwargs: Any) -> str:
    """Compact JSON as JavaScript's ``JSON.stringify`` writes it: no spaces, non-ASCII kept, lone
    surrogates escaped (so the text always encodes as UTF-8)."""
    kwargs.setdefault("separators", (",", ":"))
    import json  # here: writing ``tau --version`` loads neither json nor the re it imports

    return escape_lone_surrogates(json.dumps(data, ensure_ascii=False, **kwargs))

"""A short deterministic hash for shortening long ids, identical to pi's ``shortHash``."""

from __future__ import annotations

_MASK32 = 0xFFFFFFFF
_DIGITS36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def short_hash(text: str) -> str:
    """Hash ``text`` cyrb53-style over its UTF-16 code units and return the two lanes in base 36."""
    h1 = 0xDEADBEEF
    h2 = 0x41C6CE57
    for unit in _utf16_code_units(text):
        h1 = _imul(h1 ^ unit, 2654435761)
        h2 = _imul(h2 ^ unit, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2) + _base36(h1)


def _imul(a: int, b: int) -> int:
    """JavaScript ``Math.imul`` seen through ``>>> 0``: the low 32 bits of the product, unsigned."""
    return (a * b) & _MASK32


def _utf16_code_units(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (what JavaScript's ``charCodeAt`` walks)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def _base36(value: int) -> str:
    if value == 0:
        return "0"
    digits: list[str] = []
    while value:
        value, rest = divmod(value, 36)
        digits.append(_DIGITS36[rest])
    return "".join(reversed(digits))

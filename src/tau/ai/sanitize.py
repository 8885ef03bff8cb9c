"""Removal of lone UTF-16 surrogates, which several providers reject in JSON request bodies."""

from __future__ import annotations

from tau._pattern import lazy_pattern

# A Python str holds a surrogate code point only when it is unpaired: a valid pair decodes to one
# astral character (an emoji, say), so every code point in this range is safe to delete.
_SURROGATE = lazy_pattern("[\ud800-\udfff]")


def sanitize_surrogates(text: str) -> str:
    """Return ``text`` without any code point in U+D800–U+DFFF; astral characters such as emoji stay."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("", text)

"""Removal of lone UTF-16 surrogates, which several providers reject in JSON request bodies."""

from __future__ import annotations

import re

_SURROGATE = "[\ud800-\udfff]"


def sanitize_surrogates(text: str) -> str:
    """``text`` without lone surrogates, as pi's ``sanitizeSurrogates`` sends it: astral characters
    such as emoji stay, and so do the two halves of one that sit side by side as two code points
    (two deltas appended, say): they become the character, as they are one in a JavaScript string."""
    if text.isascii() or re.search(_SURROGATE, text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")

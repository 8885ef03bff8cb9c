"""Escaping for the XML-like blocks tau puts in prompts."""

from __future__ import annotations

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


def escape_xml(text: str) -> str:
    """``& < > " '`` as entities, safe in element text and in quoted attributes."""
    return text.translate(_ESCAPES)

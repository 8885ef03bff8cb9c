"""Turning the path a model wrote into the file it meant."""

from __future__ import annotations

import os
import re

from tau._unicode import well_formed

# Spaces a model (or a macOS file name) may put where a plain space was meant.
_UNICODE_SPACES = "[\u00a0\u2000-\u200a\u202f\u205f\u3000]"
_AM_PM = r"(?i) (AM|PM)\."
_NARROW_NBSP = "\u202f"


def expand_path(path: str) -> str:
    """Drop one leading ``@``, turn unicode spaces into plain ones, expand ``~`` and ``~/``. A lone
    surrogate (a model's JSON may hold one) becomes U+FFFD, as Node turns it into a file name."""
    path = well_formed(path)
    if path.startswith("@"):
        path = path[1:]
    path = re.sub(_UNICODE_SPACES, " ", path)
    if path == "~":
        return os.path.expanduser("~")
    if path.startswith("~/"):
        return os.path.expanduser("~") + path[1:]
    return path


def resolve_to_cwd(path: str, cwd: str) -> str:
    """The absolute path ``path`` names when relative paths start at ``cwd`` (``..`` collapsed)."""
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return expanded
    return os.path.normpath(os.path.join(os.path.abspath(cwd), expanded))


def _read_path_variants(path: str) -> list[str]:
    """Spellings of ``path`` that the file system may hold instead, most likely first."""
    import unicodedata  # a path that was not found only

    nfd = unicodedata.normalize("NFD", path)
    return [
        re.sub(_AM_PM, lambda m: _NARROW_NBSP + m.group(1) + ".", path),  # macOS screenshot names
        nfd,
        path.replace("'", "\u2019"),
        nfd.replace("'", "\u2019"),
    ]


def resolve_read_path(path: str, cwd: str) -> str:
    """Like :func:`resolve_to_cwd`, but when nothing is there try the spellings macOS file names use.

    Returns the plain resolved path when no variant exists, so the read fails with the usual error.
    """
    resolved = resolve_to_cwd(path, cwd)
    if os.path.lexists(resolved):
        return resolved
    for variant in _read_path_variants(resolved):
        if variant != resolved and os.path.lexists(variant):
            return variant
    return resolved

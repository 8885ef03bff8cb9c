"""Paths built from names that come from outside (a package source, a session id, a batch task id)
stay inside the folder they belong to.

``contained_path(root, *parts)`` joins the parts under ``root`` and returns the normalised path,
or raises ``PathEscapeError`` (one line for the user) when the result would not be strictly inside
``root``: a ``..`` that climbs out, an absolute part, the root itself, a NUL, a name too long for
the file system, or a symlink on the way that points elsewhere. ``file_name_problem`` checks one
file name (no separator at all) the same way. Every path tau derives from such a name goes
through one of them before anything is created, replaced or deleted there.
"""

from __future__ import annotations

import os

from tau.errors import TauError

__all__ = ["MAX_NAME_BYTES", "PathEscapeError", "contained_path", "file_name_problem", "is_inside", "shown"]

MAX_NAME_BYTES = 255
"""The longest file name (one path component) Linux, macOS and Windows file systems take."""


class PathEscapeError(TauError, ValueError):
    """A name that would put a path outside its folder, or that no file system takes."""


def contained_path(root: str | os.PathLike[str], *parts: str, follow_links: bool = True) -> str:
    """``root`` joined with ``parts`` (each may hold ``/``-separated components), normalised.

    Raises ``PathEscapeError`` unless the result is strictly below ``root``, lexically and, with
    ``follow_links``, once the symlinks that exist on the way are resolved."""
    base = os.path.normpath(os.path.abspath(os.fspath(root)))
    for part in parts:
        problem = _part_problem(part)
        if problem is not None:
            raise PathEscapeError(f"{shown(part)} {problem}")
    joined = os.path.normpath(os.path.join(base, *parts))
    if not is_inside(joined, base):
        raise PathEscapeError(f"{shown('/'.join(parts))} leads outside {base}")
    if follow_links and not is_inside(os.path.realpath(joined), os.path.realpath(base)):
        raise PathEscapeError(f"{shown('/'.join(parts))} leads outside {base} through a symbolic link")
    return joined


def file_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one file's name inside a folder (``None`` when it can): empty, ``.``,
    ``..``, a ``/`` or ``\\``, a NUL or another control character, or too long."""
    if not name.strip():
        return "is empty"
    if name in (".", ".."):
        return f"is {name!r}"
    if "/" in name or "\\" in name:
        return "cannot hold '/' or '\\'"
    return _part_problem(name)


def is_inside(path: str, root: str) -> bool:
    """Whether normalised absolute ``path`` is strictly below normalised absolute ``root``."""
    if path == root:
        return False
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def _part_problem(part: str) -> str | None:
    if not isinstance(part, str):
        return "is not text"
    if any(ord(c) < 32 or ord(c) == 127 for c in part):
        return "holds a control character (such as NUL or a line break)"
    if os.path.isabs(part) or part.startswith(("/", "\\")):
        return "is an absolute path"
    try:
        os.fsencode(part)
    except UnicodeEncodeError:
        return "cannot be a file name here (a lone surrogate)"
    for component in part.replace("\\", "/").split("/"):
        if len(component.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            return f"has a component longer than {MAX_NAME_BYTES} bytes"
    return None


def shown(text: str) -> str:
    """``text`` quoted for a one-line message, cut to a readable length."""
    quoted = repr(text)
    return quoted if len(quoted) <= 120 else quoted[:100] + "…" + quoted[-16:]

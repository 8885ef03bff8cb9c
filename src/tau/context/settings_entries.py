"""The resource arrays of settings.json (``extensions``, ``skills``, ``prompts``), read as pi reads them.

Each entry is one of:

- a path (``~`` expanded, relative to the settings' base folder: ``<cwd>/.tau`` for the project's,
  the agent dir for the user's), or a glob of paths: resources to load in addition to the discovered
  ones;
- ``!glob``: switch off the resources the glob matches;
- ``+path``: switch one back on, even when a ``!glob`` matched it;
- ``-path``: switch one off, whatever else matched.

A ``!glob`` is tried against the resource's path relative to the base folder, its file name and its
absolute path; ``+path`` and ``-path`` against the relative and the absolute path only. A resource
that stands for a folder (a skill's ``SKILL.md``, an extension's project folder) also answers to
that folder's path. These switches act on the settings' own paths and on what is discovered in the
same scope's folders, never on the other scope's.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Literal, TypeAlias

__all__ = ["EntriesSource", "ResourceKind", "SettingsEntries", "SettingsScope"]

ResourceKind: TypeAlias = Literal["extensions", "skills", "prompts"]
SettingsScope: TypeAlias = Literal["project", "user"]
EntriesSource: TypeAlias = Callable[[ResourceKind, SettingsScope], Sequence[str]]
"""The raw entries of one resource array in one scope's settings."""

_SKILL_FILE = "SKILL.md"
_GLOB_MAGIC = r"[*?[]"


class SettingsEntries:
    """One scope's array of one resource kind, split into paths to load and on/off switches.
    (A plain class: a frozen dataclass would cost every start-up over a millisecond.)"""

    __slots__ = ("base_dir", "excludes", "force_excludes", "force_includes", "paths")

    def __init__(
        self,
        base_dir: str,
        paths: Sequence[str] = (),
        excludes: Sequence[str] = (),
        force_includes: Sequence[str] = (),
        force_excludes: Sequence[str] = (),
    ) -> None:
        self.base_dir = base_dir
        self.paths = tuple(paths)
        self.excludes = tuple(excludes)
        self.force_includes = tuple(force_includes)
        self.force_excludes = tuple(force_excludes)

    @classmethod
    def parse(cls, entries: Sequence[str], base_dir: str) -> SettingsEntries:
        base_dir = os.path.abspath(base_dir)
        paths: list[str] = []
        excludes: list[str] = []
        force_includes: list[str] = []
        force_excludes: list[str] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            if entry[0] == "!":
                excludes.append(_expand_home(entry[1:]))
            elif entry[0] == "+":
                force_includes.append(_exact(entry[1:]))
            elif entry[0] == "-":
                force_excludes.append(_exact(entry[1:]))
            else:
                path = os.path.normpath(os.path.join(base_dir, os.path.expanduser(entry)))
                paths.extend(_expand_glob(path) if re.search(_GLOB_MAGIC, path) else [path])
        return cls(base_dir, paths, excludes, force_includes, force_excludes)

    @property
    def has_switches(self) -> bool:
        return bool(self.excludes or self.force_includes or self.force_excludes)

    def enables(self, path: str, base_dir: str | None = None, *, folder: str | None = None) -> bool:
        """Whether the resource at ``path`` stays on. ``base_dir`` is the folder relative patterns
        start from (default: the settings' own); ``folder`` a folder the resource stands for."""
        if not self.has_switches:
            return True
        base = base_dir if base_dir is not None else self.base_dir
        if folder is None and os.path.basename(path) == _SKILL_FILE:
            folder = os.path.dirname(path)
        targets = [path] if folder is None else [path, folder]
        relative = [_posix(os.path.relpath(t, base)) for t in targets]
        absolute = [_posix(os.path.abspath(t)) for t in targets]
        exact = {*relative, *absolute}
        enabled = True
        if self.excludes:
            names = [os.path.basename(t) for t in targets]
            candidates = [*relative, *names, *absolute]
            enabled = not any(_glob_regex(p).fullmatch(c) for p in self.excludes for c in candidates)
        if any(p in exact for p in self.force_includes):
            enabled = True
        if any(p in exact for p in self.force_excludes):
            enabled = False
        return enabled


def _expand_glob(path: str) -> list[str]:
    import glob  # only for a settings entry that is a glob

    return sorted(glob.glob(path))


def _expand_home(pattern: str) -> str:
    pattern = _posix(os.path.expanduser(pattern.strip()))
    # "./x" is "x"; ".//" is the folder itself, not the root "/" that cutting two characters leaves.
    return (pattern[2:].lstrip("/") or ".") if pattern.startswith("./") else pattern


def _exact(path: str) -> str:
    return posixpath.normpath(_expand_home(path))


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``*`` and ``?`` stay within one path segment, ``**`` crosses them, ``[...]`` is a class."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body[0] in "!^":
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out))

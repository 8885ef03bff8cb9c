"""What an installed package folder offers: extensions, skills, prompt templates and themes.

A ``package.json`` with a ``pi`` key lists the paths of each kind (globs, ``!glob`` to leave some
out); without one, the conventional folders ``extensions/``, ``skills/``, ``prompts/`` and
``themes/`` are read (and the folder itself as an extension when its ``pyproject.toml`` lists
``[tool.tau] extensions``). A pip package's own import folders are read the same way. The object form
of a ``packages`` entry narrows each kind further (pi's filters: ``[]`` for none, globs, ``!glob``,
``+path``, ``-path``); with ``"autoload": false`` it starts empty and only its patterns count, each
switching what it matches on (a glob, ``+path``) or off (``!glob``, ``-path``), the last match winning.
TypeScript and JavaScript extensions are found but not loadable (``not_loadable``: each with its
language): tau runs Python extensions only.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from msgspec import Struct, field

from tau.context.settings_entries import SettingsEntries
from tau.extensions.foreign import SCRIPT_SUFFIXES, script_language

__all__ = ["KINDS", "PackageContents", "package_contents", "package_delta"]

Kind: TypeAlias = Literal["extensions", "skills", "prompts", "themes"]
KINDS: tuple[Kind, ...] = ("extensions", "skills", "prompts", "themes")


class PackageContents(Struct):
    root: str
    found: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})
    not_loadable: list[tuple[str, str]] = field(default_factory=list)
    """(path, language) of each TypeScript or JavaScript extension."""
    problems: list[str] = field(default_factory=list)


def package_contents(
    root: str, filters: Mapping[str, Any] | None = None, *, python_package: bool = False
) -> PackageContents:
    """The resources under ``root`` (a folder, or one extension file), after ``filters``.
    ``python_package``: ``root`` is a pip target folder; its import folders are read."""
    contents = PackageContents(root)
    if os.path.isfile(root):
        _add_extension(contents, root)
        return contents
    roots = _import_folders(root) if python_package else [root]
    for folder in roots:
        declared = _manifest(folder, contents)
        for kind in KINDS:
            patterns = declared.get(kind) if declared is not None else None
            if declared is not None and patterns is None:
                continue
            found = _declared(folder, kind, patterns) if patterns is not None else _conventional(folder, kind)
            selected = _filtered(folder, found, (filters or {}).get(kind))
            if kind == "extensions":
                for path in selected:
                    _add_extension(contents, path)
            else:
                contents.found[kind].extend(selected)
    return contents


def package_delta(
    root: str, filters: Mapping[str, Any], *, python_package: bool = False
) -> dict[str, dict[str, bool]]:
    """What an ``"autoload": false`` entry says about each resource of ``root``, per kind: on, off,
    or (absent) nothing, so another entry of the same package decides."""
    everything = package_contents(root, None, python_package=python_package)
    delta: dict[str, dict[str, bool]] = {kind: {} for kind in KINDS}
    for kind in KINDS:
        patterns = filters.get(kind)
        if not isinstance(patterns, list):
            continue
        for pattern in (p for p in patterns if isinstance(p, str) and p.strip()):
            for path in everything.found[kind]:
                if _matches(pattern, path, root):
                    delta[kind][path] = not pattern.startswith(("!", "-"))
    return delta


def _matches(pattern: str, path: str, root: str) -> bool:
    """Whether one filter pattern names ``path``: ``+``/``-`` exactly, a glob or ``!glob`` as a glob.
    (A switch that turns ``path`` off is exactly a match.)"""
    exact = pattern.startswith(("+", "-"))
    body = pattern[1:] if pattern.startswith(("!", "+", "-")) else pattern
    entries = SettingsEntries.parse([f"{'-' if exact else '!'}{body}"], root)
    folder = path if os.path.isdir(path) else None
    target = os.path.join(path, "SKILL.md") if folder is not None else path
    return not entries.enables(target, root, folder=folder)


def _add_extension(contents: PackageContents, path: str) -> None:
    if (language := script_language(path)) is not None:
        contents.not_loadable.append((path, language))
    elif (
        path.endswith(".py")
        or os.path.isfile(os.path.join(path, "__init__.py"))
        or os.path.isfile(os.path.join(path, "pyproject.toml"))
    ):
        contents.found["extensions"].append(path)


def _import_folders(target: str) -> list[str]:
    try:
        names = sorted(os.listdir(target))
    except OSError:
        return []
    skip = ("bin", "__pycache__")
    return [
        os.path.join(target, n)
        for n in names
        if os.path.isdir(os.path.join(target, n))
        and not n.endswith((".dist-info", ".data"))
        and n not in skip
    ]


def _manifest(folder: str, contents: PackageContents) -> dict[str, list[str]] | None:
    path = os.path.join(folder, "package.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        contents.problems.append(f"{path}: cannot read package.json: {exc}")
        return None
    pi = data.get("pi") if isinstance(data, dict) else None
    if not isinstance(pi, dict):
        return None
    declared: dict[str, list[str]] = {}
    for kind in KINDS:
        value = pi.get(kind)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            declared[kind] = value
        elif value is not None:
            contents.problems.append(f"{path}: pi.{kind} must be a list of paths")
    return declared


def _declared(folder: str, kind: Kind, patterns: Sequence[str]) -> list[str]:
    found: list[str] = []
    for pattern in patterns:
        if pattern.startswith("!"):
            continue
        for path in sorted(glob.glob(os.path.join(folder, pattern))):
            found.extend(_expand(path, kind) if os.path.isdir(path) and kind != "extensions" else [path])
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    if excludes:
        entries = SettingsEntries.parse([f"!{e}" for e in excludes], folder)
        found = [p for p in found if entries.enables(p, folder)]
    return _unique(os.path.normpath(p) for p in found)


def _conventional(folder: str, kind: Kind) -> list[str]:
    path = os.path.join(folder, kind)
    found = _expand(path, kind) if os.path.isdir(path) else []
    if kind == "extensions" and _lists_tau_extensions(folder):
        found.insert(0, folder)  # the extension loader reads its [tool.tau] entries
    return found


def _lists_tau_extensions(folder: str) -> bool:
    """Whether ``folder``'s pyproject.toml names extensions (``[tool.tau] extensions = [...]``)."""
    path = os.path.join(folder, "pyproject.toml")
    if not os.path.isfile(path):
        return False
    import tomllib

    try:
        with open(path, "rb") as f:
            return "extensions" in tomllib.load(f).get("tool", {}).get("tau", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False


def _expand(folder: str, kind: Kind) -> list[str]:
    """The resources of one kind a folder holds."""
    if kind == "skills":
        return _skills(folder, top=True)
    names = sorted(n for n in os.listdir(folder) if not n.startswith((".", "_")))
    paths = [os.path.join(folder, n) for n in names]
    if kind == "prompts":
        return [p for p in paths if p.endswith(".md") and os.path.isfile(p)]
    if kind == "themes":
        return [p for p in paths if p.endswith(".json") and os.path.isfile(p)]
    return [
        p
        for p in paths
        if (os.path.isfile(p) and p.endswith((".py", *SCRIPT_SUFFIXES)))
        or os.path.isfile(os.path.join(p, "__init__.py"))
        or os.path.isfile(os.path.join(p, "index.ts"))
        or os.path.isfile(os.path.join(p, "index.js"))
    ]


def _skills(folder: str, *, top: bool) -> list[str]:
    if os.path.isfile(os.path.join(folder, "SKILL.md")):
        return [folder]
    found: list[str] = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.startswith(".") or name == "node_modules":
            continue
        if os.path.isdir(path):
            found.extend(_skills(path, top=False))
        elif top and name.endswith(".md"):
            found.append(path)
    return found


def _filtered(folder: str, found: list[str], patterns: Any) -> list[str]:
    """``found`` narrowed by a ``packages`` entry's filter for one kind (absent: all)."""
    if not isinstance(patterns, list):
        return found
    if not patterns:
        return []
    strings = [p for p in patterns if isinstance(p, str)]
    entries = SettingsEntries.parse(strings, folder)
    if entries.paths or any(not p.startswith(("!", "+", "-")) for p in strings):
        chosen = set(entries.paths)
        kept = [p for p in found if p in chosen or any(p.startswith(c + os.sep) for c in chosen)]
        forced = [p for p in found if p not in kept and _exact_in(p, folder, entries.force_includes)]
        found = [p for p in found if p in kept or p in forced]
    # A skill folder answers to its own path and to its SKILL.md's (the path pi's config writes).
    return [
        p
        for p in found
        if entries.enables(os.path.join(p, "SKILL.md") if os.path.isdir(p) else p, folder, folder=p)
    ]


def _exact_in(path: str, folder: str, exact: Sequence[str]) -> bool:
    return os.path.relpath(path, folder).replace(os.sep, "/") in exact or path in exact


def _unique(paths: Any) -> list[str]:
    return list(dict.fromkeys(paths))

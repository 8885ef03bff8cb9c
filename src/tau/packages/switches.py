"""Switching one resource of an installed package on or off, in pi's filter shape (``tau config``,
``/packages``): the package's ``packages`` entry takes its object form and gets ``+path`` or
``-path`` for that kind (a skill folder by its ``SKILL.md``, as pi 1.6's ``pi config`` writes it, so a
pi user's settings round-trip), replacing an earlier switch of the same resource."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from tau.packages.configured import ConfiguredPackage
from tau.packages.contents import package_contents

__all__ = ["ResourceSwitch", "resource_switches", "switch_pattern", "switched_entry"]


class ResourceSwitch(Struct, frozen=True):
    kind: str
    path: str
    pattern: str
    """The path relative to the package as pi's filters name it (``skills/<name>/SKILL.md``)."""
    on: bool


def resource_switches(package: ConfiguredPackage) -> list[ResourceSwitch]:
    """Every resource the package offers, and whether its entry loads it."""
    everything = package_contents(package.install_dir, None, python_package=package.source.kind == "pip")
    loaded = package.contents().found
    return [
        ResourceSwitch(kind, path, _pattern(package, path), path in loaded[kind])
        for kind, paths in everything.found.items()
        for path in paths
    ]


def switch_pattern(package: ConfiguredPackage, path: str) -> tuple[str, str]:
    """The kind of the resource at ``path`` (relative to the package; a skill's ``SKILL.md`` names
    its skill) and its pattern; ``ValueError`` when the package has no such resource."""
    target = os.path.normpath(os.path.join(package.install_dir, path))
    for switch in resource_switches(package):
        if target == switch.path or (switch.kind == "skills" and os.path.dirname(target) == switch.path):
            return switch.kind, switch.pattern
    raise ValueError(f"{path} is not a resource of {package.source.raw} (see: tau config)")


def switched_entry(entry: str | Mapping[str, Any], kind: str, pattern: str, *, on: bool) -> dict[str, Any]:
    """``entry`` (a source string or an object) with ``pattern`` of ``kind`` switched on or off."""
    updated: dict[str, Any] = dict(entry) if isinstance(entry, Mapping) else {"source": entry}
    folder = pattern.removesuffix("/SKILL.md") if kind == "skills" else pattern
    same = {pattern, folder, f"{folder}/SKILL.md"}
    kept = [p for p in updated.get(kind, []) if not (isinstance(p, str) and p.lstrip("!+-") in same)]
    updated[kind] = [*kept, f"{'+' if on else '-'}{pattern}"]
    return updated


def _pattern(package: ConfiguredPackage, path: str) -> str:
    relative = os.path.relpath(path, package.install_dir).replace(os.sep, "/")
    if os.path.isfile(os.path.join(path, "SKILL.md")):
        return f"{relative}/SKILL.md"  # pi names a skill folder by its SKILL.md
    return relative

"""The packages the settings declare, in both scopes, resolved to folders and resources.

Project entries come first and replace a user entry of the same package (pi's rule). A declared
package that is not installed yet is listed with ``installed=False`` and contributes nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from tau.runtime.packages.contents import PackageContents, package_contents
from tau.runtime.packages.sources import PackageSource, SourceError, parse_source
from tau.runtime.settings import SettingsManager, SettingsScope

__all__ = [
    "ConfiguredPackage",
    "Scope",
    "add_to_import_path",
    "configured_packages",
    "declared_scopes",
    "entry_source",
]

Scope: TypeAlias = Literal["user", "project"]


@dataclass(frozen=True, slots=True)
class ConfiguredPackage:
    scope: Scope
    entry: str | Mapping[str, Any]
    source: PackageSource
    base_dir: str
    install_dir: str

    @property
    def installed(self) -> bool:
        return os.path.exists(self.install_dir)

    @property
    def filters(self) -> Mapping[str, Any] | None:
        return self.entry if isinstance(self.entry, Mapping) else None

    def contents(self) -> PackageContents:
        return package_contents(self.install_dir, self.filters, python_package=self.source.kind == "pip")


def entry_source(entry: object) -> str | None:
    """The source string of a ``packages`` entry (a string, or an object's ``source``)."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping) and isinstance(entry.get("source"), str):
        return str(entry["source"])
    return None


def configured_packages(
    scopes: Mapping[Scope, tuple[list[Any], str]],
) -> tuple[list[ConfiguredPackage], list[str]]:
    """``scopes`` maps a scope to its ``packages`` array and its base folder. Returns the packages
    (project first, duplicates dropped) and one line per entry that cannot be read."""
    packages: list[ConfiguredPackage] = []
    problems: list[str] = []
    seen: set[str] = set()
    for scope in ("project", "user"):
        if scope not in scopes:
            continue
        entries, base = scopes[scope]
        for entry in entries:
            raw = entry_source(entry)
            if raw is None:
                problems.append(f"{scope} packages: an entry without a source: {entry!r}")
                continue
            try:
                source = parse_source(raw, cwd=base)
            except SourceError as exc:
                problems.append(f"{scope} packages: {exc}")
                continue
            identity = source.identity(base)
            if identity in seen:
                continue
            seen.add(identity)
            packages.append(ConfiguredPackage(scope, entry, source, base, source.install_dir(base)))
    return packages, problems


def declared_scopes(settings: SettingsManager) -> dict[Scope, tuple[list[Any], str]]:
    """Each scope's ``packages`` array and base folder (the settings file's folder); a scope
    without a file (in memory, or a folder not trusted) declares nothing."""
    scopes: dict[Scope, tuple[list[Any], str]] = {}
    pairs: tuple[tuple[Scope, SettingsScope], ...] = (("user", "global"), ("project", "project"))
    for scope, settings_scope in pairs:
        path = settings.path(settings_scope)
        packages = settings.get_scope(settings_scope).get("packages")
        if path is not None and isinstance(packages, list):
            scopes[scope] = (packages, str(path.parent))
    return scopes


def package_problems(settings: SettingsManager) -> list[str]:
    """One line per ``packages`` entry that gives nothing: unreadable, or declared but not installed."""
    packages, problems = configured_packages(declared_scopes(settings))
    missing = [
        f"package {p.source.raw} ({p.scope}) is not installed; install it with: tau update"
        for p in packages
        if not p.installed
    ]
    return problems + missing


def add_to_import_path(packages: list[ConfiguredPackage]) -> None:
    """Put installed pip packages' folders at the end of ``sys.path``, so their ``tau.extensions``
    entry points and their dependencies import (after tau's own environment, which wins)."""
    for package in packages:
        if package.source.kind == "pip" and package.installed and package.install_dir not in sys.path:
            sys.path.append(package.install_dir)

"""The packages the settings declare, in both scopes, resolved to folders and resources.

Project entries come first and replace a user entry of the same package (pi's rule), except a
project entry with ``"autoload": false``: it is a delta over the user's entry (same installed
folder), deciding only the resources its patterns name, and the user's entry decides the rest. A
declared package that is not installed yet is listed with ``installed=False`` and contributes nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.config.settings import SettingsManager
from tau.context.project_dirs import PI_PROJECT_DIR_NAME
from tau.extensions.foreign import not_loadable_reason
from tau.packages.contents import KINDS, PackageContents, package_contents, package_delta
from tau.packages.sources import PackageSource, SourceError, parse_source

__all__ = [
    "ConfiguredPackage",
    "Scope",
    "add_to_import_path",
    "configured_packages",
    "declared_scopes",
    "entry_source",
    "package_resources",
]

Scope: TypeAlias = Literal["user", "project"]


class ConfiguredPackage(Struct, frozen=True):
    scope: Scope
    entry: str | Mapping[str, Any]
    source: PackageSource
    base_dir: str
    install_dir: str
    from_pi: bool = False
    """Declared in pi's ``.pi/settings.json``: installed into ``.pi/`` by pi, never written by tau."""

    @property
    def installed(self) -> bool:
        return os.path.exists(self.install_dir)

    @property
    def filters(self) -> Mapping[str, Any] | None:
        return self.entry if isinstance(self.entry, Mapping) else None

    @property
    def autoload(self) -> bool:
        """``False``: the entry starts empty and only its patterns switch resources on or off."""
        return self.filters is None or self.filters.get("autoload") is not False

    def contents(self) -> PackageContents:
        """What this entry loads by itself (for an ``autoload: false`` entry, what its patterns
        switch on)."""
        python = self.source.kind == "pip"
        if self.autoload:
            return package_contents(self.install_dir, self.filters, python_package=python)
        contents = package_contents(self.install_dir, {kind: [] for kind in KINDS}, python_package=python)
        for kind, switches in package_delta(
            self.install_dir, self.filters or {}, python_package=python
        ).items():
            contents.found[kind] = [path for path, on in switches.items() if on]
        return contents


def entry_source(entry: object) -> str | None:
    """The source string of a ``packages`` entry (a string, or an object's ``source``)."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping) and isinstance(entry.get("source"), str):
        return str(entry["source"])
    return None


Declared: TypeAlias = "tuple[list[Any], str] | list[tuple[list[Any], str]]"
"""A scope's ``packages`` array and base folder, or several (the project's ``.tau/`` then ``.pi/``)."""


def _layers(declared: Declared) -> list[tuple[list[Any], str]]:
    return declared if isinstance(declared, list) else [declared]


def configured_packages(
    scopes: Mapping[Scope, Declared],
) -> tuple[list[ConfiguredPackage], list[str]]:
    """``scopes`` maps a scope to its ``packages`` array and its base folder (the project may have
    two: ``.tau/``'s, then pi's ``.pi/``). Returns the packages (project first, duplicates dropped:
    a package ``.tau/`` declares wins over the same one in ``.pi/``) and one line per entry that
    cannot be read."""
    packages: list[ConfiguredPackage] = []
    problems: list[str] = []
    seen: set[str] = set()
    deltas: dict[str, int] = {}  # identity -> index of a project autoload:false entry
    for scope in ("project", "user"):
        if scope not in scopes:
            continue
        for entries, base in _layers(scopes[scope]):
            from_pi = scope == "project" and os.path.basename(base) == PI_PROJECT_DIR_NAME
            _add_layer(scope, entries, base, packages, problems, seen, deltas, from_pi=from_pi)
    return packages, problems


def _add_layer(
    scope: Scope,
    entries: list[Any],
    base: str,
    packages: list[ConfiguredPackage],
    problems: list[str],
    seen: set[str],
    deltas: dict[str, int],
    *,
    from_pi: bool,
) -> None:
    """The packages of one settings file (``from_pi``: pi's ``.pi/settings.json``)."""
    for entry in entries:
        raw = entry_source(entry)
        if raw is None:
            problems.append(f"{scope} packages: an entry without a source: {entry!r}")
            continue
        try:
            source = parse_source(raw, cwd=base)
            install_dir = source.install_dir(base)
        except SourceError as exc:
            problems.append(f"{scope} packages: {exc}")
            continue
        identity = source.identity(base)
        if identity in deltas and scope == "user":
            # the project's delta works on the user's installed copy
            index = deltas.pop(identity)
            packages[index] = ConfiguredPackage(
                "project", packages[index].entry, source, base, install_dir, packages[index].from_pi
            )
        elif identity in seen:
            continue
        seen.add(identity)
        configured = ConfiguredPackage(scope, entry, source, base, install_dir, from_pi)
        if scope == "project" and not configured.autoload:
            deltas[identity] = len(packages)
        packages.append(configured)


def package_resources(packages: list[ConfiguredPackage]) -> dict[Scope, dict[str, list[str]]]:
    """The resources each scope loads from ``packages`` (as ``configured_packages`` orders them):
    the first entry to decide a path wins it, so a project delta overrides the user's entry for
    the paths it names."""
    decided: dict[str, dict[str, tuple[Scope, bool]]] = {kind: {} for kind in KINDS}
    for package in packages:
        if not package.installed:
            continue
        python = package.source.kind == "pip"
        if package.autoload:
            everything = package_contents(package.install_dir, None, python_package=python).found
            loaded = package.contents().found
            switches: dict[str, dict[str, bool]] = {
                k: {p: p in loaded[k] for p in everything[k]} for k in KINDS
            }
        else:
            switches = package_delta(package.install_dir, package.filters or {}, python_package=python)
        for kind in KINDS:
            for path, on in switches[kind].items():
                decided[kind].setdefault(path, (package.scope, on))
    return {
        scope: {
            kind: [p for p, (s, on) in paths.items() if on and s == scope] for kind, paths in decided.items()
        }
        for scope in ("project", "user")
    }


def declared_scopes(settings: SettingsManager) -> dict[Scope, Declared]:
    """Each scope's ``packages`` arrays and base folders (the settings file's folder): the user's,
    and the project's ``.tau/settings.json`` then pi's ``.pi/settings.json`` (whose packages pi
    installed into ``.pi/``); a scope without a file (in memory, or a folder not trusted) declares
    nothing."""
    scopes: dict[Scope, Declared] = {}
    path = settings.path("global")
    packages = settings.get_scope("global").get("packages")
    if path is not None and isinstance(packages, list):
        scopes["user"] = (packages, str(path.parent))
    project: list[tuple[list[Any], str]] = []
    path = settings.path("project")
    packages = settings.get_scope("project").get("packages")
    if path is not None and isinstance(packages, list):
        project.append((packages, str(path.parent)))
    pi = settings.pi_project_packages()
    if pi is not None:
        project.append((pi[0], str(pi[1])))
    if project:
        scopes["project"] = project
    return scopes


def package_problems(settings: SettingsManager) -> list[str]:
    """One line per ``packages`` entry that gives nothing (unreadable, or declared but not installed)
    and per TypeScript or JavaScript extension an installed one holds."""
    packages, problems = configured_packages(declared_scopes(settings))
    scripts: dict[str, str] = {}
    for package in packages:
        if package.installed:
            for path, language in package.contents().not_loadable:
                scripts.setdefault(
                    path, f"{path}: {not_loadable_reason(language)} (package {package.source.raw})"
                )
    problems += scripts.values()
    missing = {
        p.install_dir: f"package {p.source.raw} (.pi/settings.json) is not installed; pi installs it (pi update)"
        if p.from_pi
        else f"package {p.source.raw} ({p.scope}) is not installed; install it with: tau update"
        for p in reversed(packages)  # a delta and the user's entry it works on: one line, the user's
        if not p.installed
    }
    return problems + list(reversed(missing.values()))


def add_to_import_path(packages: list[ConfiguredPackage]) -> None:
    """Put installed pip packages' folders at the end of ``sys.path``, so their ``tau.extensions``
    entry points and their dependencies import (after tau's own environment, which wins)."""
    for package in packages:
        if package.source.kind == "pip" and package.installed and package.install_dir not in sys.path:
            sys.path.append(package.install_dir)

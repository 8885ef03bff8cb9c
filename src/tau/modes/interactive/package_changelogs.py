"""pi 1.6's "Extension Updates": at a fresh start after a package that loads an extension was
updated, the entries of its changelog newer than the version last seen. The version is the
package's ``package.json`` ``version``; the changelog its ``CHANGELOG.md``, or the file that
``pi.changelogPath`` names (``""``: none). The first time a package is seen its version is only
recorded (``extensionChangelogVersions`` in the user's settings, keyed as pi keys it)."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from tau.config.settings import SettingsManager

__all__ = ["PackageUpdate", "package_updates", "updates_text"]


class PackageUpdate(NamedTuple):
    name: str
    version: str
    markdown: str


def _manifest(folder: str) -> dict[str, Any] | None:
    try:
        with open(os.path.join(folder, "package.json"), encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _changelog_path(folder: str, manifest: dict[str, Any]) -> str | None:
    pi = manifest.get("pi")
    chosen = pi.get("changelogPath") if isinstance(pi, dict) else None
    if chosen == "":
        return None
    path = os.path.normpath(os.path.join(folder, chosen if isinstance(chosen, str) else "CHANGELOG.md"))
    inside = os.path.commonpath([os.path.abspath(folder), os.path.abspath(path)]) == os.path.abspath(folder)
    return path if inside and os.path.isfile(path) else None


def package_updates(settings: SettingsManager) -> list[PackageUpdate]:
    """The packages updated since last seen, with their new changelog entries (and the versions
    recorded for the next start)."""
    from tau.modes.interactive.changelog import new_entries
    from tau.packages.configured import configured_packages, declared_scopes, entry_source

    packages, _ = configured_packages(declared_scopes(settings))
    stored = settings.get("extensionChangelogVersions")
    seen: dict[str, str] = dict(stored) if isinstance(stored, dict) else {}
    changed = False
    updates: list[PackageUpdate] = []
    keys: set[str] = set()
    for package in packages:
        source = entry_source(package.entry)
        if source is None or not package.installed or not package.contents().found["extensions"]:
            continue
        key = json.dumps({"source": source, "scope": package.scope}, separators=(",", ":"))
        manifest = _manifest(package.install_dir)
        path = _changelog_path(package.install_dir, manifest) if manifest is not None else None
        version = manifest.get("version") if manifest is not None else None
        if key in keys or path is None or not isinstance(version, str) or not version:
            continue
        keys.add(key)
        last = seen.get(key)
        if last is None:  # first seen: recorded, nothing shown
            seen[key], changed = version, True
            continue
        try:
            with open(path, encoding="utf-8") as file:
                entries = new_entries(file.read(), last)
        except OSError:
            continue
        if entries is None:
            seen[key], changed = version, True
            continue
        if entries:
            seen[key], changed = version, True
            name = (
                manifest.get("name")
                if manifest is not None and isinstance(manifest.get("name"), str)
                else source
            )
            markdown = "\n\n".join(re.sub(r"^##\s+", f"## {name} ", entry) for entry in entries).strip()
            updates.append(PackageUpdate(str(name), version, markdown))
    if changed:
        settings.set("extensionChangelogVersions", seen)
    return updates


def updates_text(updates: list[PackageUpdate], *, collapsed: bool) -> tuple[str, str]:
    """``(title, text)`` of the notice: pi's "Extension Updates", or one line per package."""
    if collapsed:
        return "", "\n".join(f"Updated {u.name} to v{u.version}." for u in updates)
    return "Extension Updates", "\n\n".join(u.markdown for u in updates)

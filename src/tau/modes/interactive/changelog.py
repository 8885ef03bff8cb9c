"""tau's ``CHANGELOG.md`` (shipped inside the ``tau`` package): whole for ``/changelog``, and the
entries newer than the version last seen for pi 1.6's "What's New" at a fresh start."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.config.settings import SettingsManager

__all__ = ["changelog_entries", "changelog_text", "new_entries", "whats_new"]


def _read_changelog() -> str:
    from importlib.resources import files
    from pathlib import Path

    from tau._env_twins import tau_only

    moved = tau_only("PACKAGE_DIR")  # tau's files elsewhere (Nix/Guix); pi's PI_PACKAGE_DIR is pi's
    if moved:
        return (Path(moved) / "CHANGELOG.md").read_text(encoding="utf-8")
    return files("tau").joinpath("CHANGELOG.md").read_text(encoding="utf-8")


def changelog_text() -> str:
    """The changelog's text, or one line saying it could not be read."""
    try:
        return _read_changelog().strip()
    except OSError as exc:
        return f"No changelog found ({exc.strerror or exc})."


def _version(text: str, *, anchored: bool) -> tuple[int, int, int] | None:
    """The leading ``major.minor.patch`` (``v1.2.3``, ``[1.2.3]`` in a heading), as pi reads it: a
    prerelease suffix is ignored, so ``0.1.5-x`` counts as ``0.1.5``."""
    import re

    pattern = r"v?(\d+)\.(\d+)\.(\d+)" if anchored else r"##\s+\[?(\d+)\.(\d+)\.(\d+)\]?"
    found = re.match(pattern, text.strip() if anchored else text)
    return (int(found[1]), int(found[2]), int(found[3])) if found else None


def _sections(changelog: str) -> list[tuple[tuple[int, int, int], str]]:
    """The ``## <version>`` sections of ``changelog`` in the file's order, each with its version
    (a ``## `` heading without one ends the section before it and is left out, as pi's)."""
    sections: list[tuple[tuple[int, int, int], str]] = []
    current: tuple[int, int, int] | None = None
    lines: list[str] = []
    for line in [*changelog.split("\n"), "## end"]:
        if not line.startswith("## "):
            if current is not None:
                lines.append(line)
            continue
        if current is not None:
            sections.append((current, "\n".join(lines).strip()))
        current = _version(line, anchored=False)
        lines = [line]
    return sections


def new_entries(changelog: str, last_seen: str) -> list[str] | None:
    """The ``## <version>`` sections of ``changelog`` newer than ``last_seen``, in the file's order;
    ``None`` when ``last_seen`` holds no version to compare with (pi's ``getNewEntries``)."""
    last = _version(last_seen, anchored=True)
    if last is None:
        return None
    return [text for version, text in _sections(changelog) if version > last]


def changelog_entries() -> str:
    """``/changelog`` as pi 1.6's: every ``## <version>`` section, the oldest first so the newest
    ends next to the editor (the title and words before the first are left out), or pi's line
    when there are none."""
    try:
        entries = [text for _, text in _sections(_read_changelog())]
    except OSError:
        entries = []
    return "\n\n".join(reversed(entries)) if entries else "No changelog entries found."


def whats_new(settings: SettingsManager, version: str) -> tuple[str, str] | None:
    """pi 1.6's start-up changelog: ``(title, text)`` of the entries newer than the
    ``lastChangelogVersion`` setting, which then becomes ``version``. Nothing on the first start
    (the version is only recorded), when nothing is newer, or when the changelog cannot be read;
    ``collapseChangelog`` makes the text one line."""
    last = settings.last_changelog_version
    if last is None:
        settings.set_last_changelog_version(version)
        return None
    try:
        changelog = _read_changelog()
    except OSError:
        return None
    entries = new_entries(changelog, last)
    if entries is None:  # a stored value that is no version: record this one to compare later
        settings.set_last_changelog_version(version)
        return None
    if not entries:
        return None
    settings.set_last_changelog_version(version)
    if settings.collapse_changelog:
        newest = _version(entries[0], anchored=False)
        shown = ".".join(map(str, newest)) if newest else version
        return "", f"Updated to v{shown}. Use /changelog to view full changelog."
    return "What's New", "\n\n".join(entries)

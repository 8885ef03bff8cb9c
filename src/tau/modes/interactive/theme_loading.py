"""The theme files of one interactive run, and the theme it starts with (``--theme``, ``--use-theme``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.runtime.services import AgentSessionServices

__all__ = ["load_run_themes"]


def load_run_themes(
    services: AgentSessionServices,
    cli_themes: Sequence[str],
    use_theme: str | None,
    *,
    no_themes: bool,
) -> tuple[str | None, list[str]]:
    """Register the run's theme files; returns the theme to start with (``None``: the setting's)
    and one notice per problem. A ``--theme`` value that is a file or folder loads it; any other
    value names the theme to use, as ``--use-theme`` does; either may be pi's ``light/dark`` pair,
    whose half the terminal's appearance picks."""
    from tau.modes.interactive.render.theme import theme_names
    from tau.modes.interactive.render.theme_files import discover_theme_files, register_theme_files

    paths = [
        os.path.abspath(os.path.expanduser(t)) for t in cli_themes if os.path.exists(os.path.expanduser(t))
    ]
    named = [t for t in cli_themes if not os.path.exists(os.path.expanduser(t))]
    settings = services.settings_manager
    files = discover_theme_files(
        str(services.agent_dir),
        services.cwd,
        project_trusted=services.project_trusted,
        setting_paths=() if no_themes else settings.themes,
        extra=paths if no_themes else [*_package_themes(services), *paths],
        discovered=not no_themes,
    )
    _, notices = register_theme_files(files)
    chosen: str | None = None
    for name in [*named, *([use_theme] if use_theme else [])]:
        missing = [part for part in _pair(name) if part not in theme_names()]
        if not missing:
            chosen = name
        else:
            notices.append(f"theme {missing[0]}: no such theme (the themes are: {', '.join(theme_names())})")
    configured = settings.get("theme")
    if (
        chosen is None
        and isinstance(configured, str)
        and any(part not in theme_names() for part in _pair(configured))
    ):
        notices.append(f"the theme setting names {configured!r}, which is not loaded; using dark")
    return chosen, notices


def _pair(value: str) -> list[str]:
    """The theme names of a value: one, or pi's ``light/dark`` pair (light first)."""
    light, sep, dark = value.partition("/")
    return [light, dark] if sep else [value]


def _package_themes(services: AgentSessionServices) -> list[str]:
    """The theme files of the installed packages (only a configuration that declares packages
    reads them)."""
    settings = services.settings_manager
    if not settings.packages:
        return []
    from tau.packages.configured import configured_packages, declared_scopes, package_resources

    packages, _ = configured_packages(declared_scopes(settings))
    resources = package_resources(packages)
    return [*resources["project"]["themes"], *resources["user"]["themes"]]

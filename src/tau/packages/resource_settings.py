"""The resource arrays (``extensions``, ``skills``, ``prompts``) of a ``SettingsManager``'s two scopes,
with the resources of the scope's installed packages added as paths."""

from __future__ import annotations

from collections.abc import Sequence

from tau.config.settings import SettingsManager
from tau.context.settings_entries import EntriesSource, ResourceKind, SettingsScope

__all__ = ["settings_entries_source"]


def settings_entries_source(settings: SettingsManager) -> EntriesSource:
    """Reads one array from ``settings`` on each call, so a reload of the settings is seen."""

    def entries(kind: ResourceKind, scope: SettingsScope) -> Sequence[str]:
        layer = settings.get_scope("project" if scope == "project" else "global")
        value = layer.get(kind)
        own = [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
        if (
            not layer.get("packages")
            and not settings.get_scope("project").get("packages")
            and settings.pi_project_packages() is None
        ):
            return own
        return [*_package_paths(settings, kind, scope), *own]

    return entries


def _package_paths(settings: SettingsManager, kind: ResourceKind, scope: SettingsScope) -> list[str]:
    """The ``kind`` resources of ``scope``'s installed packages (a project entry of the same package
    replaces the user's, so the user's scope also looks at the project's list)."""
    from tau.packages.configured import (
        add_to_import_path,
        configured_packages,
        declared_scopes,
        package_resources,
    )

    packages, _ = configured_packages(declared_scopes(settings))
    if kind == "extensions":
        add_to_import_path(packages)
    return package_resources(packages)["project" if scope == "project" else "user"][kind]

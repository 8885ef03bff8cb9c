"""The resource arrays (``extensions``, ``skills``, ``prompts``) of a ``SettingsManager``'s two scopes."""

from __future__ import annotations

from collections.abc import Sequence

from tau.context.settings_entries import EntriesSource, ResourceKind, SettingsScope
from tau.runtime.settings import SettingsManager

__all__ = ["settings_entries_source"]


def settings_entries_source(settings: SettingsManager) -> EntriesSource:
    """Reads one array from ``settings`` on each call, so a reload of the settings is seen."""

    def entries(kind: ResourceKind, scope: SettingsScope) -> Sequence[str]:
        value = settings.get_scope("project" if scope == "project" else "global").get(kind)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return entries

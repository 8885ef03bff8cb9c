"""The numbers compaction works with (``compaction.*`` and ``branchSummary.*`` in settings.json)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from msgspec import Struct
from msgspec.structs import replace

__all__ = [
    "DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS",
    "DEFAULT_COMPACTION_SETTINGS",
    "OVERRIDE_KEYS",
    "CompactionSettings",
    "for_model",
    "is_token_count",
]


class CompactionSettings(Struct, frozen=True):
    """``enabled``: automatic compaction (``/compact`` always works). ``reserve_tokens``: head-room
    kept free below the context window; compaction starts when less is left. ``keep_recent_tokens``:
    about how much recent history stays verbatim. Summaries themselves may use the model's whole
    output limit."""

    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


DEFAULT_COMPACTION_SETTINGS = CompactionSettings()
DEFAULT_BRANCH_SUMMARY_RESERVE_TOKENS = 16384

OVERRIDE_KEYS = ("reserveTokens", "keepRecentTokens")
"""What an entry of ``compaction.modelOverrides`` may set."""


def for_model(
    settings: CompactionSettings, overrides: Mapping[str, Any], model_key: str | None
) -> CompactionSettings:
    """``settings`` with the token budgets of ``overrides[model_key]`` (``compaction.modelOverrides``,
    keyed by the exact, case-sensitive ``provider/modelId``). Each budget falls back on its own to
    ``settings``: an omitted value, or one that is not a whole number of 0 or more (the settings
    check reports those), keeps the ordinary setting."""
    entry = overrides.get(model_key) if model_key is not None else None
    if not isinstance(entry, Mapping):
        return settings
    reserve, keep = entry.get("reserveTokens"), entry.get("keepRecentTokens")
    return replace(
        settings,
        reserve_tokens=int(reserve) if is_token_count(reserve) else settings.reserve_tokens,
        keep_recent_tokens=int(keep) if is_token_count(keep) else settings.keep_recent_tokens,
    )


def is_token_count(value: Any) -> TypeGuard[float]:
    """A whole number of 0 or more (``1e3`` written as ``1000.0`` counts)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value >= 0 and float(value).is_integer() and value <= 2**53 - 1

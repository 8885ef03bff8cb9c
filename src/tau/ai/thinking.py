"""Reasoning levels: which a model supports, how they map to provider values, and token budgets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # the level names are read by the settings, which need no model types
    from tau.ai.types import Model, ThinkingLevel, ThinkingLevelOrOff

THINKING_LEVELS: Final[tuple[ThinkingLevelOrOff, ...]] = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)

# Levels above high are opt-in: a model offers them only when its thinkingLevelMap names them.
_OPT_IN_LEVELS: Final = frozenset({"xhigh", "max"})

DEFAULT_THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}

# Room always left for the visible answer when the thinking budget has to shrink.
_MIN_ANSWER_TOKENS = 1024

# Before thinking-level maps existed, xhigh support was known from the model id alone (pi 0.58).
_XHIGH_MODEL_IDS = r"gpt-5\.[234]|opus-4[-.]6"


def clamp_reasoning(level: ThinkingLevel) -> ThinkingLevel:
    """Map ``xhigh`` and ``max`` to ``high`` for APIs that know no level above high."""
    return "high" if level in _OPT_IN_LEVELS else level


def adjust_max_tokens_for_thinking(
    base_max_tokens: int,
    model_max_tokens: int,
    level: ThinkingLevel,
    custom_budgets: Mapping[str, int] | None = None,
) -> tuple[int, int]:
    """Return ``(max_tokens, thinking_budget)`` for a budget-based API, keeping room for the answer."""
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom_budgets or {})}
    budget = budgets[clamp_reasoning(level)]
    max_tokens = min(base_max_tokens + budget, model_max_tokens)
    if max_tokens <= budget:
        budget = max(0, max_tokens - _MIN_ANSWER_TOKENS)
    return max_tokens, budget


def get_supported_thinking_levels(model: Model) -> list[ThinkingLevelOrOff]:
    """The levels a model accepts: ``off`` only without reasoning; ``xhigh`` and ``max`` only when mapped."""
    if not model.reasoning:
        return ["off"]
    level_map = model.thinking_level_map or {}
    supported: list[ThinkingLevelOrOff] = []
    for level in THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in _OPT_IN_LEVELS and level not in level_map:
            continue
        supported.append(level)
    return supported


def clamp_thinking_level(model: Model, level: str) -> ThinkingLevelOrOff:
    """The requested level if supported, else the nearest supported one above, else below, else off."""
    supported = get_supported_thinking_levels(model)
    fallback: ThinkingLevelOrOff = supported[0] if supported else "off"
    if level not in THINKING_LEVELS:
        return fallback
    requested = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[requested:], *reversed(THINKING_LEVELS[:requested])):
        if candidate in supported:
            return candidate
    return fallback


def supports_xhigh(model: Model) -> bool:
    """Whether ``xhigh`` may be sent: a non-null ``thinkingLevelMap`` entry, else the id rule of pi 0.58."""
    level_map = model.thinking_level_map
    if level_map is not None and "xhigh" in level_map:
        return level_map["xhigh"] is not None
    return re.search(_XHIGH_MODEL_IDS, model.id) is not None


def supports_max(model: Model) -> bool:
    """Whether ``max`` may be sent: only a non-null ``thinkingLevelMap`` entry offers it."""
    return (model.thinking_level_map or {}).get("max") is not None


def map_thinking_level(model: Model, level: str) -> str | None:
    """The provider value for ``level`` from ``thinkingLevelMap`` (the level itself when unmapped; None = unsupported)."""
    level_map = model.thinking_level_map
    if level_map is not None and level in level_map:
        return level_map[level]
    return level


# APIs whose requests take a model's samplingParams (as in pi 1.6: other APIs ignore them).
SAMPLING_PARAMS_APIS: Final = frozenset({"openai-completions", "openai-responses", "azure-openai-responses"})


def resolve_sampling_params(
    model: Model, level: str | None, request_params: Mapping[str, object] | None = None
) -> dict[str, object]:
    """The fields to merge into the request body, later winning per key: the model's
    ``samplingParams``, then ``samplingParamsByThinkingLevel`` of the level clamped to what the model
    supports (``None`` = off), then the call's own (``request_params``). Empty for other APIs."""
    if model.api not in SAMPLING_PARAMS_APIS:
        return {}
    by_level = model.sampling_params_by_thinking_level or {}
    level_params = by_level.get(clamp_thinking_level(model, level or "off")) if by_level else None
    return {**(model.sampling_params or {}), **(level_params or {}), **(request_params or {})}

"""A model's ``compat`` object for the ``anthropic-messages`` API, read into typed fields.

The catalogue and models.json keep ``compat`` as pi's JSON (camelCase keys); this module is the one
place that reads the keys the Anthropic request depends on, with pi 1.6's defaults, so request
building asks typed questions (``compat.force_adaptive_thinking``) and never matches model ids.
A key with a value of the wrong type counts as absent (the default applies), as in pi.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct

from tau.ai.types import JsonObject, Model

SessionAffinityFormat = Literal["openai", "openai-nosession", "openrouter"]


class AllowedFallbackModel(Struct, frozen=True, kw_only=True):
    """A model Anthropic may answer with instead (server-side refusal fallback), with its price."""

    provider: str
    model: str
    cost: JsonObject | None = None


class AnthropicCompat(Struct, frozen=True, kw_only=True):
    # Thinking: adaptive thinking with an effort (``output_config.effort``) instead of a token budget.
    force_adaptive_thinking: bool = False
    # Effort may change between messages (mid-conversation ``output_config`` markers).
    supports_mid_convo_effort: bool = False
    # System messages after the first turn, and tool additions/removals inside them.
    supports_mid_convo_system_messages: bool = False
    supports_mid_convo_tool_changes: bool = False
    # Tools.
    supports_eager_tool_input_streaming: bool = True
    supports_strict_tools: bool = False
    supports_cache_control_on_tools: bool = True
    # Sampling and caching.
    supports_temperature: bool = True
    supports_long_cache_retention: bool = True
    # Replayed thinking blocks whose signature is empty are kept.
    allow_empty_signature: bool = False
    # Session-affinity header (OpenRouter's ``x-session-id`` or ``x-session-affinity``).
    send_session_affinity_headers: bool = False
    session_affinity_format: SessionAffinityFormat | None = None
    # Anthropic's server-side message threads (default: only on Anthropic's own endpoint).
    supports_message_threads: bool = False
    allowed_fallback_models: tuple[AllowedFallbackModel, ...] = ()


def _flag(compat: JsonObject, key: str, default: bool) -> bool:
    value = compat.get(key)
    return value if isinstance(value, bool) else default


def _affinity_format(value: object, default: SessionAffinityFormat | None) -> SessionAffinityFormat | None:
    if value == "openai" or value == "openai-nosession" or value == "openrouter":
        return value
    return default


def _fallbacks(value: object) -> tuple[AllowedFallbackModel, ...]:
    if not isinstance(value, list):
        return ()
    out: list[AllowedFallbackModel] = []
    for entry in value:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("provider"), str)
            and isinstance(entry.get("model"), str)
        ):
            cost = entry.get("cost")
            out.append(
                AllowedFallbackModel(
                    provider=entry["provider"],
                    model=entry["model"],
                    cost=cost if isinstance(cost, dict) else None,
                )
            )
    return tuple(out)


def anthropic_compat(model: Model) -> AnthropicCompat:
    """``model.compat`` with pi 1.6's defaults for the Anthropic Messages API."""
    compat = model.compat or {}
    openrouter = model.provider == "openrouter" or "openrouter.ai" in model.base_url
    return AnthropicCompat(
        force_adaptive_thinking=compat.get("forceAdaptiveThinking") is True,
        supports_mid_convo_effort=compat.get("supportsMidConvoEffort") is True,
        supports_mid_convo_system_messages=_flag(compat, "supportsMidConvoSystemMessages", False),
        supports_mid_convo_tool_changes=_flag(compat, "supportsMidConvoToolChanges", False),
        supports_eager_tool_input_streaming=_flag(compat, "supportsEagerToolInputStreaming", True),
        supports_strict_tools=_flag(compat, "supportsStrictTools", False),
        supports_cache_control_on_tools=_flag(compat, "supportsCacheControlOnTools", True),
        supports_temperature=_flag(compat, "supportsTemperature", True),
        supports_long_cache_retention=_flag(compat, "supportsLongCacheRetention", True),
        allow_empty_signature=_flag(compat, "allowEmptySignature", False),
        send_session_affinity_headers=_flag(compat, "sendSessionAffinityHeaders", openrouter),
        session_affinity_format=_affinity_format(
            compat.get("sessionAffinityFormat"), "openrouter" if openrouter else None
        ),
        supports_message_threads=_flag(
            compat, "supportsMessageThreads", "api.anthropic.com" in model.base_url
        ),
        allowed_fallback_models=_fallbacks(compat.get("allowedFallbackModels")),
    )

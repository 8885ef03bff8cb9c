"""Thinking, effort, output cap, sampling and beta features of an Anthropic Messages request.

Every decision here comes from the model's catalogue data (``compat``, ``thinkingLevelMap``,
``reasoning``, ``maxTokens``), never from its id, as pi 1.6 decides them:

- ``compat.forceAdaptiveThinking``: ``thinking {type: adaptive}`` plus ``output_config.effort``
  (the level through ``thinkingLevelMap``, else low/low/medium/high, else high) and the output cap
  left at the model's ``maxTokens``; otherwise a thinking budget, which the output cap must hold
  plus room for the answer, and the interleaved-thinking beta.
- Thinking shows ``display: summarized`` unless the caller asks otherwise.
- A reasoning model called without thinking gets ``thinking {type: disabled}``, except when its
  ``thinkingLevelMap`` marks ``off`` unsupported (``null``): then nothing is sent.
- ``temperature`` only without thinking, and not when ``compat.supportsTemperature`` is false or the
  model manages effort per message (``compat.supportsMidConvoEffort``).
- ``compat.allowedFallbackModels``: the ``fallbacks`` field and the server-side-fallback beta.
- An ``anthropic-beta`` header in the model's or the call's headers replaces the computed list.
"""

from __future__ import annotations

from collections.abc import Sequence

from tau.ai.options import SimpleStreamOptions, StreamOptions
from tau.ai.output_budget import clamp_max_tokens_to_context
from tau.ai.providers.anthropic_compat import anthropic_compat
from tau.ai.thinking import adjust_max_tokens_for_thinking, clamp_thinking_level
from tau.ai.types import Context, JsonObject, Model

BETA_FINE_GRAINED_TOOL_STREAMING = "fine-grained-tool-streaming-2025-05-14"
BETA_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
BETA_SERVER_SIDE_FALLBACK = "server-side-fallback-2026-07-01"
BETA_MESSAGE_THREADS = "message-threads-2026-08-12"
OAUTH_BETAS = ("claude-code-20250219", "oauth-2025-04-20")
DEFAULT_THINKING_DISPLAY = "summarized"
_MIN_ANSWER_TOKENS = 1024

# Levels as Anthropic efforts, for a level the model's thinkingLevelMap does not name.
_DEFAULT_EFFORTS: dict[str, str] = {"minimal": "low", "low": "low", "medium": "medium", "high": "high"}


def forces_adaptive_thinking(model: Model) -> bool:
    return anthropic_compat(model).force_adaptive_thinking


def effort_for_level(model: Model, level: str) -> str:
    """The ``output_config.effort`` for a thinking level: ``thinkingLevelMap`` wins; else the default table."""
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return _DEFAULT_EFFORTS.get(level, "high")


def thinking_requested(model: Model, options: StreamOptions) -> bool:
    return options.extra.get("thinking_enabled") is True and model.reasoning


def apply_simple_reasoning(
    model: Model, context: Context, options: SimpleStreamOptions, extra: JsonObject
) -> int | None:
    """Set the thinking extras for ``stream_simple`` in ``extra``; returns the request's output cap.

    ``options.max_tokens`` is the cap already fitted into the context window (``stream_simple``).
    """
    level = clamp_thinking_level(model, options.reasoning) if options.reasoning and model.reasoning else "off"
    if level == "off":
        extra["thinking_enabled"] = False
        return options.max_tokens
    extra["thinking_enabled"] = True
    if forces_adaptive_thinking(model):
        extra["effort"] = effort_for_level(model, level)
        return options.max_tokens
    max_tokens, budget = adjust_max_tokens_for_thinking(
        options.max_tokens if options.max_tokens is not None else model.max_tokens,
        model.max_tokens,
        level,
        options.thinking_budgets,
    )
    max_tokens = clamp_max_tokens_to_context(model.context_window, context, max_tokens)
    extra["thinking_budget_tokens"] = min(budget, max(0, max_tokens - _MIN_ANSWER_TOKENS))
    return max_tokens


def thinking_fields(model: Model, options: StreamOptions) -> JsonObject:
    """The body's ``thinking`` and ``output_config`` fields (empty when neither is sent)."""
    extra = options.extra
    if not thinking_requested(model, options):
        level_map = model.thinking_level_map or {}
        off_supported = not ("off" in level_map and level_map["off"] is None)
        if model.reasoning and extra.get("thinking_enabled") is False and off_supported:
            return {"thinking": {"type": "disabled"}}
        return {}
    display = extra.get("thinking_display") or DEFAULT_THINKING_DISPLAY
    if forces_adaptive_thinking(model):
        fields: JsonObject = {"thinking": {"type": "adaptive", "display": display}}
        effort = extra.get("effort")
        if effort:
            fields["output_config"] = {"effort": effort}
        return fields
    budget = extra.get("thinking_budget_tokens") or 1024
    return {"thinking": {"type": "enabled", "budget_tokens": budget, "display": display}}


def temperature_allowed(model: Model, options: StreamOptions) -> bool:
    compat = anthropic_compat(model)
    return (
        options.extra.get("thinking_enabled") is not True
        and not compat.supports_mid_convo_effort
        and compat.supports_temperature
    )


def fallbacks_field(model: Model) -> list[JsonObject] | None:
    """``fallbacks`` for a model with ``compat.allowedFallbackModels``, else ``None``."""
    fallbacks = anthropic_compat(model).allowed_fallback_models
    return [{"model": fallback.model} for fallback in fallbacks] if fallbacks else None


def _configured_betas(model: Model, options: StreamOptions) -> str | None:
    """The last ``anthropic-beta`` header among the model's and then the call's headers."""
    found: str | None = None
    for headers in (model.headers, options.headers):
        for name, value in (headers or {}).items():
            if name.lower() == "anthropic-beta":
                found = value
    return found


def beta_features(
    model: Model,
    context: Context,
    options: StreamOptions,
    *,
    oauth: bool,
    fine_grained_tools: bool,
    mid_conversation: Sequence[str] = (),
    message_threads: bool = False,
) -> list[str]:
    """The ``anthropic-beta`` list, in pi's order, without repeats; ``mid_conversation`` are the
    features of prompt changes and effort carried in messages (``anthropic_updates.betas``),
    ``message_threads`` adds message threads' (``anthropic_threads``)."""
    configured = _configured_betas(model, options)
    if configured is not None:
        return list(dict.fromkeys(part.strip() for part in configured.split(",") if part.strip()))
    features: list[str] = list(OAUTH_BETAS) if oauth else []
    if fine_grained_tools:
        features.append(BETA_FINE_GRAINED_TOOL_STREAMING)
    if (
        thinking_requested(model, options)
        and options.extra.get("interleaved_thinking", True)
        and not forces_adaptive_thinking(model)
    ):
        features.append(BETA_INTERLEAVED_THINKING)
    if anthropic_compat(model).allowed_fallback_models:
        features.append(BETA_SERVER_SIDE_FALLBACK)
    features.extend(mid_conversation)
    if message_threads:
        features.append(BETA_MESSAGE_THREADS)
    return list(dict.fromkeys(features))


def session_affinity_headers(model: Model, session_id: str | None) -> dict[str, str]:
    """``x-session-id`` (OpenRouter's format) or ``x-session-affinity`` when the model asks for one."""
    compat = anthropic_compat(model)
    if not session_id or not compat.send_session_affinity_headers:
        return {}
    name = "x-session-id" if compat.session_affinity_format == "openrouter" else "x-session-affinity"
    return {name: session_id}

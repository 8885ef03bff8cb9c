"""From what the user typed (``--provider``, ``--model``, ``--models``, settings) to a model.

A reference is ``provider/id`` or a bare ``id``, optionally followed by ``:<thinking level>``; the
suffix is split off the *last* colon only when it is a valid level, because ids such as
OpenRouter's ``…:exacto`` contain colons. Matching is case-insensitive: an exact reference first,
then a substring of id or name, preferring alias ids (no ``-YYYYMMDD`` suffix) over dated ones and,
among those, the id that sorts last (the newest). A bare id that several providers serve resolves to
the one provider with credentials, otherwise it is an error listing the candidates.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import Final, TypeGuard

import msgspec
from msgspec import Struct

from tau.accounts.model_registry import ModelRegistry
from tau.ai.thinking import THINKING_LEVELS
from tau.ai.types import Model, ThinkingLevelOrOff
from tau.errors import TauError

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "PREFERRED_DEFAULT_MODELS",
    "InitialModel",
    "ModelResolutionError",
    "ResolvedModel",
    "ScopedModel",
    "choose_default_model",
    "close_matches",
    "default_model_for_provider",
    "find_exact_model_reference",
    "find_initial_model",
    "find_model_by_pattern",
    "is_alias_id",
    "is_valid_thinking_level",
    "parse_model_pattern",
    "resolve_cli_model",
    "resolve_model_scope",
    "restore_model",
]

DEFAULT_THINKING_LEVEL: Final[ThinkingLevelOrOff] = "medium"

LIST_MODELS_HINT = "List models with: tau --list-models [search]"

# The model picked for each provider when nothing else says which (first id the registry has wins).
# Provider order matters: with credentials for several providers, the first listed one is chosen.
PREFERRED_DEFAULT_MODELS: Final[dict[str, tuple[str, ...]]] = {
    "amazon-bedrock": ("us.anthropic.claude-opus-5-5",),
    "ant-ling": ("Ring-2.6-1T",),
    "anthropic": ("claude-opus-5-5",),
    "openai": ("gpt-6.2-sol",),
    "azure": ("gpt-6.2-sol",),
    "openai-codex": ("gpt-6.2-sol",),
    "radius": ("balanced",),
    "nvidia": ("nvidia/nemotron-3.5-super-vl-120b-a12b",),
    "deepseek": ("deepseek-v4-pro",),
    "google": ("gemini-4-argon",),
    "google-vertex": ("gemini-4-argon",),
    "github-copilot": ("gpt-6.1-sol",),
    "openrouter": ("moonshotai/kimi-k2.7-code",),
    "vercel-ai-gateway": ("zai/glm-5.3",),
    "xai": ("grok-4.7",),
    "groq": ("openai/gpt-oss-120b",),
    "cerebras": ("gpt-oss-120b",),
    "zai": ("glm-5.3",),
    "zai-coding-cn": ("glm-5.3",),
    "mistral": ("devstral-medium-latest",),
    "minimax": ("MiniMax-M3",),
    "minimax-cn": ("MiniMax-M3",),
    "moonshotai": ("kimi-k2.7-code",),
    "moonshotai-cn": ("kimi-k2.7-code",),
    "huggingface": ("moonshotai/Kimi-K2.7-Code",),
    "fireworks": ("accounts/fireworks/models/kimi-k3",),
    "together": ("moonshotai/Kimi-K3",),
    "baseten": ("zai-org/GLM-5.3",),
    "opencode": ("kimi-k2.7-code",),
    "opencode-go": ("kimi-k3.1-pro",),
    "kimi-coding": ("kimi-for-coding",),
    "meta": ("muse-spark-1.3",),
    "cloudflare-workers-ai": ("@cf/moonshotai/kimi-k2.7-code",),
    "cloudflare-ai-gateway": ("workers-ai/@cf/moonshotai/kimi-k2.7-code",),
    "qwen-token-plan": ("qwen3.8-max",),
    "qwen-token-plan-cn": ("qwen3.8-max",),
    "qwen-token-plan-individual": ("qwen3.8-max",),
    "qwen-token-plan-individual-cn": ("qwen3.8-max",),
    "xiaomi": ("mimo-v2.6-pro",),
    "xiaomi-token-plan-cn": ("mimo-v2.6-pro",),
    "xiaomi-token-plan-ams": ("mimo-v2.6-pro",),
    "xiaomi-token-plan-sgp": ("mimo-v2.6-pro",),
}

_DATED_ID = r"-\d{8}$"
_GLOB_CHARS = ("*", "?", "[")
_MAX_CLOSE_MATCHES = 5


class ModelResolutionError(TauError, ValueError):
    """A model reference that names no model, or more than one; the message says what to do."""


class ResolvedModel(Struct, frozen=True):
    """A model found for a reference, the thinking level its ``:level`` suffix asked for, and any warning."""

    model: Model
    thinking_level: ThinkingLevelOrOff | None = None
    warning: str | None = None


class ScopedModel(Struct, frozen=True):
    """One entry of the cycling list (``--models`` / ``enabledModels``)."""

    model: Model
    thinking_level: ThinkingLevelOrOff | None = None


class InitialModel(Struct, frozen=True):
    """The model a session starts with (``None`` when nothing is usable) and its thinking level."""

    model: Model | None
    thinking_level: ThinkingLevelOrOff
    message: str | None = None


def is_valid_thinking_level(value: str) -> TypeGuard[ThinkingLevelOrOff]:
    return value in THINKING_LEVELS


def is_alias_id(model_id: str) -> bool:
    """Whether an id names a moving alias (``…-latest`` or no ``-YYYYMMDD`` date at the end)."""
    return model_id.endswith("-latest") or re.search(_DATED_ID, model_id) is None


def find_exact_model_reference(reference: str, models: Sequence[Model]) -> Model | None:
    """The one model that ``provider/id`` or a bare ``id`` names exactly (case-insensitive), else ``None``."""
    wanted = reference.strip().lower()
    if not wanted:
        return None
    canonical = [m for m in models if f"{m.provider}/{m.id}".lower() == wanted]
    if canonical:
        return canonical[0] if len(canonical) == 1 else None
    provider, slash, model_id = wanted.partition("/")
    if slash and provider.strip() and model_id.strip():
        split = [
            m for m in models if m.provider.lower() == provider.strip() and m.id.lower() == model_id.strip()
        ]
        if split:
            return split[0] if len(split) == 1 else None
    by_id = [m for m in models if m.id.lower() == wanted]
    return by_id[0] if len(by_id) == 1 else None


def find_model_by_pattern(pattern: str, models: Sequence[Model]) -> Model | None:
    """An exact reference, else the best model whose id or name contains ``pattern``."""
    exact = find_exact_model_reference(pattern, models)
    if exact is not None:
        return exact
    needle = pattern.lower()
    matches = [m for m in models if needle in m.id.lower() or needle in m.name.lower()]
    if not matches:
        return None
    aliases = [m for m in matches if is_alias_id(m.id)]
    return max(aliases or matches, key=lambda m: _collation_key(m.id))


def parse_model_pattern(
    pattern: str, models: Sequence[Model], *, strict: bool = False
) -> ResolvedModel | None:
    """Match ``pattern``, peeling ``:level`` suffixes off the last colon when the whole does not match.

    A suffix that is not a thinking level fails the match when ``strict`` (CLI ``--model``: never
    silently pick a different model); otherwise the prefix is used with a warning (``--models``).
    """
    model = find_model_by_pattern(pattern, models)
    if model is not None:
        return ResolvedModel(model)
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon:
        return None
    if is_valid_thinking_level(suffix):
        inner = parse_model_pattern(prefix, models, strict=strict)
        if inner is None:
            return None
        # A level peeled further in (with a warning) does not override this one's warning.
        return msgspec.structs.replace(inner, thinking_level=None if inner.warning else suffix)
    if strict:
        return None
    inner = parse_model_pattern(prefix, models, strict=strict)
    if inner is None:
        return None
    warning = f'Invalid thinking level "{suffix}" in pattern "{pattern}"; using the default level.'
    return ResolvedModel(inner.model, None, warning)


def close_matches(query: str, models: Sequence[Model], limit: int = _MAX_CLOSE_MATCHES) -> list[str]:
    """Up to ``limit`` ``provider/id`` references that look like ``query``, closest first."""
    wanted = query.lower()
    scored: list[tuple[float, str]] = []
    import difflib  # for a model that was not found: not at start-up

    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    for model in models:
        reference = f"{model.provider}/{model.id}"
        best = 0.0
        for candidate in (model.id.lower(), reference.lower()):
            matcher.set_seq1(candidate)
            if matcher.real_quick_ratio() >= 0.5 and matcher.quick_ratio() >= 0.5:
                best = max(best, matcher.ratio())
        if best >= 0.5:
            scored.append((best, reference))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [reference for _score, reference in scored[:limit]]


def resolve_cli_model(
    registry: ModelRegistry,
    model: str,
    provider: str | None = None,
    *,
    thinking: str | None = None,
    allow_custom_id: bool = True,
) -> ResolvedModel:
    """Resolve ``--model`` (with ``--provider`` if given) against every model, with or without auth.

    All models are searched, not only those with credentials, so ``--api-key`` works on first use.
    With a known provider and an id it does not list, pi's behaviour is kept when
    ``allow_custom_id``: the id is used on a copy of the provider's default model, with a warning
    (new models work before the catalogue knows them). Raises ``ModelResolutionError`` otherwise.
    """
    if provider and not model.strip().lower().startswith(f"{provider.lower()}/"):
        # The common case, --provider P --model <one of P's ids>, needs only P's models.
        wanted = model.strip().lower()
        named = [m for m in registry.get_provider_models(provider) if m.id.lower() == wanted]
        if len(named) == 1:
            return ResolvedModel(named[0])
    models = registry.get_all()
    if not models:
        raise ModelResolutionError(
            "No models available. Check your installation or add models to models.json."
        )
    providers = {m.provider.lower(): m.provider for m in models}
    chosen: str | None = None
    if provider:
        chosen = providers.get(provider.lower())
        if chosen is None:
            raise ModelResolutionError(_unknown_provider_message(provider, list(providers.values())))
    pattern = model
    inferred = False
    if chosen is None and "/" in model:
        maybe_provider, _slash, rest = model.partition("/")
        if maybe_provider.lower() in providers:
            chosen, pattern, inferred = providers[maybe_provider.lower()], rest, True
    if chosen is None:
        exact = _exact_full_matches(model, models)
        if len(exact) == 1:
            return ResolvedModel(exact[0])
        if len(exact) > 1:
            return ResolvedModel(_disambiguate(model, exact, registry))
    elif provider and pattern.lower().startswith(f"{chosen.lower()}/"):
        pattern = pattern[len(chosen) + 1 :]

    candidates = [m for m in models if chosen is None or m.provider == chosen]
    match = parse_model_pattern(pattern, candidates, strict=True)
    if match is not None:
        if inferred and not registry.has_configured_auth(match.model.provider):
            # "xiaomi/mimo-v2.5-pro" may also be the literal id of a model elsewhere that has auth.
            literal = [
                m
                for m in models
                if m.id.lower() == model.lower() and registry.has_configured_auth(m.provider)
            ]
            if len(literal) == 1:
                return ResolvedModel(literal[0])
        return match
    if inferred:
        # "openai/gpt-4o:extended" looks like provider/id but is an OpenRouter id.
        exact = _exact_full_matches(model, models)
        if exact:
            return ResolvedModel(exact[0])
        whole = parse_model_pattern(model, models, strict=True)
        if whole is not None:
            return whole
    if chosen is not None and allow_custom_id:
        custom = _custom_id_model(chosen, pattern, models, thinking)
        if custom is not None:
            return custom
    display = f"{chosen}/{pattern}" if chosen is not None else model
    raise ModelResolutionError(_not_found_message(display, pattern, candidates or models))


def resolve_model_scope(
    patterns: Sequence[str], models: Sequence[Model]
) -> tuple[list[ScopedModel], list[str]]:
    """The cycling list for ``--models`` / ``enabledModels`` patterns (globs allowed), plus warnings.

    ``models`` is normally ``registry.get_available()``. Each pattern may end in ``:level``. Glob
    patterns (``*``, ``?``, ``[``) match ``provider/id`` or the bare id; duplicates keep their first place.
    """
    scoped: list[ScopedModel] = []
    seen: set[tuple[str, str]] = set()
    warnings: list[str] = []

    def add(model: Model, level: ThinkingLevelOrOff | None) -> None:
        key = (model.provider, model.id)
        if key not in seen:
            seen.add(key)
            scoped.append(ScopedModel(model, level))

    for pattern in patterns:
        if any(char in pattern for char in _GLOB_CHARS):
            glob, level = _split_level(pattern)
            exact = find_exact_model_reference(glob, models)
            matched = [exact] if exact is not None else _glob_matches(glob, models)
            if not matched:
                warnings.append(f'No models match pattern "{pattern}"')
            for model in matched:
                add(model, level)
            continue
        match = parse_model_pattern(pattern, models)
        if match is None:
            warnings.append(f'No models match pattern "{pattern}"')
            continue
        if match.warning:
            warnings.append(match.warning)
        add(match.model, match.thinking_level)
    return scoped, warnings


def default_model_for_provider(provider: str, models: Sequence[Model]) -> Model | None:
    """The preferred default of ``provider`` among ``models``, else its first model there."""
    own = {m.id: m for m in models if m.provider == provider}
    for model_id in PREFERRED_DEFAULT_MODELS.get(provider, ()):
        if model_id in own:
            return own[model_id]
    return next(iter(own.values()), None)


def choose_default_model(models: Sequence[Model]) -> Model | None:
    """The first preferred default (in provider order) present in ``models``, else the first model."""
    present = {(m.provider, m.id): m for m in models}
    for provider, model_ids in PREFERRED_DEFAULT_MODELS.items():
        for model_id in model_ids:
            if (provider, model_id) in present:
                return present[(provider, model_id)]
    return models[0] if models else None


def find_initial_model(
    registry: ModelRegistry,
    *,
    cli_provider: str | None = None,
    cli_model: str | None = None,
    cli_thinking: ThinkingLevelOrOff | None = None,
    scoped_models: Sequence[ScopedModel] = (),
    is_continuing: bool = False,
    default_provider: str | None = None,
    default_model_id: str | None = None,
    default_thinking_level: ThinkingLevelOrOff | None = None,
) -> InitialModel:
    """The starting model: CLI flags, else the first scoped model (new sessions), else the settings
    default (if it has auth), else the preferred default among models with auth, else none.

    ``--provider`` alone picks that provider's default model. Raises ``ModelResolutionError`` for CLI
    references that resolve to nothing. ``cli_thinking`` (``--thinking``) beats any ``:level`` suffix.
    """
    fallback_level = default_thinking_level or DEFAULT_THINKING_LEVEL
    if cli_model:
        resolved = resolve_cli_model(registry, cli_model, cli_provider, thinking=cli_thinking)
        level = cli_thinking or resolved.thinking_level or fallback_level
        return InitialModel(resolved.model, level, resolved.warning)
    if cli_provider:
        provider_models = [m for m in registry.get_all() if m.provider.lower() == cli_provider.lower()]
        if not provider_models:
            raise ModelResolutionError(_unknown_provider_message(cli_provider, registry.get_providers()))
        first_of_provider = provider_models[0]
        preferred = default_model_for_provider(first_of_provider.provider, provider_models)
        return InitialModel(preferred or first_of_provider, cli_thinking or fallback_level)
    if scoped_models and not is_continuing:
        first = scoped_models[0]
        return InitialModel(first.model, cli_thinking or first.thinking_level or fallback_level)
    if default_provider and default_model_id:
        saved = registry.find(default_provider, default_model_id)
        if saved is not None and registry.has_configured_auth(saved.provider):
            return InitialModel(saved, cli_thinking or fallback_level)
    return InitialModel(choose_default_model(registry.get_available()), cli_thinking or fallback_level)


def restore_model(
    registry: ModelRegistry, provider: str, model_id: str, current: Model | None = None
) -> InitialModel:
    """The model a resumed session last used if it still exists with auth; else ``current``, else the default.

    ``message`` explains a fallback (for the UI); the thinking level is the default (the session's
    own thinking entries decide it).
    """
    saved = registry.find(provider, model_id)
    if saved is not None and registry.has_configured_auth(saved.provider):
        return InitialModel(saved, DEFAULT_THINKING_LEVEL)
    reason = "model no longer exists" if saved is None else "no auth configured"
    replacement = current or choose_default_model(registry.get_available())
    if replacement is None:
        return InitialModel(
            None, DEFAULT_THINKING_LEVEL, f"Could not restore model {provider}/{model_id} ({reason})."
        )
    message = (
        f"Could not restore model {provider}/{model_id} ({reason}). "
        f"Using {replacement.provider}/{replacement.id}."
    )
    return InitialModel(replacement, DEFAULT_THINKING_LEVEL, message)


# ---- helpers -------------------------------------------------------------------------------------


def _collation_key(model_id: str) -> list[tuple[int, str]]:
    """Order ids as a locale-aware sort does: punctuation before digits before letters, case ignored."""
    return [(2 if char.isalpha() else 1 if char.isdigit() else 0, char) for char in model_id.lower()]


def _exact_full_matches(reference: str, models: Sequence[Model]) -> list[Model]:
    wanted = reference.lower()
    return [m for m in models if m.id.lower() == wanted or f"{m.provider}/{m.id}".lower() == wanted]


def _disambiguate(reference: str, matches: list[Model], registry: ModelRegistry) -> Model:
    with_auth = [m for m in matches if registry.has_configured_auth(m.provider)]
    if len(with_auth) == 1:
        return with_auth[0]
    candidates = ", ".join(sorted(f"{m.provider}/{m.id}" for m in matches))
    hint = (
        "No matching provider has credentials."
        if not with_auth
        else "More than one matching provider has credentials."
    )
    raise ModelResolutionError(
        f'Model "{reference}" is ambiguous across providers: {candidates}. {hint} '
        "Use --provider or provider/model."
    )


def _custom_id_model(
    provider: str, pattern: str, models: Sequence[Model], thinking: str | None
) -> ResolvedModel | None:
    model_id, level = (pattern, None) if thinking else _split_level(pattern)
    base = default_model_for_provider(provider, models)
    if base is None:
        return None
    requested = thinking or level
    custom = msgspec.structs.replace(
        base,
        id=model_id,
        name=model_id,
        reasoning=True if requested and requested != "off" else base.reasoning,
    )
    provider_models = [m for m in models if m.provider == provider]
    close = close_matches(model_id, provider_models)
    warning = f'Model "{model_id}" not found for provider "{provider}"; using it as a custom model id.'
    if close:
        warning += f" Did you mean: {', '.join(close)}?"
    return ResolvedModel(custom, level, warning)


def _split_level(pattern: str) -> tuple[str, ThinkingLevelOrOff | None]:
    prefix, colon, suffix = pattern.rpartition(":")
    if colon and is_valid_thinking_level(suffix):
        return prefix, suffix
    return pattern, None


def _glob_matches(glob: str, models: Sequence[Model]) -> list[Model]:
    wanted = glob.lower()
    return [
        m
        for m in models
        if fnmatch.fnmatchcase(f"{m.provider}/{m.id}".lower(), wanted)
        or fnmatch.fnmatchcase(m.id.lower(), wanted)
    ]


def _not_found_message(display: str, query: str, models: Sequence[Model]) -> str:
    message = f'Model "{display}" not found.'
    close = close_matches(query, models)
    if close:
        message += f" Close matches: {', '.join(close)}."
    return f"{message} {LIST_MODELS_HINT}"


def _unknown_provider_message(provider: str, known: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(provider.lower(), [p.lower() for p in known], n=_MAX_CLOSE_MATCHES)
    message = f'Unknown provider "{provider}".'
    if close:
        message += f" Close matches: {', '.join(close)}."
    return f"{message} {LIST_MODELS_HINT}"

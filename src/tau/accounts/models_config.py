"""``<agent dir>/models.json``: pi's schema, its validation, and how its entries become models.

    {"providers": {"<name>": {"baseUrl", "api", "apiKey", "headers", "compat", "authHeader",
                              "name", "oauth", "models": [{"id", ...}], "modelOverrides": {...}}}}

``"oauth": "radius"`` (with ``baseUrl``) makes the provider a Radius gateway: it signs in there, and
its models are the ones the gateway lists for the account (``tau.accounts.oauth.radius``).

A provider entry with ``models`` adds models (a model with a built-in id replaces the built-in one);
a non-built-in provider defining models needs ``baseUrl``, ``apiKey`` and an ``api`` at provider or
model level. ``baseUrl``/``headers``/``compat`` on a built-in provider re-route its built-in models,
and ``modelOverrides`` patch single built-in models (``cost``, ``compat`` and ``thinkingLevelMap``
merge key by key). Comments and trailing commas are allowed. Keys tau does not know are ignored, as
pi does. Any error rejects the whole file with a ``ConfigError`` naming the file, the provider or
model, and the problem.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct, field

from tau.ai.thinking import THINKING_LEVELS
from tau.ai.types import JsonObject, Model, ModelCost
from tau.config.config_errors import ConfigError, read_json_file

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_TOKENS",
    "ModelsConfig",
    "ProviderConfig",
    "apply_model_override",
    "build_custom_model",
    "load_models_config",
    "merge_compat",
    "parse_models_config",
    "parse_provider_config",
]

DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TOKENS = 16_384

_INPUT_KINDS = ("text", "image")
_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite")
_RESIZE_KEYS = ("maxWidth", "maxHeight", "maxBytes", "jpegQuality")


class ProviderConfig(Struct, frozen=True):
    """One validated provider entry. ``models`` and ``model_overrides`` keep pi's camelCase JSON."""

    name: str
    base_url: str | None = None
    api: str | None = None
    api_key: str | None = None
    headers: dict[str, str] | None = None
    compat: JsonObject | None = None
    auth_header: bool = False
    display_name: str | None = None  # pi's "name": how logins and lists name the provider
    oauth: str | None = None  # "radius": a Radius gateway at base_url
    models: tuple[JsonObject, ...] = ()
    model_overrides: dict[str, JsonObject] = field(default_factory=dict)

    @property
    def overrides_builtins(self) -> bool:
        """Whether the entry changes the endpoint, headers or compat of the provider's built-in models."""
        return bool(self.base_url or self.headers or self.compat)


class ModelsConfig(Struct, frozen=True):
    providers: dict[str, ProviderConfig] = field(default_factory=dict)


def load_models_config(path: Path, builtin_providers: Collection[str]) -> ModelsConfig:
    """The validated content of ``path``; empty when the file does not exist. Raises ``ConfigError``."""
    data = read_json_file(path, allow_comments=True)
    if data is None:
        return ModelsConfig()
    return parse_models_config(data, path, builtin_providers)


def parse_models_config(data: Any, path: Path, builtin_providers: Collection[str]) -> ModelsConfig:
    """Validate parsed models.json ``data`` (``path`` names the file in errors)."""
    if not isinstance(data, dict):
        raise ConfigError(path, 'expected a JSON object with a "providers" object')
    providers = data.get("providers")
    if not isinstance(providers, dict):
        problem = "missing" if providers is None else "must be an object"
        raise ConfigError(path, f'"providers" {problem} (expected {{"providers": {{"<name>": {{...}}}}}})')
    return ModelsConfig(
        {
            name: parse_provider_config(name, entry, path=path, builtin=name in builtin_providers)
            for name, entry in providers.items()
        }
    )


def parse_provider_config(
    name: str, entry: Any, *, path: Path, builtin: bool, other_models: bool = False
) -> ProviderConfig:
    """Validate one provider entry (also used for providers registered by extensions);
    ``other_models``: the registration brings models of other types (classifiers) or their
    implementations, so it is not empty without chat models."""
    check = _Checker(path, f'provider "{name}"')
    fields = check.object(entry, None)
    models = tuple(
        _check_model_definition(path, name, index, definition)
        for index, definition in enumerate(check.optional_list(fields, "models"))
    )
    overrides_raw = check.optional_object(fields, "modelOverrides") or {}
    config = ProviderConfig(
        name=name,
        base_url=check.optional_string(fields, "baseUrl"),
        api=check.optional_string(fields, "api"),
        api_key=check.optional_string(fields, "apiKey"),
        headers=check.optional_headers(fields, "headers"),
        compat=check.optional_object(fields, "compat"),
        auth_header=check.optional_bool(fields, "authHeader") or False,
        display_name=check.optional_string(fields, "name"),
        oauth=check.optional_string(fields, "oauth"),
        models=models,
        model_overrides={
            model_id: _check_model_override(path, name, model_id, override)
            for model_id, override in overrides_raw.items()
        },
    )
    if config.oauth is not None and config.oauth != "radius":
        raise check.error(
            f'"oauth" must be "radius" (the only login models.json can declare), not "{config.oauth}"'
        )
    if config.oauth and not config.base_url:
        raise check.error('"baseUrl" is required when "oauth" is set (the gateway to sign in to)')
    if not models:
        if not (other_models or config.base_url or config.headers or config.compat or config.model_overrides):
            raise check.error(
                'sets nothing to use: give "baseUrl", "headers", "compat" or "modelOverrides" '
                '(to change built-in models) or "models" (to add models)'
            )
    elif not builtin and not config.oauth:  # a gateway's login is its key, its api pi-messages
        for key, value in (("baseUrl", config.base_url), ("apiKey", config.api_key)):
            if not value:
                raise check.error(f'"{key}" is required when defining models for a custom provider')
        for definition in models:
            if not config.api and not definition.get("api"):
                raise ConfigError(
                    path,
                    f'provider "{name}", model "{definition["id"]}": no "api" given '
                    "(set it on the provider or on the model)",
                )
    return config


def merge_compat(base: Mapping[str, Any] | None, override: Mapping[str, Any] | None) -> JsonObject | None:
    """``override`` over ``base`` key by key; nested objects (e.g. ``openRouterRouting``) merge one level."""
    if not override:
        return dict(base) if base is not None else None
    merged: JsonObject = dict(base or {})
    for key, value in override.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged[key] = {**current, **value}
        else:
            merged[key] = value
    return merged


def build_custom_model(
    provider: ProviderConfig,
    definition: Mapping[str, Any],
    *,
    default_api: str | None = None,
    default_base_url: str | None = None,
) -> Model:
    """A ``Model`` from a validated definition, with pi's defaults for everything not given.

    ``default_api``/``default_base_url`` come from the built-in provider of the same name, if any.
    Configured headers are not put on the model: they may name commands or variables and are
    resolved per request by the registry.
    """
    api = definition.get("api") or provider.api or default_api
    base_url = definition.get("baseUrl") or provider.base_url or default_base_url
    if not api or not base_url:
        raise ValueError(f"model {provider.name}/{definition['id']} has no api or base URL")
    cost = definition.get("cost") or {}
    return Model(
        id=definition["id"],
        name=definition.get("name") or definition["id"],
        api=api,
        provider=provider.name,
        base_url=base_url,
        reasoning=bool(definition.get("reasoning", False)),
        input=list(definition.get("input") or ["text"]),
        cost=ModelCost.from_json(cost),
        # null is "not set", as in validation (which refuses 0 and negatives).
        context_window=int(definition.get("contextWindow") or DEFAULT_CONTEXT_WINDOW),
        max_tokens=int(definition.get("maxTokens") or DEFAULT_MAX_TOKENS),
        compat=merge_compat(provider.compat, definition.get("compat")),
        thinking_level_map=_copy_level_map(definition.get("thinkingLevelMap")),
        prompt_cache=_copy_prompt_cache(definition.get("promptCache")),
        input_limits=merge_input_limits(None, definition.get("inputLimits")),
        sampling_params=_copy_object(definition.get("samplingParams")),
        sampling_params_by_thinking_level=merge_sampling_by_level(
            None, definition.get("samplingParamsByThinkingLevel")
        ),
    )


def apply_model_override(model: Model, override: Mapping[str, Any]) -> Model:
    """A copy of ``model`` with a validated ``modelOverrides`` entry merged in (headers excepted)."""
    changes: dict[str, Any] = {}
    if "name" in override:
        changes["name"] = override["name"]
    if "reasoning" in override:
        changes["reasoning"] = override["reasoning"]
    if "input" in override:
        changes["input"] = list(override["input"])
    if override.get("contextWindow") is not None:
        changes["context_window"] = int(override["contextWindow"])
    if override.get("maxTokens") is not None:
        changes["max_tokens"] = int(override["maxTokens"])
    if "cost" in override:
        changes["cost"] = ModelCost.from_json({**model.cost.to_json(), **override["cost"]})
    if "compat" in override:
        changes["compat"] = merge_compat(model.compat, override["compat"])
    if "thinkingLevelMap" in override:
        changes["thinking_level_map"] = {**(model.thinking_level_map or {}), **override["thinkingLevelMap"]}
    if isinstance(override.get("inputLimits"), dict):
        changes["input_limits"] = merge_input_limits(model.input_limits, override["inputLimits"])
    if "promptCache" in override:
        changes["prompt_cache"] = {**(model.prompt_cache or {}), **override["promptCache"]}
    if isinstance(override.get("samplingParams"), dict):
        changes["sampling_params"] = {**(model.sampling_params or {}), **override["samplingParams"]}
    if isinstance(override.get("samplingParamsByThinkingLevel"), dict):
        changes["sampling_params_by_thinking_level"] = merge_sampling_by_level(
            model.sampling_params_by_thinking_level, override["samplingParamsByThinkingLevel"]
        )
    return msgspec.structs.replace(model, **changes)


def merge_input_limits(base: JsonObject | None, override: Any) -> JsonObject | None:
    """``inputLimits`` with ``override`` merged in as pi 1.6 merges it: its top-level keys, then
    ``images``' keys, then ``images.resize``'s keys (a copy; ``base`` is left as it is)."""
    copied = json.loads(json.dumps(base)) if base is not None else None
    if not isinstance(override, dict):
        return copied
    merged: JsonObject = {**(copied or {}), **json.loads(json.dumps(override))}
    base_images = (copied or {}).get("images")
    images = override.get("images")
    if isinstance(images, dict):
        base_images = base_images if isinstance(base_images, dict) else {}
        merged_images: JsonObject = {**base_images, **json.loads(json.dumps(images))}
        resize = images.get("resize")
        if isinstance(resize, dict):
            base_resize = base_images.get("resize")
            merged_images["resize"] = {**(base_resize if isinstance(base_resize, dict) else {}), **resize}
        elif "resize" in base_images:
            merged_images["resize"] = base_images["resize"]
        merged["images"] = merged_images
    elif base_images is not None:
        merged["images"] = base_images
    return merged


def merge_sampling_by_level(base: Mapping[str, Any] | None, override: Any) -> dict[str, JsonObject] | None:
    """``samplingParamsByThinkingLevel`` with ``override``'s levels merged in key by key (pi's rule)."""
    if not isinstance(override, dict):
        return {level: dict(params) for level, params in base.items()} if base else None
    merged = {level: dict(params) for level, params in (base or {}).items()}
    for level, params in override.items():
        if isinstance(params, dict):
            merged[level] = {**merged.get(level, {}), **params}
    return merged


def _copy_prompt_cache(value: Any) -> JsonObject | None:
    """``promptCache``: the provider's cache lifetime in seconds per retention tier (``short``, ``long``)."""
    return dict(value) if isinstance(value, dict) else None


def _copy_object(value: Any) -> JsonObject | None:
    return dict(value) if isinstance(value, dict) else None


def _copy_level_map(value: Any) -> dict[str, str | None] | None:
    return dict(value) if isinstance(value, dict) else None


def _check_model_definition(path: Path, provider: str, index: int, definition: Any) -> JsonObject:
    where = f'provider "{provider}", models[{index}]'
    check = _Checker(path, where)
    checked = check.object(definition, None)
    model_id = check.optional_string(checked, "id")
    if not model_id:
        raise check.error('"id" is required')
    check.where = f'provider "{provider}", model "{model_id}"'
    for key in ("name", "api", "baseUrl"):
        check.optional_string(checked, key)
    _check_model_fields(check, checked, partial_cost=False)
    return checked


def _check_model_override(path: Path, provider: str, model_id: str, override: Any) -> JsonObject:
    check = _Checker(path, f'provider "{provider}", modelOverrides "{model_id}"')
    checked = check.object(override, None)
    check.optional_string(checked, "name")
    _check_model_fields(check, checked, partial_cost=True)
    return checked


def _check_model_fields(check: _Checker, data: JsonObject, *, partial_cost: bool) -> None:
    check.optional_bool(data, "reasoning")
    inputs = check.optional_list(data, "input")
    for kind in inputs:
        if kind not in _INPUT_KINDS:
            raise check.error(f'"input" may only contain "text" and "image", found {kind!r}')
    for key in ("contextWindow", "maxTokens"):
        value = data.get(key)
        if value is not None and (not _is_number(value) or value <= 0):
            raise check.error(f'"{key}" must be a positive number, found {value!r}')
    cost = check.optional_object(data, "cost")
    if cost is not None:
        for key in _COST_KEYS:
            if key not in cost:
                if partial_cost:
                    continue
                raise check.error(f'"cost" needs all of {", ".join(_COST_KEYS)} (missing "{key}")')
            if not _is_number(cost[key]):
                raise check.error(f'"cost.{key}" must be a number, found {cost[key]!r}')
    check.optional_headers(data, "headers")
    check.optional_object(data, "compat")
    prompt_cache = check.optional_object(data, "promptCache")
    for tier, seconds in (prompt_cache or {}).items():
        if tier not in ("short", "long"):
            raise check.error(f'"promptCache" has unknown tier {tier!r} (tiers: short, long)')
        if not _is_number(seconds) or seconds <= 0:
            raise check.error(f'"promptCache.{tier}" must be a positive number of seconds, found {seconds!r}')
    input_limits = check.optional_object(data, "inputLimits")
    images = check.optional_object(input_limits or {}, "images")
    resize = check.optional_object(images or {}, "resize")
    for key, value in (resize or {}).items():
        if key in _RESIZE_KEYS and (not _is_number(value) or value <= 0):
            raise check.error(f'"inputLimits.images.resize.{key}" must be a positive number, found {value!r}')
    check.optional_object(data, "samplingParams")
    by_level = check.optional_object(data, "samplingParamsByThinkingLevel")
    for level, params in (by_level or {}).items():
        if level not in THINKING_LEVELS:
            raise check.error(
                f'"samplingParamsByThinkingLevel" has unknown level {level!r} (levels: {", ".join(THINKING_LEVELS)})'
            )
        if not isinstance(params, dict):
            raise check.error(
                f'"samplingParamsByThinkingLevel.{level}" must be an object, found {_describe(params)}'
            )
    level_map = check.optional_object(data, "thinkingLevelMap")
    for level, value in (level_map or {}).items():
        if level not in THINKING_LEVELS:
            raise check.error(
                f'"thinkingLevelMap" has unknown level {level!r} (levels: {", ".join(THINKING_LEVELS)})'
            )
        if value is not None and not isinstance(value, str):
            raise check.error(f'"thinkingLevelMap.{level}" must be a string or null')


class _Checker:
    """Type checks for one place in the file; each failure is a ``ConfigError`` naming that place."""

    def __init__(self, path: Path, where: str) -> None:
        self.path = path
        self.where = where

    def error(self, problem: str) -> ConfigError:
        return ConfigError(self.path, f"{self.where}: {problem}")

    def object(self, value: Any, key: str | None) -> JsonObject:
        if not isinstance(value, dict):
            label = f'"{key}"' if key else "entry"
            raise self.error(f"{label} must be an object, found {_describe(value)}")
        return value

    def optional_object(self, data: JsonObject, key: str) -> JsonObject | None:
        value = data.get(key)
        return None if value is None else self.object(value, key)

    def optional_list(self, data: JsonObject, key: str) -> list[Any]:
        value = data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(f'"{key}" must be an array, found {_describe(value)}')
        return value

    def optional_string(self, data: JsonObject, key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.error(f'"{key}" must be a non-empty string, found {_describe(value)}')
        return value

    def optional_bool(self, data: JsonObject, key: str) -> bool | None:
        value = data.get(key)
        if value is not None and not isinstance(value, bool):
            raise self.error(f'"{key}" must be true or false, found {_describe(value)}')
        return value

    def optional_headers(self, data: JsonObject, key: str) -> dict[str, str] | None:
        headers = self.optional_object(data, key)
        if headers is None:
            return None
        for name, value in headers.items():
            if not isinstance(value, str):
                raise self.error(f'"{key}.{name}" must be a string, found {_describe(value)}')
        return dict(headers)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"string {value!r}" if value else "an empty string"
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "null"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"number {value!r}"

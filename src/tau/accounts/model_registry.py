"""The models tau can use: the built-in catalogue plus the user's models.json, and their credentials.

Built-in models come first (catalogue order), with models.json provider overrides and
``modelOverrides`` applied; custom models follow, replacing a built-in model of the same provider
and id. If models.json is invalid, the registry holds the built-in models only and ``get_error()``
says why. ``refresh()`` re-reads the file (hosts call it when a model picker opens).

Configured header values and models.json ``apiKey`` values may be ``!commands`` or variable names,
so they are resolved per request by ``get_api_key_and_headers()``, never stored on ``Model``.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from tau.accounts.auth_hints import missing_auth_message
from tau.accounts.auth_storage import (
    AuthStatus,
    AuthStorage,
    InvalidApiKeyError,
    OAuthRefreshError,
    resolve_config_value,
    unresolved_reason,
)
from tau.accounts.models_config import (
    ModelsConfig,
    ProviderConfig,
    apply_model_override,
    build_custom_model,
    load_models_config,
    parse_provider_config,
)
from tau.accounts.provider_settings import missing_setting, missing_setting_message
from tau.accounts.virtual_routes import VIRTUAL_MODEL_API, is_virtual_model
from tau.ai.catalogue import get_providers, shared_models
from tau.ai.redaction import register_secret
from tau.ai.types import AssistantMessage, Context, Message, Model
from tau.config.config_errors import ConfigError
from tau.config.paths import models_path

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from tau.accounts.virtual_routes import ResolvedRoute, VirtualRoute
    from tau.ai.abort import AbortSignal
    from tau.ai.classifier_models import ClassifierModel
    from tau.ai.classify import ClassifierContext, ClassifierResult, ClassifyFunction
    from tau.ai.events import AssistantMessageEventStream
    from tau.ai.image_models import ImageModel
    from tau.ai.images import ImagesContext, ImagesResult
    from tau.ai.options import StreamOptions
    from tau.extensions.virtual_models import (
        ModelRoute,
        ModelRouteReason,
        ModelRouteRequest,
        VirtualModelDefinition,
    )

__all__ = [
    "VIRTUAL_MODEL_API",
    "ModelRegistry",
    "ProviderInfo",
    "RequestAuth",
    "is_virtual_model",
    "missing_auth_message",
]

_THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


_ModelKey = tuple[str, str]
# Providers whose login learns which models the account may use (stored in models-store.json).
ACCOUNT_LISTED_PROVIDERS = frozenset({"radius"})


class ProviderInfo(Struct, frozen=True):
    """A provider as ``ModelRegistry.get_provider`` gives it: its id, the API and base URL most of
    its models use, and its models in registry order."""

    id: str
    api: str
    base_url: str
    models: tuple[Model, ...]


class RequestAuth(Struct, frozen=True):
    """What one request needs beyond the model: the key and the resolved configured headers.

    ``error`` is set (and the rest empty) when a configured ``!command`` failed or printed nothing.
    ``api_key`` is ``None`` without error when nothing is configured for the provider.
    """

    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    # The API host a login must be used with (GitHub Copilot's per-account endpoint), else None.
    base_url: str | None = None
    # Settings the stored credential carries for the provider (pi's ``env``: Vertex's project, ...).
    env: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


class _ModelTable:
    """Models in registry order, looked up by (provider, id), with their configured header templates."""

    __slots__ = ("header_templates", "index", "models")

    def __init__(self) -> None:
        self.models: list[Model] = []
        self.index: dict[_ModelKey, Model] = {}
        self.header_templates: dict[_ModelKey, dict[str, str]] = {}

    def add(self, model: Model, headers: dict[str, str] | None) -> None:
        """Append ``model``, or put it in the place of the model with its provider and id."""
        key = (model.provider, model.id)
        if key in self.index:
            position = next(i for i, m in enumerate(self.models) if (m.provider, m.id) == key)
            self.models[position] = model
        else:
            self.models.append(model)
        self.index[key] = model
        if headers:
            self.header_templates[key] = headers
        else:
            self.header_templates.pop(key, None)

    def remove(self, key: _ModelKey) -> None:
        if self.index.pop(key, None) is not None:
            self.models = [m for m in self.models if (m.provider, m.id) != key]
            self.header_templates.pop(key, None)

    def drop_provider(self, provider: str) -> None:
        for model in [m for m in self.models if m.provider == provider]:
            del self.index[(model.provider, model.id)]
            self.header_templates.pop((model.provider, model.id), None)
        self.models = [m for m in self.models if m.provider != provider]

    def keep(self, earlier: _ModelTable) -> None:
        """Use ``earlier``'s objects for the models it holds with the same value."""
        positions = {(m.provider, m.id): i for i, m in enumerate(self.models)}
        for key, model in earlier.index.items():
            if key in positions and self.index[key] == model:
                self.models[positions[key]] = self.index[key] = model


class ModelRegistry:
    """Built-in and configured models, looked up by provider and id, with key resolution via ``AuthStorage``."""

    def __init__(self, auth_storage: AuthStorage, models_json: Path | None) -> None:
        """Load the catalogue and ``models_json`` (``None``: built-in models only)."""
        self._auth = auth_storage
        self._models_json = models_json
        self._registered: dict[str, ProviderConfig] = {}
        self._registered_classifiers: dict[str, list[dict[str, Any]]] = {}
        """The ``type: "classifier"`` models of registered providers with ``models``, as registered."""
        self._classifier_implementations: dict[str, dict[str, ClassifyFunction]] = {}
        """The ``classifiers`` of registered providers: their own classifier apis' functions."""
        self._virtual: dict[str, dict[str, Model]] = {}
        """Virtual models by provider, then id (``add_virtual_model``)."""
        self._routes: dict[_ModelKey, VirtualRoute] = {}
        self._config = ModelsConfig()
        self._builtin_providers: list[str] = []
        self._gateways: dict[str, ProviderConfig] = {}
        self._providers: dict[str, ProviderConfig] = {}
        # Every model, built on the first call that needs them all; until then a lookup builds
        # only its provider's models (a run with one model builds a handful, not ~1700).
        self._table: _ModelTable | None = None
        self._partial: dict[str, _ModelTable] = {}
        self._error: ConfigError | None = None
        self.refresh()

    @classmethod
    def create(
        cls, agent_dir_path: Path | None = None, auth_storage: AuthStorage | None = None
    ) -> ModelRegistry:
        """The registry of an agent dir: its models.json, and its auth.json unless a store is given."""
        auth = auth_storage if auth_storage is not None else AuthStorage.create(agent_dir_path)
        return cls(auth, models_path(agent_dir_path))

    @property
    def auth_storage(self) -> AuthStorage:
        return self._auth

    def get_error(self) -> ConfigError | None:
        """Why models.json was rejected at the last load, or ``None``."""
        return self._error

    # ---- loading ---------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Re-read the catalogue's providers, models.json and the registered providers; the model
        list is rebuilt when next asked for."""
        self._builtin_providers = get_providers()
        self._error = None
        config = ModelsConfig()
        if self._models_json is not None:
            try:
                config = load_models_config(self._models_json, self._builtin_providers)
            except ConfigError as error:
                self._error = error
        self._config = config
        self._providers = {**config.providers, **self._registered}
        self._gateways = {c.name: c for c in config.providers.values() if c.oauth == "radius"}
        self._configure_gateways(self._gateways)
        self._table = None
        self._partial = {}

    def _build(self, only: Collection[str] | None = None) -> _ModelTable:
        """The models of every provider (or of those in ``only``), in registry order: the
        catalogue's with models.json overrides, then models.json's own, then the registered
        providers' changes."""
        table = _ModelTable()
        builtin, gateways, config = self._builtin_providers, self._gateways, self._config
        for provider in [*builtin, *(name for name in gateways if name not in builtin)]:
            if only is None or provider in only:
                for model in self._builtin_models(provider, gateways.get(provider)):
                    table.add(*self._configure_builtin(model, config.providers.get(provider)))
        for provider_config in config.providers.values():
            if only is None or provider_config.name in only:
                self._add_custom_models(table, provider_config)
        for provider_config in self._registered.values():
            if only is None or provider_config.name in only:
                self._apply_registered(table, provider_config)
        for provider, virtual in self._virtual.items():
            if only is None or provider in only:
                # A virtual model hides a physical one of the same id a later refresh adds.
                for model in virtual.values():
                    table.add(model, None)
        return table

    def _all(self) -> _ModelTable:
        if self._table is None:
            table = self._build()
            # A model a lookup handed out before stays the same object.
            for partial in self._partial.values():
                table.keep(partial)
            self._table, self._partial = table, {}
        return self._table

    def _of_provider(self, provider: str) -> _ModelTable:
        if self._table is not None:
            return self._table
        table = self._partial.get(provider)
        if table is None:
            table = self._partial[provider] = self._build(only={provider})
        return table

    def _of_providers(self, providers: Collection[str]) -> _ModelTable:
        """The models of ``providers`` (maybe more), in registry order; each of them then looks its
        models up there, and the objects earlier lookups returned are kept."""
        if self._table is not None:
            return self._table
        tables = {id(self._partial.get(p)): self._partial.get(p) for p in providers}
        if len(tables) == 1 and (table := next(iter(tables.values()))) is not None:
            return table
        table = self._build(only=providers)
        for earlier in tables.values():
            if earlier is not None:
                table.keep(earlier)
        for provider in providers:
            self._partial[provider] = table
        return table

    def _builtin_models(self, provider: str, gateway: ProviderConfig | None) -> list[Model]:
        """The catalogue's models, or for a provider that lists them per account (Radius, and the
        Radius gateways of models.json) the list its login stored in models-store.json beside
        models.json, as pi does. A gateway other than pi's has no list before its first login."""
        if (provider in ACCOUNT_LISTED_PROVIDERS or gateway is not None) and self._models_json is not None:
            from tau.accounts.models_store import MODELS_STORE_FILE, stored_models

            stored = stored_models(provider, self._models_json.parent / MODELS_STORE_FILE)
            if stored is not None:
                return stored
        if gateway is not None:
            from tau.accounts.oauth.radius import GATEWAY, gateway_origin

            if provider != "radius" or gateway_origin(gateway.base_url or "") != GATEWAY:
                return []
        return shared_models(provider)

    @staticmethod
    def _configure_gateways(gateways: Mapping[str, ProviderConfig]) -> None:
        """Give each models.json Radius gateway its login (``tau auth login <provider>``, refresh)."""
        # tau.accounts.oauth is loaded only when some gateway needs it (or an earlier load set some).
        if not gateways and "tau.accounts.oauth" not in sys.modules:
            return
        from tau.accounts.oauth import configure_radius_gateways

        configure_radius_gateways(
            {name: (c.display_name or name, c.base_url or "") for name, c in gateways.items()}
        )

    def register_provider(
        self,
        name: str,
        config: Mapping[str, Any],
        *,
        classifiers: Mapping[str, ClassifyFunction] | None = None,
    ) -> None:
        """Add or override a provider from code (extensions), in the models.json entry format.

        With ``models`` the provider's models are replaced by these; otherwise ``baseUrl``/``headers``
        re-route its existing models. ``models`` entries with ``"type": "classifier"`` are the
        provider's classifier models (pi's ``ClassifierModel`` JSON; ``baseUrl`` defaults to the
        provider's), replacing its catalogue ones. ``classifiers`` (pi's) maps a classifier api to
        the function that speaks it for this provider's classifier models, before tau's own.
        Raises ``ConfigError`` for an invalid entry.
        """
        data = dict(config)
        models = data.get("models")
        classifier_models: list[dict[str, Any]] | None = None
        if isinstance(models, list):
            kinds = [entry.get("type", "chat") if isinstance(entry, Mapping) else "chat" for entry in models]
            classifier_models = [
                {**entry, "provider": name, "baseUrl": entry.get("baseUrl") or data.get("baseUrl") or ""}
                for entry, kind in zip(models, kinds, strict=True)
                if kind == "classifier"
            ]
            data["models"] = [
                {k: v for k, v in entry.items() if k != "type"} if isinstance(entry, Mapping) else entry
                for entry, kind in zip(models, kinds, strict=True)
                if kind != "classifier"
            ]
        parsed = parse_provider_config(
            name,
            data,
            path=Path(f"<registered provider {name}>"),
            builtin=name in get_providers(),
            other_models=bool(classifier_models or classifiers),
        )
        self._registered[name] = parsed
        if classifier_models is None:
            self._registered_classifiers.pop(name, None)
        else:
            self._registered_classifiers[name] = classifier_models
        if classifiers:
            self._classifier_implementations[name] = dict(classifiers)
        else:
            self._classifier_implementations.pop(name, None)
        self.refresh()

    def unregister_provider(self, name: str) -> None:
        """Drop a registered provider, restoring whatever it replaced."""
        self._registered_classifiers.pop(name, None)
        self._classifier_implementations.pop(name, None)
        if self._registered.pop(name, None) is not None:
            self.refresh()

    def registered_classifiers(self, provider: str) -> list[dict[str, Any]] | None:
        """The classifier models (JSON) a registered provider with ``models`` has, else ``None``."""
        found = self._registered_classifiers.get(provider)
        return None if found is None else [dict(entry) for entry in found]

    def registered_classifier_providers(self) -> list[str]:
        return list(self._registered_classifiers)

    def classifier_implementations(self, provider: str) -> Mapping[str, ClassifyFunction]:
        """The classifier apis a registered provider speaks itself (``classifiers``), by api."""
        return self._classifier_implementations.get(provider, {})

    def register_virtual_model(self, definition: VirtualModelDefinition) -> None:
        """pi's ``modelRuntime.registerVirtualModel(definition)``: a virtual model registered
        without an extension (SDK code). Registering the same provider and id again replaces it.
        Its ``route(request, ctx)`` gets a ``RouteContext`` as ``ctx`` (this registry and the
        request's signal). Raises ``ValueError`` for an empty provider or id, or an id that is a
        physical model of that provider."""
        from tau.extensions.virtual_models import RouteContext, VirtualModelDefinition

        if not isinstance(definition, VirtualModelDefinition):
            raise TypeError("register_virtual_model takes a VirtualModelDefinition")
        route = definition.route

        def routed(request: ModelRouteRequest) -> ModelRoute | Awaitable[ModelRoute]:
            return route(request, RouteContext(self, request.signal))

        self.add_virtual_model(
            definition.provider,
            definition.id,
            definition.name,
            route=routed,
            thinking_levels=definition.thinking_levels,
            context_window=definition.context_window,
            max_tokens=definition.max_tokens,
            input=definition.input,
        )

    def add_virtual_model(
        self,
        provider: str,
        model_id: str,
        name: str,
        *,
        route: VirtualRoute,
        thinking_levels: Sequence[str] = ("off",),
        context_window: int | None = None,
        max_tokens: int | None = None,
        input: Sequence[str] = ("text", "image"),
    ) -> None:
        """List a virtual model under ``provider`` (replacing a virtual one of that id), routed by
        ``route(request)``. Raises ``ValueError`` when ``model_id`` is a physical model of
        ``provider``."""
        if not provider.strip() or not model_id.strip():
            raise ValueError("Virtual model provider and id must not be empty.")
        existing = self.find(provider, model_id)
        if existing is not None and not is_virtual_model(existing):
            raise ValueError(f"Virtual model {provider}/{model_id} conflicts with a physical model.")
        levels = list(thinking_levels) or ["off"]
        model = Model(
            id=model_id,
            name=name,
            api=VIRTUAL_MODEL_API,
            provider=provider,
            base_url="",
            reasoning=any(level != "off" for level in levels),
            input=list(input),
            context_window=context_window or 0,
            max_tokens=max_tokens or 0,
            thinking_level_map={level: level if level in levels else None for level in _THINKING_LEVELS},
        )
        self._virtual.setdefault(provider, {})[model_id] = model
        self._routes[(provider, model_id)] = route
        # Built tables take it in place: the models lookups handed out stay the same objects.
        for table in self._built_tables(provider):
            table.add(model, None)

    def unregister_virtual_model(self, provider: str, model_id: str) -> None:
        models = self._virtual.get(provider)
        if models is None or models.pop(model_id, None) is None:
            return
        if not models:
            del self._virtual[provider]
        self._routes.pop((provider, model_id), None)
        for table in self._built_tables(provider):
            table.remove((provider, model_id))

    def virtual_route(self, provider: str, model_id: str) -> VirtualRoute | None:
        """The router of a registered virtual model, or ``None``."""
        return self._routes.get((provider, model_id))

    async def resolve_virtual_model(
        self,
        model: Model,
        messages: Sequence[Message],
        *,
        reason: ModelRouteReason,
        thinking_level: str,
        signal: AbortSignal | None = None,
        state: Any = None,
        failed: AssistantMessage | None = None,
    ) -> ResolvedRoute:
        """Ask virtual ``model``'s router where this request goes (pi's ``resolveModel``): a
        physical model with credentials and its clamped level. Raises ``VirtualRoutingError``."""
        from tau.accounts.virtual_routes import resolve_route

        return await resolve_route(
            self,
            model,
            messages,
            reason=reason,
            thinking_level=thinking_level,
            signal=signal,
            state=state,
            failed=failed,
        )

    def _built_tables(self, provider: str) -> list[_ModelTable]:
        """The tables built so far that hold (or will be asked for) ``provider``'s models."""
        tables = [self._table, self._partial.get(provider)]
        return list({id(t): t for t in tables if t is not None}.values())

    def _is_physical_provider(self, provider: str) -> bool:
        return (
            provider in self._builtin_providers
            or provider in self._gateways
            or provider in self._config.providers
            or provider in self._registered
        )

    def _only_virtual(self, provider: str) -> bool:
        """Whether ``provider`` lists only virtual models: it needs no credentials."""
        return provider in self._virtual and not self._is_physical_provider(provider)

    def get_physical(self, provider: str, model_id: str) -> Model | None:
        """The catalog model of this provider and id that is not virtual, or ``None``."""
        model = self.find(provider, model_id)
        return model if model is not None and not is_virtual_model(model) else None

    def _configure_builtin(
        self, model: Model, config: ProviderConfig | None
    ) -> tuple[Model, dict[str, str] | None]:
        if config is None:
            return model, None
        headers: dict[str, str] = {}
        if config.overrides_builtins:
            # A gateway's baseUrl is where it signs in; its models keep the base URL it lists.
            if config.base_url and config.oauth != "radius":
                model.base_url = config.base_url
            if config.compat:
                model = apply_model_override(model, {"compat": config.compat})
            headers.update(config.headers or {})
        override = config.model_overrides.get(model.id)
        if override is not None:
            model = apply_model_override(model, override)
            headers.update(override.get("headers") or {})
        return model, headers or None

    def _add_custom_models(self, table: _ModelTable, config: ProviderConfig) -> None:
        if not config.models:
            return
        default_api, default_base_url = _builtin_defaults(config.name, self._builtin_providers)
        if config.oauth == "radius":
            default_api = default_api or "pi-messages"
        for definition in config.models:
            model = build_custom_model(
                config, definition, default_api=default_api, default_base_url=default_base_url
            )
            headers = {**(config.headers or {}), **(definition.get("headers") or {})}
            # pi applies modelOverrides to the provider's own models.json models too.
            override = config.model_overrides.get(model.id)
            if override is not None:
                model = apply_model_override(model, override)
                headers.update(override.get("headers") or {})
            table.add(model, headers or None)

    def _apply_registered(self, table: _ModelTable, config: ProviderConfig) -> None:
        if config.models:
            table.drop_provider(config.name)
            self._add_custom_models(table, config)
            return
        for model in table.models:
            if model.provider != config.name:
                continue
            if config.base_url:
                model.base_url = config.base_url
            if config.headers:
                key = (model.provider, model.id)
                table.header_templates[key] = {**table.header_templates.get(key, {}), **config.headers}

    def account_listed_providers(self) -> dict[str, tuple[str, str]]:
        """The providers whose models the account's gateway lists: id -> (name, gateway URL)."""
        from tau.accounts.oauth.radius import GATEWAY

        listed = {"radius": ("Radius", GATEWAY)}
        for config in self._providers.values():
            if config.oauth == "radius" and config.base_url:
                listed[config.name] = (config.display_name or config.name, config.base_url)
        return listed

    def is_account_listed(self, provider: str) -> bool:
        """Whether the account's gateway lists ``provider``'s models (Radius and its gateways)."""
        config = self._providers.get(provider)
        return provider == "radius" or (config is not None and config.oauth == "radius")

    def has_account_listed_auth(self) -> bool:
        """Whether Radius or a models.json Radius gateway has credentials (loads nothing)."""
        names = {"radius", *(c.name for c in self._providers.values() if c.oauth == "radius")}
        return any(self.has_configured_auth(name) for name in names)

    @property
    def models_store_path(self) -> Path | None:
        """Where the account-listed models are kept (beside models.json), or ``None`` (the default)."""
        if self._models_json is None:
            return None
        from tau.accounts.models_store import MODELS_STORE_FILE

        return self._models_json.parent / MODELS_STORE_FILE

    # ---- lookups ---------------------------------------------------------------------------------

    def get_all(self) -> list[Model]:
        """Every model (built-in and configured). The models are shared: do not change them."""
        return list(self._all().models)

    def get_available(self) -> list[Model]:
        """The models whose provider has some auth configured (runs no command, refreshes nothing);
        only those providers' models are built."""
        names = [
            *self._builtin_providers,
            *self._gateways,
            *self._config.providers,
            *self._registered,
            *self._virtual,
        ]
        configured = {name for name in dict.fromkeys(names) if self.has_configured_auth(name)}
        if not configured:
            return []
        copilot = self._login_model_ids("github-copilot")
        return [
            model
            for model in self._of_providers(configured).models
            if model.provider in configured
            and not (model.provider == "github-copilot" and copilot is not None and model.id not in copilot)
        ]

    def _login_model_ids(self, provider: str) -> set[str] | None:
        """The models a login says its account may use (Copilot's ``availableModelIds``, as pi), if any."""
        credential = self._auth.get(provider)
        allowed = (
            credential.get("availableModelIds") if credential and credential.get("type") == "oauth" else None
        )
        if not isinstance(allowed, list) or not all(isinstance(item, str) for item in allowed):
            return None
        return set(allowed)

    def get_providers(self) -> list[str]:
        """Providers with at least one model, in model order."""
        return list(dict.fromkeys(model.provider for model in self._all().models))

    def get_provider_models(self, provider: str) -> list[Model]:
        """The models of one provider (exact name), in registry order; builds no other provider's."""
        return [model for model in self._of_provider(provider).models if model.provider == provider]

    def find(self, provider: str, model_id: str) -> Model | None:
        """The model with this provider and id, or ``None``."""
        return self._of_provider(provider).index.get((provider, model_id))

    # ---- model types (pi's chat, image and classifier models) ------------------------------------

    def provider_config(self, provider: str) -> ProviderConfig | None:
        """The models.json (or registered) entry of ``provider``, if any."""
        return self._providers.get(provider)

    def configured_providers(self) -> list[str]:
        """The providers models.json (or an extension) configures, in its order; builds no model
        list."""
        return list(self._providers)

    def get_models_of_type(
        self, kind: str, provider: str | None = None
    ) -> list[Model] | list[ImageModel] | list[ClassifierModel]:
        """Every model of a type (``chat``, ``image``, ``classifier``), optionally of one provider.
        Image and classifier models are never among ``get_all()``: ``/model`` does not list them."""
        if kind == "image":
            from tau.accounts.image_generation import image_models

            return image_models(self, provider)
        if kind == "classifier":
            from tau.accounts.classification import classifier_models

            return classifier_models(self, provider)
        if kind != "chat":
            return []
        return self.get_all() if provider is None else self.get_provider_models(provider)

    def get_available_of_type(
        self, kind: str, provider: str | None = None
    ) -> list[Model] | list[ImageModel] | list[ClassifierModel]:
        """The models of a type whose provider has some auth configured."""
        if kind == "image":
            from tau.accounts.image_generation import image_models

            return [m for m in image_models(self, provider) if self.has_configured_auth(m.provider)]
        if kind == "classifier":
            from tau.accounts.classification import classifier_models

            return [m for m in classifier_models(self, provider) if self.has_configured_auth(m.provider)]
        if kind != "chat":
            return []
        return [m for m in self.get_available() if provider is None or m.provider == provider]

    def get_model_of_type(
        self, kind: str, provider: str, model_id: str
    ) -> Model | ImageModel | ClassifierModel | None:
        """One model of a type, or ``None``."""
        if kind == "image":
            from tau.accounts.image_generation import find_configured_image_model

            return find_configured_image_model(self, provider, model_id)
        if kind == "classifier":
            from tau.accounts.classification import find_configured_classifier_model

            return find_configured_classifier_model(self, provider, model_id)
        return self.find(provider, model_id) if kind == "chat" else None

    async def generate_images(
        self,
        model: ImageModel | Mapping[str, Any],
        context: ImagesContext | Mapping[str, Any],
        signal: AbortSignal | None = None,
    ) -> ImagesResult:
        """Generate images with an image model (only its provider and id are used: a
        ``{"provider", "id"}`` mapping works too) and the provider's credentials. ``context`` is an
        ``ImagesContext`` or pi's ``{"input": [text and image blocks]}`` (a malformed one raises
        ``ValueError``). Never raises for a provider failure: check ``stop_reason`` and
        ``error_message``."""
        from tau.accounts.image_generation import run_image_model
        from tau.ai.images import ImagesContext, images_context_from_json

        if not isinstance(context, ImagesContext):
            context = images_context_from_json(dict(context))

        if isinstance(model, Mapping):
            provider, model_id = str(model.get("provider", "")), str(model.get("id", ""))
        else:
            provider, model_id = model.provider, model.id
        return await run_image_model(
            self, provider, model_id, context, signal, missing_auth_message(provider)
        )

    async def classify(
        self,
        model: ClassifierModel | Mapping[str, Any],
        context: ClassifierContext | Mapping[str, Any],
        signal: AbortSignal | None = None,
        *,
        temperature: float | None = None,
    ) -> ClassifierResult:
        """Classify with a classifier model (only its provider and id are used: a
        ``{"provider", "id"}`` mapping works too) and the provider's credentials. ``context`` is a
        ``ClassifierContext`` or pi's ``{"state", "questions", "images"?}`` (a malformed one raises
        ``ValueError``); ``temperature`` softens (above 1) the label probabilities of llama.cpp chat
        models used as classifiers. Never raises for a provider failure: check ``stop_reason`` and
        ``error_message``."""
        from tau.accounts.classification import run_classifier_model
        from tau.ai.classify import ClassifierContext, classifier_context_from_json

        if not isinstance(context, ClassifierContext):
            context = classifier_context_from_json(dict(context))
        if isinstance(model, Mapping):
            provider, model_id = str(model.get("provider", "")), str(model.get("id", ""))
        else:
            provider, model_id = model.provider, model.id
        return await run_classifier_model(
            self, provider, model_id, context, signal, missing_auth_message(provider), temperature
        )

    # ---- model calls -----------------------------------------------------------------------------

    def stream_simple(
        self, model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
    ) -> AssistantMessageEventStream:
        """pi's ``modelRegistry.streamSimple``: ``tau.ai.stream_simple`` (``reasoning=`` a
        level) with this registry's providers and credentials, resolved for the request. A virtual
        model is routed first (reason ``direct``). Iterate the stream for the events and await
        ``result()`` for the final message. Never raises for a setup failure (no credentials,
        a failed route): the stream ends with an ``error`` event. Call it from async code."""
        from tau.accounts.model_requests import registry_stream

        return registry_stream(self, model, context, options, overrides, simple=True)

    async def complete_simple(
        self, model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
    ) -> AssistantMessage:
        """The final message of ``stream_simple(...)``."""
        return await self.stream_simple(model, context, options, **overrides).result()

    def stream(
        self, model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
    ) -> AssistantMessageEventStream:
        """``stream_simple`` with the API's raw options (``tau.ai.stream``): unknown keyword
        arguments are per-API options. A virtual model is routed with level ``off`` and the level
        it routes to is not applied (raw options carry their own reasoning settings)."""
        from tau.accounts.model_requests import registry_stream

        return registry_stream(self, model, context, options, overrides, simple=False)

    async def complete(
        self, model: Model, context: Context, options: StreamOptions | None = None, **overrides: Any
    ) -> AssistantMessage:
        """pi's ``modelRegistry.complete``: the final message of ``stream(...)``; check
        ``stop_reason`` and ``error_message``."""
        return await self.stream(model, context, options, **overrides).result()

    # ---- credentials -----------------------------------------------------------------------------

    def has_configured_auth(self, provider: str) -> bool:
        if self._only_virtual(provider):
            return True
        return self._auth.has_auth(provider, fallback=self._api_key_config(provider))

    def missing_auth_message(self, provider: str) -> str:
        """Why ``provider`` has no usable credentials, in one line: no key, or (Cloudflare) a key
        without the account or gateway its requests name."""
        if self._auth.key_status(provider, fallback=self._api_key_config(provider)).configured:
            setting = missing_setting(provider, self._auth.get_credential_env(provider))
            if setting is not None:
                return missing_setting_message(provider, setting)
        return missing_auth_message(provider)

    def get_auth_status(self, provider: str) -> AuthStatus:
        """Where ``provider``'s key comes from (``fallback`` = models.json ``apiKey``), never the key."""
        if self._only_virtual(provider):
            return AuthStatus(True, "runtime", "virtual")
        return self._auth.get_auth_status(provider, fallback=self._api_key_config(provider))

    def is_using_oauth(self, model: Model) -> bool:
        return self.is_using_oauth_provider(model.provider)

    def is_using_oauth_provider(self, provider: str) -> bool:
        credential = self._auth.get(provider)
        return credential is not None and credential.get("type") == "oauth"

    def get_api_key_for_provider(self, provider: str) -> str | None:
        """The key for ``provider``: runtime override, auth.json, environment, models.json ``apiKey``.
        Raises ``InvalidApiKeyError`` (naming the source) for a key with a control character inside."""
        return self._auth.get_api_key(provider, fallback=self._api_key_config(provider))

    def get_api_key(self, model: Model) -> str | None:
        return self.get_api_key_for_provider(model.provider)

    def get_api_key_and_headers(self, model: Model) -> RequestAuth:
        """The key and resolved configured headers for one request to ``model``; ``error`` says why
        there are none (a key or header that resolved to nothing, a key HTTP cannot carry)."""
        return self._request_auth(model.provider, model)

    def get_provider(self, provider: str) -> ProviderInfo | None:
        """pi's ``modelRegistry.getProvider(id)``: the provider as configured now (built-in,
        models.json, or registered by an extension), ``None`` when no model has it."""
        models = self.get_provider_models(provider)
        if not models:
            return None
        apis = Counter(model.api for model in models)
        api = apis.most_common(1)[0][0]
        base_url = next(model.base_url for model in models if model.api == api)
        return ProviderInfo(provider, str(api), base_url, tuple(models))

    def get_provider_auth(self, provider: str) -> RequestAuth | None:
        """pi's ``modelRegistry.getProviderAuth(id)``: the provider's current key, the
        ``Authorization`` header its configuration asks for, its base URL (a login's own endpoint,
        else the provider's) and the credential's settings (``env``), without a model; ``error``
        says why there is none. ``None`` for a provider no model has."""
        info = self.get_provider(provider)
        if info is None:
            return None
        auth = self._request_auth(provider, None)
        if auth.ok and auth.base_url is None:
            return RequestAuth(auth.api_key, auth.headers, None, info.base_url or None, auth.env)
        return auth

    def _request_auth(self, provider: str, model: Model | None) -> RequestAuth:
        """The key and headers of ``provider``, with ``model``'s configured headers when given."""
        try:
            api_key = self.get_api_key_for_provider(provider)
        except (InvalidApiKeyError, OAuthRefreshError) as error:
            return RequestAuth(error=str(error))
        if api_key is None:
            status = self.get_auth_status(provider)
            if status.source == "fallback":
                configured = self._providers.get(provider)
                why = unresolved_reason(configured.api_key or "") if configured is not None else ""
                return RequestAuth(
                    error=f'models.json "apiKey" of provider "{provider}" resolved to nothing'
                    + (f": {why}" if why else "")
                )
            if status.source == "api_key":
                return RequestAuth(error=f'auth.json key of provider "{provider}" resolved to nothing')
        credential_env = self._auth.get_credential_env(provider)
        setting = missing_setting(provider, credential_env) if api_key is not None else None
        if setting is not None:  # as pi, a Cloudflare key is no credential without its account
            return RequestAuth(error=missing_setting_message(provider, setting))
        headers: dict[str, str] = {}
        if model is not None:
            templates = self._of_provider(provider).header_templates.get((provider, model.id), {})
        else:
            configured = self._providers.get(provider)
            templates = dict(configured.headers or {}) if configured is not None else {}
        for name, template in templates.items():
            value = resolve_config_value(template)
            if value is None:
                model_id = model.id if model is not None else ""
                return RequestAuth(
                    error=f'header "{name}" of model {provider}/{model_id} resolved to nothing: '
                    + unresolved_reason(template)
                )
            if value != template.strip():  # from a command or a variable: a secret, most likely
                register_secret(value)
            headers[name] = value
        config = self._providers.get(provider)
        if config is not None and config.auth_header and api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        return RequestAuth(
            api_key=api_key,
            headers=headers,
            base_url=self._auth.get_oauth_base_url(provider),
            env=credential_env,
        )

    def _api_key_config(self, provider: str) -> str | None:
        config = self._providers.get(provider)
        if config is None:
            return None
        if (
            config.api_key is None
            and config.oauth == "radius"
            and os.environ.get("RADIUS_API_KEY", "").strip()
        ):
            return "$RADIUS_API_KEY"  # pi's gateways all take the Radius key variable
        return config.api_key


def _builtin_defaults(provider: str, builtin_providers: list[str]) -> tuple[str | None, str | None]:
    """The api and base URL most of a built-in provider's models use (custom models inherit them)."""
    if provider not in builtin_providers:
        return None, None
    pairs = Counter((model.api, model.base_url) for model in shared_models(provider))
    if not pairs:
        return None, None
    (api, base_url), _count = pairs.most_common(1)[0]
    return api, base_url

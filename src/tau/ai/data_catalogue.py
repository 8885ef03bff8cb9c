"""A catalogue of models that are not chat models (image, classifier), read from its JSON file in
``tau/ai/data`` on the first lookup: ``{provider: {model id: entry}}`` as pi-ai's data has it."""

from __future__ import annotations

import json
import os
from typing import Any

from tau.ai.types import JsonObject


class DataCatalogue:
    """The entries of ``tau/ai/data/<file_name>``, loaded once."""

    def __init__(self, file_name: str, what: str) -> None:
        self._file_name = file_name
        self._what = what
        self._entries: dict[str, dict[str, JsonObject]] = {}

    def _load(self) -> dict[str, dict[str, JsonObject]]:
        if not self._entries:
            loader: Any = __spec__.loader  # reads the files beside this module (from a zip too)
            path = os.path.join(os.path.dirname(__file__), "data", self._file_name)
            try:
                raw: bytes = loader.get_data(path)
            except (AttributeError, OSError) as exc:
                raise RuntimeError(
                    f"the {self._what} catalogue tau/ai/data/{self._file_name} cannot be read ({exc})"
                ) from exc
            self._entries.update(json.loads(raw))
        return self._entries

    def providers(self) -> list[str]:
        """The providers with models, sorted."""
        return sorted(self._load())

    def entries(self, provider: str | None = None) -> list[JsonObject]:
        """Every entry (of one provider), by provider then id; an unknown provider has none."""
        catalogue = self._load()
        providers = [provider] if provider is not None else sorted(catalogue)
        return [
            models[model_id]
            for name in providers
            for models in [catalogue.get(name, {})]
            for model_id in sorted(models)
        ]

    def entry(self, provider: str, model_id: str) -> JsonObject | None:
        """The entry, or ``None`` when the catalogue has no such model."""
        return self._load().get(provider, {}).get(model_id)

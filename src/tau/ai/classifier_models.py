"""The classifier models of the catalogue: pi's ``ClassifierModel`` entries, looked up by provider and id.

The data lives in ``tau/ai/data/classifier_models.json`` (written by ``scripts/generate_catalogue.py``
from pi-ai's ``CLASSIFIER_MODELS``: TypeSafe's Jev, Cloudflare's Clef models, OpenAI's GPT-6 Luna,
GitHub Copilot's Microsoft-Decision-1 and the System One models of OpenRouter, Vercel AI Gateway and
OpenCode in pi 1.6), read on the first lookup. Classifier models do not chat: they answer typed
questions about JSON state (``tau.ai.classify.classify``), never appear in ``/model``, and are run by
codemode scripts and extensions. Lookups return fresh objects a caller may change.
"""

from __future__ import annotations

import json

from msgspec import Struct, field

from tau.ai.data_catalogue import DataCatalogue
from tau.ai.types import JsonObject, ModelCost

__all__ = [
    "ClassifierModel",
    "find_classifier_model",
    "get_classifier_models",
    "get_classifier_providers",
]

_CATALOGUE = DataCatalogue("classifier_models.json", "classifier model")


class ClassifierModel(Struct):
    """A classifier model: JSON state (and, when ``input`` holds ``"image"``, images) in, typed answers
    out. ``compat`` is pi's System One compatibility object (``imageInput``,
    ``sendImageOptInHeader``) and ``input_limits`` pi's JSON, both as they are."""

    id: str
    api: str
    provider: str
    base_url: str
    name: str = ""
    input: list[str] = field(default_factory=lambda: ["text"])
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 0
    compat: JsonObject | None = None
    input_limits: JsonObject | None = None
    headers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.id

    def to_json(self) -> JsonObject:
        """pi's catalogue entry (``type: "classifier"`` first, camelCase keys)."""
        out: JsonObject = {
            "type": "classifier",
            "id": self.id,
            "name": self.name,
            "api": self.api,
            "provider": self.provider,
            "baseUrl": self.base_url,
            "input": list(self.input),
            "cost": self.cost.to_json(),
            "contextWindow": self.context_window,
        }
        if self.input_limits is not None:
            out["inputLimits"] = json.loads(json.dumps(self.input_limits))
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        if self.compat is not None:
            out["compat"] = json.loads(json.dumps(self.compat))
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ClassifierModel:
        compat = data.get("compat")
        limits = data.get("inputLimits")
        headers = data.get("headers")
        window = data.get("contextWindow")
        return cls(
            id=str(data["id"]),
            api=str(data["api"]),
            provider=str(data["provider"]),
            base_url=str(data.get("baseUrl") or ""),
            name=str(data.get("name") or ""),
            input=[str(item) for item in data.get("input") or ["text"]],
            cost=ModelCost.from_json(data.get("cost") or {}),
            context_window=window if isinstance(window, int) and not isinstance(window, bool) else 0,
            compat=json.loads(json.dumps(compat)) if isinstance(compat, dict) else None,
            input_limits=json.loads(json.dumps(limits)) if isinstance(limits, dict) else None,
            headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else None,
        )


def get_classifier_providers() -> list[str]:
    """The providers with classifier models, sorted."""
    return _CATALOGUE.providers()


def get_classifier_models(provider: str | None = None) -> list[ClassifierModel]:
    """Every classifier model (of one provider), by provider then id; an unknown provider has none."""
    return [ClassifierModel.from_json(entry) for entry in _CATALOGUE.entries(provider)]


def find_classifier_model(provider: str, model_id: str) -> ClassifierModel | None:
    """The classifier model, or ``None`` when the catalogue has no such one."""
    entry = _CATALOGUE.entry(provider, model_id)
    return ClassifierModel.from_json(entry) if entry is not None else None

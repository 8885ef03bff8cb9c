"""The image-generation models of the catalogue: pi's ``ImageModel`` entries, looked up by provider and id.

The data lives in ``tau/ai/data/image_models.json`` (written by ``scripts/generate_catalogue.py``
from pi-ai's ``IMAGE_MODELS``: OpenRouter's image models in pi 1.6), read on the first lookup. These
models are not chat models: they never appear in ``/model``; codemode scripts and extensions run them
through ``tau.ai.images.generate_images``. Lookups return fresh objects a caller may change.
"""

from __future__ import annotations

import json

from msgspec import Struct, field

from tau.ai.data_catalogue import DataCatalogue
from tau.ai.types import JsonObject, ModelCost

__all__ = ["ImageModel", "find_image_model", "get_image_models", "get_image_providers"]

_CATALOGUE = DataCatalogue("image_models.json", "image model")


class ImageModel(Struct):
    """An image model: text (and, when ``input`` holds ``"image"``, reference images) in, images
    (and, when ``output`` holds ``"text"``, text) out. ``input_limits`` is pi's JSON as it is."""

    id: str
    api: str
    provider: str
    base_url: str
    name: str = ""
    input: list[str] = field(default_factory=lambda: ["text"])
    output: list[str] = field(default_factory=lambda: ["image"])
    cost: ModelCost = field(default_factory=ModelCost)
    input_limits: JsonObject | None = None
    headers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.id

    def to_json(self) -> JsonObject:
        """pi's catalogue entry (``type: "image"`` first, camelCase keys)."""
        out: JsonObject = {
            "type": "image",
            "id": self.id,
            "name": self.name,
            "api": self.api,
            "provider": self.provider,
            "baseUrl": self.base_url,
            "input": list(self.input),
            "output": list(self.output),
            "cost": self.cost.to_json(),
        }
        if self.input_limits is not None:
            out["inputLimits"] = json.loads(json.dumps(self.input_limits))
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ImageModel:
        limits = data.get("inputLimits")
        headers = data.get("headers")
        return cls(
            id=str(data["id"]),
            api=str(data["api"]),
            provider=str(data["provider"]),
            base_url=str(data.get("baseUrl") or ""),
            name=str(data.get("name") or ""),
            input=[str(item) for item in data.get("input") or ["text"]],
            output=[str(item) for item in data.get("output") or ["image"]],
            cost=ModelCost.from_json(data.get("cost") or {}),
            input_limits=json.loads(json.dumps(limits)) if isinstance(limits, dict) else None,
            headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else None,
        )


def get_image_providers() -> list[str]:
    """The providers with image models, sorted."""
    return _CATALOGUE.providers()


def get_image_models(provider: str | None = None) -> list[ImageModel]:
    """Every image model (of one provider), by provider then id; an unknown provider has none."""
    return [ImageModel.from_json(entry) for entry in _CATALOGUE.entries(provider)]


def find_image_model(provider: str, model_id: str) -> ImageModel | None:
    """The image model, or ``None`` when the catalogue has no such one."""
    entry = _CATALOGUE.entry(provider, model_id)
    return ImageModel.from_json(entry) if entry is not None else None

"""``models.*`` for codemode scripts, as pi 1.6's: the catalogue's chat and image models as pi's
``ModelInfo`` and ``generateImages()`` through the session's model registry (its credentials; a
script's base URL or headers never receive them). Each generation is a row among the codemode call's
``details.calls`` (the model only, never the prompt or image data); its usage adds up to the
script's. tau runs no classifier models."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from tau.ai.types import ImageContent, Usage

__all__ = ["MODEL_TYPES", "ScriptModels", "combined", "describe", "model_info"]

MODEL_TYPES = ("chat", "image", "classifier")
CALLS_AT_ONCE = 4
"""``models.generateImages()`` calls one script runs at once (pi's limit); the others wait."""


class ScriptModels:
    """One script's ``models.*`` host calls. ``calls`` is the codemode call's record of its calls
    (generations are added to it) and ``report`` publishes it."""

    def __init__(
        self, ctx: Any, call_id: str, signal: Any, calls: list[dict[str, Any]], report: Callable[[], None]
    ) -> None:
        self.ctx = ctx
        self.call_id = call_id
        self.signal = signal
        self.calls = calls
        self.report = report
        self.model_calls = 0
        self.generated_images = 0
        """Images ``models.generateImages()`` returned, to tell a script that shows none of them."""
        self.slots = asyncio.Semaphore(CALLS_AT_ONCE)
        self.usage: Usage | None = None
        """What the script's ``models.*`` calls cost, for the codemode result (pi's ``usage``)."""

    async def handle(self, name: str, args: Any) -> Any:
        """``models.getModelsOfType`` and the rest: the catalogue's chat and image models as pi's
        ``ModelInfo``, and ``generateImages()`` through the model registry with the session's
        credentials. tau runs no classifier models: that list is empty and ``classify()`` answers
        with an error result, as pi's calls do on a provider error."""
        registry = getattr(self.ctx, "model_registry", None)
        if name == "classify":
            model = args.get("model") or {}
            return {
                "provider": str(model.get("provider", "")),
                "model": str(model.get("id", "")),
                "stopReason": "error",
                "errorMessage": "tau cannot run classifier models",
                "answers": {},
            }
        if name == "generateImages":
            return await self._generate_images(registry, args.get("model"), args.get("context"))
        kind = args.get("type")
        if kind not in MODEL_TYPES:
            raise RuntimeError(
                f'Unknown model type {json.dumps(kind)}. Use "chat", "image", or "classifier".'
            )
        provider = args.get("provider")
        if provider is not None and not isinstance(provider, str):
            raise RuntimeError("provider must be a string")
        if name == "getModelOfType":
            model_id = args.get("id")
            if not isinstance(provider, str) or not isinstance(model_id, str):
                raise RuntimeError(
                    "models.getModelOfType(type, provider, id) expects three strings. The provider and the "
                    'id are separate arguments, for example models.getModelOfType("image", "openrouter", '
                    '"google/gemini-2.5-flash-image").'
                )
            found = registry.get_model_of_type(kind, provider, model_id) if registry is not None else None
            return None if found is None else model_info(found)
        if registry is None:
            return []
        if name == "getAvailableOfType":
            return [model_info(m) for m in registry.get_available_of_type(kind, provider)]
        return [model_info(m) for m in registry.get_models_of_type(kind, provider)]

    async def _generate_images(self, registry: Any, model: Any, context: Any) -> Any:
        """One ``models.generateImages()`` call: the model is resolved by provider and id only (a
        script's base URL or headers never get the credentials), the context checked, and the call
        shown as a nested call row (the model only, never the prompt or image data)."""
        hint = 'List the image models you can use with models.getAvailableOfType("image").'
        if (
            not isinstance(model, dict)
            or not isinstance(model.get("provider"), str)
            or not isinstance(model.get("id"), str)
        ):
            undefined = (
                " models.getModelOfType() returns undefined for an unknown provider or id."
                if model is None
                else ""
            )
            raise RuntimeError(
                f"models.generateImages() expects an image model as its first argument, got "
                f"{describe(model)}.{undefined} {hint}"
            )
        provider, model_id = model["provider"], model["id"]
        resolved = registry.get_model_of_type("image", provider, model_id) if registry is not None else None
        if resolved is None:
            chat = registry is not None and registry.get_model_of_type("chat", provider, model_id) is not None
            raise RuntimeError(
                f'"{provider}/{model_id}" is a chat model, not an image model. {hint}'
                if chat
                else f'Unknown image model "{provider}/{model_id}". {hint}'
            )
        from tau.ai.images import images_context_from_json

        shape = (
            'Expected context: { input: [{ type: "text", text: <prompt> }, ...optional { type: "image", '
            'data: <base64>, mimeType } references] }. See "Generate images" in the codemode docs.'
        )
        if not isinstance(context, dict):
            raise RuntimeError(
                f"models.generateImages() expects a context object as its second argument, got "
                f"{describe(context)}. {shape}"
            )
        if not isinstance(context.get("input"), list) or not context["input"]:
            raise RuntimeError(
                "models.generateImages() context.input must be a non-empty array of blocks, got "
                f"{describe(context.get('input'))}. {shape}"
            )
        try:
            checked = images_context_from_json(context)
        except ValueError as error:
            raise RuntimeError(f"models.generateImages() {error}. {shape}") from None
        self.model_calls += 1
        record: dict[str, Any] = {
            "id": f"{self.call_id}/models.generateImages/{self.model_calls}",
            "name": "models.generateImages",
            "args": f"{resolved.provider}/{resolved.id}",
            "status": "running",
        }
        self.calls.append(record)
        self.report()
        started = time.monotonic()
        async with self.slots:
            result = await registry.generate_images(resolved, checked, self.signal)
        record["durationMs"] = round((time.monotonic() - started) * 1000, 3)
        record["status"] = {"stop": "ok", "aborted": "cancelled"}.get(result.stop_reason, "error")
        if result.error_message:
            record["error"] = result.error_message[:500]
        if result.usage is not None:
            record["cost"] = result.usage.cost.total
            self.usage = combined(self.usage, result.usage)
        self.generated_images += sum(1 for block in result.output if isinstance(block, ImageContent))
        self.report()
        return result.to_json()


def model_info(model: Any) -> dict[str, Any]:
    """A catalogue entry for scripts, as pi's: the model's whole entry with its ``type``, never
    ``headers`` (models.json headers can carry credentials)."""
    from tau.ai.classifier_models import ClassifierModel
    from tau.ai.image_models import ImageModel

    info: dict[str, Any] = (
        model.to_json()
        if isinstance(model, (ImageModel, ClassifierModel))
        else {"type": "chat", **model.to_json()}
    )
    info.pop("headers", None)
    return info


def combined(total: Usage | None, usage: Usage) -> Usage:
    """``total`` plus ``usage``: token counts and costs added up."""
    if total is None:
        return Usage.from_json(usage.to_json())
    return total.plus(usage)


def describe(value: Any) -> str:
    """A script value in an error message: ``undefined``, ``a string``, ``an array``, or its keys."""
    if value is None:
        return "undefined"
    if isinstance(value, list):
        return "an empty array" if not value else "an array"
    if isinstance(value, dict):
        keys = list(value)
        return "{}" if not keys else "{ " + ", ".join(keys[:6]) + (", ..." if len(keys) > 6 else "") + " }"
    if isinstance(value, str):
        return "a string"
    return "a boolean" if isinstance(value, bool) else "a number"

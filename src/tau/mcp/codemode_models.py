"""``models.*`` for codemode scripts, as pi 1.6's: the catalogue's chat and image models as pi's
``ModelInfo`` and ``generateImages()`` through the session's model registry (its credentials; a
script's base URL or headers never receive them). Each generation is a row among the codemode call's
``details.calls`` (the model only, never the prompt or image data); its usage adds up to the
script's. ``classify()`` runs the catalogue's classifier models the same way."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tau.ai.types import ImageContent, Usage

__all__ = ["MODEL_TYPES", "ScriptModels", "combined", "describe", "model_info"]

MODEL_TYPES = ("chat", "image", "classifier")
CALLS_AT_ONCE = 4
"""``models.classify()`` and ``models.generateImages()`` calls one script runs at once (pi's
limit); the others wait."""
CLASSIFIER_CONTEXT_SHAPE = (
    'Expected context: { state: { ... }, images?: [{ type: "image", data: <base64>, mimeType }], '
    'questions: { <id>: { type: "choice", instructions, criteria: { <label>: <meaning> } } | '
    '{ type: "score", instructions, criteria: [<lowest level>, ..., <highest level>] } | '
    '{ type: "bool", instructions, criteria: { true: <meaning>, false: <meaning> } } } }. '
    'See "Classify" in the codemode docs.'
)


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
        """``models.getModelsOfType`` and the rest: the catalogue's chat, image and classifier models
        as pi's ``ModelInfo``, and ``classify()`` and ``generateImages()`` through the model registry
        with the session's credentials."""
        registry = getattr(self.ctx, "model_registry", None)
        if name == "classify":
            return await self._classify(registry, args.get("model"), args.get("context"))
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

    def _resolve(self, registry: Any, name: str, kind: str, model: Any) -> Any:
        """The script's model resolved by provider and id only (a script's base URL or headers
        never get the credentials); a clear error naming the type it is otherwise."""
        article = "an" if kind[0] in "aeiou" else "a"
        hint = f'List the {kind} models you can use with models.getAvailableOfType("{kind}").'
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
                f"{name}() expects {article} {kind} model as its first argument, got "
                f"{describe(model)}.{undefined} {hint}"
            )
        provider, model_id = model["provider"], model["id"]
        resolved = registry.get_model_of_type(kind, provider, model_id) if registry is not None else None
        if resolved is None:
            other = next(
                (
                    candidate
                    for candidate in MODEL_TYPES
                    if candidate != kind
                    and registry is not None
                    and registry.get_model_of_type(candidate, provider, model_id) is not None
                ),
                None,
            )
            raise RuntimeError(
                f'"{provider}/{model_id}" is {"an" if other == "image" else "a"} {other} model, not '
                f"{article} {kind} model. {hint}"
                if other is not None
                else f'Unknown {kind} model "{provider}/{model_id}". {hint}'
            )
        return resolved

    async def _run(self, name: str, resolved: Any, call: Callable[[], Awaitable[Any]]) -> Any:
        """One model call as a nested call row (the model only, never the prompt, state or image
        data), at most ``CALLS_AT_ONCE`` at a time; its usage adds up to the script's."""
        self.model_calls += 1
        record: dict[str, Any] = {
            "id": f"{self.call_id}/{name}/{self.model_calls}",
            "name": name,
            "args": f"{resolved.provider}/{resolved.id}",
            "status": "running",
        }
        self.calls.append(record)
        self.report()
        started = time.monotonic()
        async with self.slots:
            result = await call()
        record["durationMs"] = round((time.monotonic() - started) * 1000, 3)
        record["status"] = {"stop": "ok", "aborted": "cancelled"}.get(result.stop_reason, "error")
        if result.error_message:
            record["error"] = result.error_message[:500]
        if result.usage is not None:
            record["cost"] = result.usage.cost.total
            self.usage = combined(self.usage, result.usage)
        self.report()
        return result

    async def _classify(self, registry: Any, model: Any, context: Any) -> Any:
        """One ``models.classify()`` call: the model resolved, the context checked (a mistake fails
        with the expected shape instead of a provider error), the call shown as a row."""
        resolved = self._resolve(registry, "models.classify", "classifier", model)
        from tau.ai.classify import classifier_context_from_json

        if not isinstance(context, dict):
            problem = f"expects a context object as its second argument, got {describe(context)}"
            raise RuntimeError(f"models.classify() {problem}. {CLASSIFIER_CONTEXT_SHAPE}")
        try:
            checked = classifier_context_from_json(context)
        except ValueError as error:
            raise RuntimeError(f"models.classify() {error}. {CLASSIFIER_CONTEXT_SHAPE}") from None
        result = await self._run(
            "models.classify", resolved, lambda: registry.classify(resolved, checked, self.signal)
        )
        return result.to_json()

    async def _generate_images(self, registry: Any, model: Any, context: Any) -> Any:
        """One ``models.generateImages()`` call: the model resolved, the context checked, and the
        call shown as a nested call row (the model only, never the prompt or image data)."""
        resolved = self._resolve(registry, "models.generateImages", "image", model)
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
        result = await self._run(
            "models.generateImages",
            resolved,
            lambda: registry.generate_images(resolved, checked, self.signal),
        )
        self.generated_images += sum(1 for block in result.output if isinstance(block, ImageContent))
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

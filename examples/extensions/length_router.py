"""Length router: a virtual model, ``router/auto``, that sends short prompts to a small model and
long ones to a large model.

Each prompt the user writes is routed by its length (``--router-limit`` characters, 400 by
default); tool follow-ups and retries stay on the model that handled the turn, which keeps its
prompt cache. The router counts how many prompts went to each model as router state: tau stores it
on the session branch (a ``pi.virtual-model-state`` entry), so it follows forks and ``/tree``.
Requests outside the agent loop (compaction summaries) go to the small model.

    tau -e examples/extensions/length_router.py --model router/auto \\
        --router-small anthropic/claude-haiku-4-5 --router-large anthropic/claude-sonnet-4-5
"""

from __future__ import annotations

from typing import Any

from tau.ai.types import Model, TextContent, UserMessage
from tau.extensions import (
    ExtensionAPI,
    ExtensionContext,
    ModelRoute,
    ModelRouteRequest,
    VirtualModelDefinition,
)


def last_user_text(request: ModelRouteRequest) -> str:
    for message in reversed(request.messages):
        if isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                return content
            return "\n".join(block.text for block in content if isinstance(block, TextContent))
    return ""


def setup(tau: ExtensionAPI) -> None:
    tau.register_flag(
        "router-small", type=str, default="anthropic/claude-haiku-4-5", description="Model for short prompts"
    )
    tau.register_flag(
        "router-large", type=str, default="anthropic/claude-sonnet-4-5", description="Model for long prompts"
    )
    tau.register_flag(
        "router-limit",
        type=str,
        default="400",
        description="Prompt length (characters) that goes to the large model",
    )

    def find(ctx: ExtensionContext, flag: str) -> Model:
        name = str(tau.get_flag(flag))
        provider, _, model_id = name.partition("/")
        model: Model | None = ctx.model_registry.find(provider, model_id)
        if model is None:
            raise LookupError(f"--{flag}: no model {name}")
        return model

    def route(request: ModelRouteRequest, ctx: ExtensionContext) -> ModelRoute:
        level = request.thinking_level
        if request.reason == "direct":
            return ModelRoute(find(ctx, "router-small"), level)
        sticky = request.failed or request.previous
        if request.reason != "user" and sticky is not None:
            return ModelRoute(sticky.model, sticky.thinking_level or level)
        large = len(last_user_text(request)) >= int(str(tau.get_flag("router-limit")))
        tier = "large" if large else "small"
        counts: dict[str, Any] = dict(request.state or {"small": 0, "large": 0})
        counts[tier] = counts.get(tier, 0) + 1
        return ModelRoute(find(ctx, f"router-{tier}"), level, state=counts)

    tau.register_virtual_model(
        VirtualModelDefinition(
            provider="router",
            id="auto",
            name="Auto (by prompt length)",
            route=route,
            thinking_levels=("off", "low", "medium", "high"),
        )
    )

"""tau.ai: one streaming interface to every major LLM API.

    from tau.ai import Context, UserMessage, get_model, stream

    model = get_model("anthropic", "claude-sonnet-4-5")
    async for event in stream(model, Context(messages=[UserMessage("hi")])):
        ...

Importing this package loads none of its modules: each name is imported on first access (so
that reading a thinking level or a message type does not build the catalogue), each provider
module the first time a model of its api is streamed, and no HTTP library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.ai.abort import AbortController, AbortSignal
    from tau.ai.catalogue import UnknownModelError, find_model, get_model, get_models, get_providers
    from tau.ai.classifier_models import ClassifierModel, find_classifier_model, get_classifier_models
    from tau.ai.events import (
        AssistantMessageEvent,
        AssistantMessageEventStream,
        DoneEvent,
        ErrorEvent,
        StartEvent,
        TextDeltaEvent,
        TextEndEvent,
        TextStartEvent,
        ThinkingDeltaEvent,
        ThinkingEndEvent,
        ThinkingStartEvent,
        ToolCallDeltaEvent,
        ToolCallEndEvent,
        ToolCallStartEvent,
        event_to_json,
    )
    from tau.ai.image_models import ImageModel, find_image_model, get_image_models
    from tau.ai.images import ImagesContext, ImagesResult, generate_images
    from tau.ai.options import ResponseInfo, SimpleStreamOptions, StreamOptions
    from tau.ai.registry import (
        ApiProvider,
        UnknownApiError,
        clear_api_providers,
        get_api_provider,
        get_api_providers,
        register_api_provider,
        reset_api_providers,
        unregister_api_providers,
    )
    from tau.ai.streaming import MissingApiKeyError, complete, complete_simple, stream, stream_simple
    from tau.ai.types import (
        AssistantMessage,
        Context,
        Cost,
        GrammarSampling,
        ImageContent,
        JsonSchemaSampling,
        Message,
        Model,
        ModelCost,
        TextContent,
        ThinkingContent,
        Tool,
        ToolCall,
        ToolResultMessage,
        Usage,
        UserMessage,
        message_from_json,
        models_are_equal,
    )

__all__ = [
    "AbortController",
    "AbortSignal",
    "ApiProvider",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "ClassifierModel",
    "Context",
    "Cost",
    "DoneEvent",
    "ErrorEvent",
    "GrammarSampling",
    "ImageContent",
    "ImageModel",
    "ImagesContext",
    "ImagesResult",
    "JsonSchemaSampling",
    "Message",
    "MissingApiKeyError",
    "Model",
    "ModelCost",
    "ResponseInfo",
    "SimpleStreamOptions",
    "StartEvent",
    "StreamOptions",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolResultMessage",
    "UnknownApiError",
    "UnknownModelError",
    "Usage",
    "UserMessage",
    "clear_api_providers",
    "complete",
    "complete_simple",
    "event_to_json",
    "find_classifier_model",
    "find_image_model",
    "find_model",
    "generate_images",
    "get_api_provider",
    "get_api_providers",
    "get_classifier_models",
    "get_image_models",
    "get_model",
    "get_models",
    "get_providers",
    "message_from_json",
    "models_are_equal",
    "register_api_provider",
    "reset_api_providers",
    "stream",
    "stream_simple",
    "unregister_api_providers",
]

# Searched in this order, the cheap modules first: a caller that needs a message type does not
# load the catalogue or the streaming entry points.
_MODULES = (
    "abort",
    "types",
    "options",
    "events",
    "registry",
    "streaming",
    "catalogue",
    "image_models",
    "images",
    "classifier_models",
)

__getattr__, __dir__ = lazy_exports(globals(), _MODULES)

"""tau.ai: one streaming interface to every major LLM API.

    from tau.ai import Context, UserMessage, get_model, stream

    model = get_model("anthropic", "claude-sonnet-4-5")
    async for event in stream(model, Context(messages=[UserMessage("hi")])):
        ...

Importing this package loads no provider and no HTTP library; each provider module is imported the
first time a model of its api is streamed.
"""

from tau.ai import _httpx_setup  # noqa: F401  (first: before any module imports httpx)
from tau.ai.abort import AbortController, AbortSignal
from tau.ai.catalogue import UnknownModelError, find_model, get_model, get_models, get_providers
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
    ImageContent,
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
    "Context",
    "Cost",
    "DoneEvent",
    "ErrorEvent",
    "ImageContent",
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
    "find_model",
    "get_api_provider",
    "get_api_providers",
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

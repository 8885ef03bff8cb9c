"""Quirks of OpenAI-compatible Chat Completions servers (pi's ``OpenAICompletionsCompat``).

``detect_compat`` guesses the settings from the provider id and the base URL; ``resolve_compat``
then lets every key present in ``model.compat`` (pi's camelCase names, as in ``models.json``)
override the guess field by field. A value of the wrong type is ignored rather than trusted.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias, get_args

from msgspec import Struct, field
from msgspec.structs import replace

from tau.ai.types import JsonObject, Model

ThinkingFormat: TypeAlias = Literal[
    "openai",
    "openrouter",
    "deepseek",
    "zai",
    "qwen",
    "qwen-chat-template",
    "chat-template",
    "baseten",
    "together",
    "string-thinking",
    "ant-ling",
]
MaxTokensField: TypeAlias = Literal["max_completion_tokens", "max_tokens"]

THINKING_FORMATS: frozenset[str] = frozenset(get_args(ThinkingFormat))
MAX_TOKENS_FIELDS: frozenset[str] = frozenset(get_args(MaxTokensField))
CACHE_CONTROL_FORMATS: frozenset[str] = frozenset({"anthropic"})


SessionAffinityFormat: TypeAlias = Literal["openai", "openai-nosession", "openrouter"]
SESSION_AFFINITY_FORMATS: Final = ("openai", "openai-nosession", "openrouter")
ThinkingTokenBudgetField: TypeAlias = Literal[
    "thinking_token_budget", "thinking_budget", "thinking_budget_tokens"
]
THINKING_TOKEN_BUDGET_FIELDS: frozenset[str] = frozenset(get_args(ThinkingTokenBudgetField))
PromptCacheKeyMode: TypeAlias = Literal["auto", "enabled", "disabled"]
PROMPT_CACHE_KEY_MODES: frozenset[str] = frozenset(get_args(PromptCacheKeyMode))


class OpenAICompletionsCompat(Struct, frozen=True):
    """Every compat setting, resolved. Field docs name the request change each one controls."""

    supports_store: bool = True  # send ``store: false``
    supports_developer_role: bool = True  # ``developer`` instead of ``system`` for reasoning models
    supports_reasoning_effort: bool = True  # send ``reasoning_effort``
    reasoning_effort_map: dict[str, str] = field(default_factory=dict)  # pi 0.58: level -> server value
    supports_usage_in_streaming: bool = True  # send ``stream_options.include_usage``
    # A stream that ends without ``finish_reason`` is an error; when false it is a normal stop
    # (tool use when it holds tool calls), for servers that never send one.
    supports_finish_reason: bool = True
    max_tokens_field: MaxTokensField = "max_completion_tokens"
    requires_tool_result_name: bool = False  # ``name`` on tool messages
    requires_assistant_after_tool_result: bool = False  # bridge tool -> user with an assistant turn
    requires_thinking_as_text: bool = False  # replay reasoning as plain text
    requires_reasoning_content_on_assistant_messages: bool = False  # DeepSeek: ``reasoning_content: ""``
    thinking_format: ThinkingFormat = "openai"
    open_router_routing: JsonObject = field(default_factory=dict)  # body ``provider``
    vercel_gateway_routing: JsonObject = field(default_factory=dict)  # ``{only?, order?}``
    zai_tool_stream: bool = False  # send ``tool_stream: true``
    # ``chat_template_kwargs`` ("chat-template") / ``chat_template_args`` ("baseten"); a value
    # ``{"$var": "thinking.enabled" | "thinking.effort" | "thinking.budget", "omitWhenOff"?}`` is filled in.
    chat_template_kwargs: JsonObject = field(default_factory=dict)
    chat_template_args: JsonObject = field(default_factory=dict)
    supports_strict_mode: bool = True  # ``strict: false`` in tool definitions
    # Grammar-constrained tools as OpenAI custom tools (``format: {type: grammar}``); off: function tools.
    supports_openai_grammar_tools: bool = False
    cache_control_format: Literal["anthropic"] | None = None  # Anthropic-style ``cache_control`` markers
    send_session_affinity_headers: bool = False  # session-affinity headers from the session id
    # openai: session_id, x-client-request-id, x-session-affinity; openai-nosession: the last two;
    # openrouter: x-session-id.
    session_affinity_format: SessionAffinityFormat = "openai"
    supports_long_cache_retention: bool = True  # allow 24 h / 1 h cache retention
    # ``prompt_cache_key``: auto (api.openai.com, or long retention), enabled (whenever caching), disabled.
    prompt_cache_key_mode: PromptCacheKeyMode = "auto"
    requires_non_null_assistant_content: bool = False  # ``content: ""`` for a reply with no text
    requires_tools_with_tool_history: bool = False  # ``tools: []`` when tool history but no tools
    # A top-level field capping reasoning tokens with the level's thinking budget (vLLM, Qwen,
    # llama.cpp); ``supportsThinkingTokenBudget`` is the older alias of "thinking_token_budget".
    thinking_token_budget_field: ThinkingTokenBudgetField | None = None
    supports_thinking_token_budget: bool = False
    vllm_priority: float | None = None  # top-level ``priority`` (vLLM's scheduler)


# pi's camelCase key for each field.
COMPAT_KEYS: dict[str, str] = {
    "supports_store": "supportsStore",
    "supports_developer_role": "supportsDeveloperRole",
    "supports_reasoning_effort": "supportsReasoningEffort",
    "reasoning_effort_map": "reasoningEffortMap",
    "supports_usage_in_streaming": "supportsUsageInStreaming",
    "supports_finish_reason": "supportsFinishReason",
    "max_tokens_field": "maxTokensField",
    "requires_tool_result_name": "requiresToolResultName",
    "requires_assistant_after_tool_result": "requiresAssistantAfterToolResult",
    "requires_thinking_as_text": "requiresThinkingAsText",
    "requires_reasoning_content_on_assistant_messages": "requiresReasoningContentOnAssistantMessages",
    "thinking_format": "thinkingFormat",
    "open_router_routing": "openRouterRouting",
    "vercel_gateway_routing": "vercelGatewayRouting",
    "zai_tool_stream": "zaiToolStream",
    "chat_template_kwargs": "chatTemplateKwargs",
    "chat_template_args": "chatTemplateArgs",
    "supports_strict_mode": "supportsStrictMode",
    "supports_openai_grammar_tools": "supportsOpenAIGrammarTools",
    "cache_control_format": "cacheControlFormat",
    "send_session_affinity_headers": "sendSessionAffinityHeaders",
    "session_affinity_format": "sessionAffinityFormat",
    "supports_long_cache_retention": "supportsLongCacheRetention",
    "prompt_cache_key_mode": "promptCacheKeyMode",
    "requires_non_null_assistant_content": "requiresNonNullAssistantContent",
    "requires_tools_with_tool_history": "requiresToolsWithToolHistory",
    "thinking_token_budget_field": "thinkingTokenBudgetField",
    "supports_thinking_token_budget": "supportsThinkingTokenBudget",
    "vllm_priority": "vllmPriority",
}

# Groq serves this model with a single reasoning setting whatever the level.
_GROQ_DEFAULT_EFFORT_MODELS = frozenset({"qwen/qwen3-32b"})


def detect_compat(model: Model) -> OpenAICompletionsCompat:
    """Settings guessed from the provider id and base URL (the provider id wins when both say something)."""
    provider = model.provider
    url = model.base_url
    is_zai = provider == "zai" or "api.z.ai" in url
    is_moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    is_cf_workers = provider == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    is_cf_gateway = provider == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    is_xai = provider == "xai" or "api.x.ai" in url
    is_deepseek = provider == "deepseek" or "deepseek.com" in url
    is_groq = provider == "groq" or "groq.com" in url
    is_openrouter = provider == "openrouter" or "openrouter.ai" in url
    is_openai = provider == "openai" or "api.openai.com" in url
    is_non_standard = (
        provider == "cerebras"
        or "cerebras.ai" in url
        or is_xai
        or "chutes.ai" in url
        or "deepseek.com" in url
        or is_zai
        or is_moonshot
        or provider == "opencode"
        or "opencode.ai" in url
        or is_cf_workers
        or is_cf_gateway
    )
    thinking_format: ThinkingFormat = "openai"
    if is_deepseek:
        thinking_format = "deepseek"
    elif is_zai:
        thinking_format = "zai"
    elif is_openrouter:
        thinking_format = "openrouter"
    effort_map: dict[str, str] = {}
    if is_groq and model.id in _GROQ_DEFAULT_EFFORT_MODELS:
        effort_map = dict.fromkeys(("minimal", "low", "medium", "high", "xhigh"), "default")
    return OpenAICompletionsCompat(
        supports_store=not is_non_standard,
        # pi 1.6: the developer role only for OpenAI's own API unless compat says otherwise.
        supports_developer_role=is_openai,
        supports_reasoning_effort=not (is_xai or is_zai or is_moonshot or is_cf_gateway),
        reasoning_effort_map=effort_map,
        max_tokens_field="max_tokens"
        if ("chutes.ai" in url or is_moonshot or is_cf_gateway)
        else "max_completion_tokens",
        requires_reasoning_content_on_assistant_messages=is_deepseek,
        thinking_format=thinking_format,
        # pi 1.6: strict tool schemas only where compat says so (the catalogue marks capable models).
        supports_strict_mode=False,
        cache_control_format="anthropic"
        if provider == "openrouter" and model.id.startswith("anthropic/")
        else None,
        supports_long_cache_retention=not (is_cf_workers or is_cf_gateway),
        send_session_affinity_headers=is_openrouter,
        session_affinity_format="openrouter" if is_openrouter else "openai",
    )


def thinking_budget_field(compat: OpenAICompletionsCompat) -> str | None:
    """The top-level field that caps reasoning tokens, if the compat names one."""
    if compat.thinking_token_budget_field is not None:
        return compat.thinking_token_budget_field
    return "thinking_token_budget" if compat.supports_thinking_token_budget else None


def resolve_compat(model: Model) -> OpenAICompletionsCompat:
    """The detected settings with every well-typed key of ``model.compat`` laid over them."""
    detected = detect_compat(model)
    overrides = model.compat or {}
    changes: dict[str, Any] = {}
    for name in OpenAICompletionsCompat.__struct_fields__:
        value = overrides.get(COMPAT_KEYS[name])
        if value is not None and _fits(name, value, getattr(detected, name)):
            changes[name] = dict(value) if isinstance(value, dict) else value
    return replace(detected, **changes) if changes else detected


def _fits(name: str, value: Any, current: Any) -> bool:
    """Whether an override has the type (and, for enumerations, a value) the field accepts."""
    if name == "thinking_format":
        return value in THINKING_FORMATS
    if name == "max_tokens_field":
        return value in MAX_TOKENS_FIELDS
    if name == "cache_control_format":
        return value in CACHE_CONTROL_FORMATS
    if name == "session_affinity_format":
        return value in SESSION_AFFINITY_FORMATS
    if name == "thinking_token_budget_field":
        return value in THINKING_TOKEN_BUDGET_FIELDS
    if name == "prompt_cache_key_mode":
        return value in PROMPT_CACHE_KEY_MODES
    if name == "vllm_priority":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(current, bool):
        return isinstance(value, bool)
    return isinstance(value, dict)

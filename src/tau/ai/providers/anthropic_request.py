"""Building an Anthropic Messages request: headers and JSON body from a ``Context``.

Everything here is pure (no I/O), so request building is tested on its own and the streaming
module stays about the wire protocol. Options specific to this API ride in ``options.extra``:
``thinking_enabled``, ``thinking_budget_tokens``, ``effort``, ``thinking_display``,
``interleaved_thinking`` (default true) and ``tool_choice``. What the model's catalogue data decides
(thinking, effort, sampling, beta features, fallbacks) is in ``anthropic_thinking``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tau.ai.constrained_sampling import json_schema_parameters
from tau.ai.env_keys import is_anthropic_auth_token
from tau.ai.options import StreamOptions, resolve_cache_retention
from tau.ai.prompt_updates import mid_conversation_flags
from tau.ai.providers import anthropic_updates
from tau.ai.providers.anthropic_compat import anthropic_compat
from tau.ai.providers.anthropic_thinking import (
    BETA_FINE_GRAINED_TOOL_STREAMING,
    BETA_INTERLEAVED_THINKING,
    OAUTH_BETAS,
    beta_features,
    fallbacks_field,
    session_affinity_headers,
    temperature_allowed,
    thinking_fields,
    thinking_requested,
)
from tau.ai.sanitize import sanitize_surrogates
from tau.ai.transform import ReplayHistory, normalize_id_anthropic
from tau.ai.transport.gc_pause import collector_paused
from tau.ai.transport.http import gateway_auth, merge_headers
from tau.ai.transport.request_cache import (
    CachedFragment,
    Continuation,
    FragmentList,
    MessageMemo,
    cached_fragment,
)
from tau.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    JsonObject,
    JsonSchemaSampling,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from tau.ai.wire_history import WireHistory, continue_history

__all__ = [
    "BETA_FINE_GRAINED_TOOL_STREAMING",
    "BETA_INTERLEAVED_THINKING",
    "OAUTH_BETAS",
    "thinking_requested",
]

ANTHROPIC_VERSION = "2023-06-01"
CLAUDE_CODE_VERSION = "2.1.2"
CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."
IMAGE_ONLY_TOOL_RESULT_TEXT = "(see attached image)"

# Claude Code's own tool names; an OAuth (subscription) token is only accepted for requests that
# look like Claude Code, so matching tools are renamed to this casing and renamed back on the way in.
_CLAUDE_CODE_TOOLS = (
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode",
    "ExitPlanMode", "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite",
    "WebFetch", "WebSearch",
)  # fmt: skip
_CLAUDE_CODE_BY_LOWER = {name.lower(): name for name in _CLAUDE_CODE_TOOLS}


def is_oauth_token(api_key: str | None) -> bool:
    """Claude Pro/Max subscription tokens (``sk-ant-oat…``) authenticate as Claude Code."""
    return api_key is not None and "sk-ant-oat" in api_key


def uses_oauth(model: Model, api_key: str | None) -> bool:
    """A subscription token, unless it is ``ANTHROPIC_AUTH_TOKEN`` (a plain bearer token, as in pi)."""
    return is_oauth_token(api_key) and not is_anthropic_auth_token(model.provider, api_key)


def is_copilot(model: Model) -> bool:
    return model.provider == "github-copilot"


def to_claude_code_name(name: str) -> str:
    """The Claude Code casing of a tool name (``read`` → ``Read``), or the name unchanged."""
    return _CLAUDE_CODE_BY_LOWER.get(name.lower(), name)


def from_claude_code_name(name: str, tools: list[Tool] | None) -> str:
    """The caller's own spelling of a tool name the server sent back (case-insensitive match)."""
    lowered = name.lower()
    for tool in tools or []:
        if tool.name.lower() == lowered:
            return tool.name
    return name


def eager_tool_streaming(model: Model) -> bool:
    return anthropic_compat(model).supports_eager_tool_input_streaming


# --- headers --------------------------------------------------------------------------------------


def build_headers(
    model: Model,
    context: Context,
    api_key: str | None,
    options: StreamOptions,
    *,
    message_threads: bool = False,
) -> dict[str, str]:
    """Request headers: defaults, then ``model.headers``, then dynamic ones, then ``options.headers``
    (``message_threads``: the request may use threads, ``anthropic_threads``)."""
    oauth = uses_oauth(model, api_key)
    copilot = is_copilot(model)
    defaults: dict[str, str] = {"accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}
    bearer = is_anthropic_auth_token(model.provider, api_key)
    gateway = gateway_auth(model, api_key)
    if gateway is not None:
        defaults.update(gateway)
    elif api_key:
        if oauth or copilot or bearer:
            defaults["authorization"] = f"Bearer {api_key}"
        else:
            defaults["x-api-key"] = api_key
    fine_grained = bool(context.tools) and not eager_tool_streaming(model)
    betas = beta_features(
        model,
        context,
        options,
        oauth=oauth,
        fine_grained_tools=fine_grained,
        mid_conversation=anthropic_updates.betas(model, context),
        message_threads=message_threads,
    )
    if oauth:
        defaults["user-agent"] = f"claude-cli/{CLAUDE_CODE_VERSION} (external, cli)"
        defaults["x-app"] = "cli"
    elif not copilot:
        defaults.update(session_affinity_headers(model, options.session_id))
    dynamic = _copilot_headers(context.messages) if copilot else None
    headers = merge_headers(defaults, model.headers, dynamic, options.headers)
    # The computed list (which a configured anthropic-beta header replaces, cleaned) goes last.
    return merge_headers(headers, {"anthropic-beta": ",".join(betas)} if betas else _no_beta(headers))


def _no_beta(headers: dict[str, str]) -> dict[str, str] | None:
    """Drop a configured ``anthropic-beta`` header that names no feature."""
    for name in [name for name in headers if name.lower() == "anthropic-beta"]:
        del headers[name]
    return None


def _copilot_headers(messages: list[Message]) -> dict[str, str]:
    last = messages[-1] if messages else None
    headers = {
        "X-Initiator": "user" if isinstance(last, UserMessage) else "agent",
        "Openai-Intent": "conversation-edits",
    }
    if any(_has_image(m) for m in messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def _has_image(message: Message) -> bool:
    if isinstance(message, (UserMessage, ToolResultMessage)) and not isinstance(message.content, str):
        return any(isinstance(block, ImageContent) for block in message.content)
    return False


# --- body -----------------------------------------------------------------------------------------


def cache_control_for(model: Model, options: StreamOptions) -> JsonObject | None:
    """The ``cache_control`` marker to place, or ``None`` when caching is off."""
    retention = resolve_cache_retention(options.cache_retention)
    if retention == "none":
        return None
    marker: JsonObject = {"type": "ephemeral"}
    if retention == "long" and anthropic_compat(model).supports_long_cache_retention:
        marker["ttl"] = "1h"
    return marker


def build_body(
    model: Model, context: Context, options: StreamOptions, *, oauth: bool, non_strict: bool = False
) -> JsonObject:
    """The JSON body of ``POST /v1/messages`` (streaming); ``non_strict`` sends every tool without
    ``strict`` (``convert_tools``)."""
    cache = cache_control_for(model, options)
    # Prompt changes and the effort as system messages, where the model takes them (issue #31).
    thinking_disabled = options.extra.get("thinking_enabled") is False and model.reasoning
    effort_messages = anthropic_updates.effort_in_messages(model, thinking_disabled)
    in_place = anthropic_updates.native(model, context) or effort_messages
    body: JsonObject = {
        "model": model.id,
        "messages": convert_messages(
            context.messages, model, oauth=oauth, cache_control=None if in_place else cache
        ),
        "max_tokens": options.max_tokens or model.max_tokens,
        "stream": True,
    }
    system = _system_blocks(context.system_prompt, oauth=oauth, cache_control=cache)
    if system:
        body["system"] = system
    if options.temperature is not None and temperature_allowed(model, options):
        body["temperature"] = options.temperature
    if context.tools:
        tools_cache = cache if anthropic_compat(model).supports_cache_control_on_tools else None
        body["tools"] = convert_tools(
            context.tools, model, oauth=oauth, cache_control=tools_cache, non_strict=non_strict
        )
    body.update(thinking_fields(model, options))
    tool_choice = options.extra.get("tool_choice")
    if isinstance(tool_choice, str):
        body["tool_choice"] = {"type": tool_choice}
    elif isinstance(tool_choice, dict):
        choice = dict(tool_choice)
        if oauth and isinstance(choice.get("name"), str):
            choice["name"] = to_claude_code_name(choice["name"])
        body["tool_choice"] = choice
    user_id = (options.metadata or {}).get("user_id")
    if isinstance(user_id, str):
        body["metadata"] = {"user_id": user_id}
    if in_place:
        sent = _sent_reply(oauth)
        anthropic_updates.apply(
            body,
            model,
            context,
            system_blocks=lambda text: _system_blocks(text, oauth=oauth, cache_control=cache),
            convert_tools=lambda tools, marker: convert_tools(
                tools, model, oauth=oauth, cache_control=marker, non_strict=non_strict
            ),
            cache_control=cache,
            assistant_sent=sent,
        )
        if effort_messages:
            effort = options.extra.get("effort")
            display = options.extra.get("thinking_display")
            anthropic_updates.apply_effort(
                body,
                model,
                context.messages,
                effort=effort if isinstance(effort, str) else "high",
                display=display if isinstance(display, str) else None,
                assistant_sent=sent,
            )
    fallbacks = fallbacks_field(model)
    if fallbacks is not None:
        body["fallbacks"] = fallbacks
    return body


def _sent_reply(oauth: bool) -> Callable[[AssistantMessage], bool]:
    """Whether an assistant message reaches the wire as a message of its own (as ``_assistant_message``
    decides, without building it: this runs for every reply of every request)."""

    def sent(message: AssistantMessage) -> bool:
        if message.stop_reason in ("error", "aborted"):
            return False
        for block in message.content:
            if isinstance(block, TextContent):
                if block.text.strip():
                    return True
            elif isinstance(block, ThinkingContent):
                if block.thinking_signature if block.redacted else block.thinking.strip():
                    return True
            else:
                return True
        return False

    return sent


def effort_sent(model: Model, body: JsonObject) -> str | None:
    """The effort this request asked for in a message (its last one), for the reply's record."""
    messages = body.get("messages")
    if not mid_conversation_flags(model).effort or not isinstance(messages, list) or not messages:
        return None
    last = messages[-1]
    config = last.get("output_config") if isinstance(last, dict) and last.get("role") == "system" else None
    effort = config.get("effort") if isinstance(config, dict) else None
    return effort if isinstance(effort, str) else None


def _system_blocks(prompt: str | None, *, oauth: bool, cache_control: JsonObject | None) -> list[JsonObject]:
    texts = [CLAUDE_CODE_IDENTITY] if oauth else []
    if prompt:
        texts.append(sanitize_surrogates(prompt))
    return [_with_cache({"type": "text", "text": text}, cache_control) for text in texts]


def _with_cache(block: JsonObject, cache_control: JsonObject | None) -> JsonObject:
    if cache_control is not None:
        block["cache_control"] = dict(cache_control)
    return block


def convert_tools(
    tools: list[Tool],
    model: Model,
    *,
    oauth: bool,
    cache_control: JsonObject | None,
    non_strict: bool = False,
) -> list[JsonObject]:
    """Tool definitions; the last one carries the cache marker (it caches every tool before it).

    A tool that asks for constrained sampling is sent ``strict`` with its schema made strict where
    the model's compat has ``supportsStrictTools`` and the schema allows it, unless ``non_strict``
    (the session's strict tools went over Anthropic's limits once)."""
    eager = eager_tool_streaming(model)
    supports_strict = anthropic_compat(model).supports_strict_tools
    out: list[JsonObject] = []
    for tool in tools:
        strict = (
            None
            if non_strict and _prefers_strict(tool)
            else json_schema_parameters(tool, supports_strict, _strict_refuses)
        )
        schema = tool.parameters if strict is None else strict
        definition: JsonObject = {
            "name": to_claude_code_name(tool.name) if oauth else tool.name,
            "description": tool.description,
        }
        if eager:
            definition["eager_input_streaming"] = True
        input_schema: JsonObject = {
            "type": "object",
            "properties": schema.get("properties") or {},
            "required": schema.get("required") or [],
        }
        # What else the model needs to read the schema (as pi 1.6 sends it: the same bytes keep a
        # session's cached tool list when either tool continues it; Anthropic refuses other root keys).
        for key in ("additionalProperties", "$defs", "definitions"):
            if key in schema:
                input_schema[key] = schema[key]
        if strict is not None:
            # A strict tool keeps the rest of its (strict) schema too, as pi sends it.
            definition["strict"] = True
            input_schema = {**strict, **input_schema}
        definition["input_schema"] = input_schema
        out.append(definition)
    if out:
        _with_cache(out[-1], cache_control)
    return out


# Keywords Anthropic's strict tools refuse (the whole request fails with a 400), and the string
# formats they take (Anthropic's structured-outputs documentation, as pi 1.6 lists them).
_STRICT_REFUSED = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
    }
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)


def _strict_refuses(key: str, value: object) -> bool:
    if key in _STRICT_REFUSED:
        return True
    if key == "minItems":
        return value != 0 and value != 1
    if key == "format":
        return not isinstance(value, str) or value not in _STRICT_FORMATS
    return False


def _prefers_strict(tool: Tool) -> bool:
    sampling = tool.constrained_sampling
    return isinstance(sampling, JsonSchemaSampling) and sampling.strict == "prefer"


def has_strict_tools(tools: list[Tool] | None, model: Model) -> bool:
    """Whether a request with ``tools`` sends any ``strict: "prefer"`` tool strict (the ones a
    retry after Anthropic's strict-tool limits sends as any other)."""
    if not tools or not anthropic_compat(model).supports_strict_tools:
        return False
    return any(
        _prefers_strict(tool) and json_schema_parameters(tool, True, _strict_refuses) is not None
        for tool in tools
    )


_fragments = MessageMemo()


class _AnthropicHistory(WireHistory):
    """A history's Anthropic messages so far, extended request by request (``Continuation``)."""

    def __init__(self, model: Model, oauth: bool) -> None:
        replay = ReplayHistory(model, lambda call_id, _m, _s: normalize_id_anthropic(call_id), "anthropic")
        super().__init__(replay, FragmentList())
        self.oauth = oauth

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        fragment = _fragments.recall(message, lambda m: cached_fragment(_convert(m, self.model, self.oauth)))
        if fragment is not None:
            out.add(fragment)

    def add_tool_results(self, out: FragmentList, results: list[ToolResultMessage]) -> None:
        out.add(_tool_results_fragment(results))


_histories: Continuation[_AnthropicHistory] = Continuation()


@collector_paused()  # a first request after a resume converts a whole history
def convert_messages(
    messages: list[Message], model: Model, *, oauth: bool, cache_control: JsonObject | None
) -> list[JsonObject]:
    """Messages in Anthropic's shape; consecutive tool results share one user message.

    Each message's wire form is made once and reused by later requests (``tau.ai.transport.request_cache``).
    """
    key = (
        model.api,
        model.provider,
        model.id,
        "image" in model.input,
        oauth,
        anthropic_compat(model).allow_empty_signature,
    )
    history = continue_history(
        _histories, _fragments, key, key, model, messages, lambda: _AnthropicHistory(model, oauth)
    )
    out = history.request_items()
    if cache_control is not None:
        _mark_final_user_message(out, cache_control)
    _histories.keep(key, history)
    return out


def _convert(message: Message, model: Model, oauth: bool) -> JsonObject | None:
    if isinstance(message, UserMessage):
        return _user_message(message, model)
    assert isinstance(message, AssistantMessage)
    return _assistant_message(
        message, oauth=oauth, allow_empty_signature=anthropic_compat(model).allow_empty_signature
    )


def sent_reply(message: AssistantMessage, model: Model, *, oauth: bool) -> list[JsonObject]:
    """A reply of this model as the next request sends it (no message when nothing of it is sent)."""
    converted = _convert(message, model, oauth)
    return [] if converted is None else [converted]


def _tool_results_fragment(results: list[ToolResultMessage]) -> CachedFragment:
    return _fragments.recall_run(
        results, lambda run: CachedFragment({"role": "user", "content": [_tool_result_block(m) for m in run]})
    )


def _user_message(message: UserMessage, model: Model) -> JsonObject | None:
    if isinstance(message.content, str):
        if not message.content.strip():
            return None
        return {"role": "user", "content": sanitize_surrogates(message.content)}
    blocks: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif "image" in model.input:
            blocks.append(_image_block(block))
    return {"role": "user", "content": blocks} if blocks else None


def _image_block(image: ImageContent) -> JsonObject:
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}}


def _assistant_message(
    message: AssistantMessage, *, oauth: bool, allow_empty_signature: bool = False
) -> JsonObject | None:
    blocks: list[JsonObject] = []
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                blocks.append({"type": "text", "text": sanitize_surrogates(block.text)})
        elif isinstance(block, ThinkingContent):
            converted = _thinking_block(block, allow_empty_signature)
            if converted is not None:
                blocks.append(converted)
        else:
            blocks.append(_tool_use_block(block, oauth=oauth))
    return {"role": "assistant", "content": blocks} if blocks else None


def _thinking_block(block: ThinkingContent, allow_empty_signature: bool = False) -> JsonObject | None:
    signature = block.thinking_signature
    if block.redacted:
        return {"type": "redacted_thinking", "data": signature} if signature else None
    if not block.thinking.strip():
        return None
    if signature and signature.strip():
        # The signature covers the exact text: replay it untouched, even if it holds surrogates.
        return {"type": "thinking", "thinking": block.thinking, "signature": signature}
    if allow_empty_signature:
        # compat.allowEmptySignature: a compatible endpoint that sends and takes unsigned thinking.
        return {"type": "thinking", "thinking": sanitize_surrogates(block.thinking), "signature": ""}
    # Unsigned (aborted stream, another model): plain text, no tags the model would imitate.
    return {"type": "text", "text": sanitize_surrogates(block.thinking)}


def _tool_use_block(call: ToolCall, *, oauth: bool) -> JsonObject:
    name = to_claude_code_name(call.name) if oauth else call.name
    return {"type": "tool_use", "id": call.id, "name": name, "input": call.arguments or {}}


def _tool_result_block(message: ToolResultMessage) -> JsonObject:
    return {
        "type": "tool_result",
        "tool_use_id": message.tool_call_id,
        "content": _tool_result_content(message.content),
        "is_error": message.is_error,
    }


def _tool_result_content(content: list[UserContent]) -> str | list[JsonObject]:
    """A joined string for text-only results; a block list when images are present."""
    if not any(isinstance(block, ImageContent) for block in content):
        return sanitize_surrogates("\n".join(b.text for b in content if isinstance(b, TextContent)))
    blocks: list[JsonObject] = [
        {"type": "text", "text": sanitize_surrogates(b.text)}
        if isinstance(b, TextContent)
        else _image_block(b)
        for b in content
    ]
    if not any(isinstance(b, TextContent) for b in content):
        blocks.insert(0, {"type": "text", "text": IMAGE_ONLY_TOOL_RESULT_TEXT})
    return blocks


def _mark_final_user_message(messages: list[JsonObject], cache_control: JsonObject) -> None:
    """Cache the whole history by marking the last block of a final user message.

    The marked message is a copy: the unmarked one is shared with later requests.
    """
    if not messages or messages[-1]["role"] != "user":
        return
    last = messages[-1]
    content: Any = last["content"]
    if isinstance(content, str):
        messages[-1] = {**last, "content": [_with_cache({"type": "text", "text": content}, cache_control)]}
    elif content and content[-1].get("type") in ("text", "image", "tool_result"):
        marked = _with_cache(dict(content[-1]), cache_control)
        messages[-1] = {**last, "content": [*content[:-1], marked]}

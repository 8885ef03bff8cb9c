"""The data model of the LLM layer: content blocks, messages, usage, models, context, tools.

Objects are plain classes with snake_case attributes. ``to_json()`` / ``from_json()`` convert to and
from pi's on-disk shape (camelCase keys, optional keys omitted when unset), so a message read from a
pi session file dumps back to an equal JSON object.

Text and thinking blocks keep streamed text as a list of pieces joined on first read: appending a
delta is O(1), so a 20 MB reply streamed in 4 KB pieces stays linear. The halves of a surrogate pair
split across two deltas are joined into the character as they are appended.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal, TypeAlias

import msgspec
from msgspec import Struct, field

from tau._unicode import join_pairs, join_split_pair

Api: TypeAlias = str
Provider: TypeAlias = str
StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted"]
"""``pending``: a reply still streaming (pi 1.x); a finished message never has it."""
ThinkingLevel: TypeAlias = Literal["minimal", "low", "medium", "high", "xhigh", "max"]
ThinkingLevelOrOff: TypeAlias = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
CacheRetention: TypeAlias = Literal["none", "short", "long"]
JsonObject: TypeAlias = dict[str, Any]


class JsonRecord(Struct, rename="camel", omit_defaults=True):
    """A record whose JSON shape is its fields in order, camelCase, with the ones at their default
    left out: msgspec writes it (``to_json``), so the class states its shape once. A subclass with
    a ``type`` tag names it with ``tag_field="type", tag=...`` (written first, as pi writes it).

    Records whose pi shape differs (keys in another order than the fields, a ``0``, ``false`` or
    ``"stop"`` that is written although it is the default) keep a ``to_json`` of their own: msgspec
    leaves out every default or none, where pi leaves out only what is ``undefined``."""

    def to_json(self) -> JsonObject:
        out: JsonObject = msgspec.to_builtins(self)
        return out


def now_ms() -> int:
    """Unix epoch milliseconds, the timestamp unit of every message."""
    return time.time_ns() // 1_000_000


class _StreamedText:
    """Text that grows by appended pieces and is joined only when read."""

    __slots__ = ("_pieces", "_text")

    def __init__(self, text: str = "") -> None:
        self._text = text
        self._pieces: list[str] = []

    def _joined(self) -> str:
        if self._pieces:
            self._pieces.insert(0, self._text)
            self._text = "".join(self._pieces)
            self._pieces.clear()
        return self._text

    def _append(self, delta: str) -> None:
        """Add ``delta``; the two halves of a surrogate pair that arrive in two deltas become the one
        character, as appending does in JavaScript (a provider may split an emoji's escapes)."""
        if not delta:
            return
        delta = join_pairs(delta)
        pieces = self._pieces
        joined = join_split_pair(pieces[-1] if pieces else self._text, delta)
        if joined is not None:
            if pieces:
                pieces[-1] = joined[0]
            else:
                self._text = joined[0]
            delta = joined[1]
            if not delta:
                return
        pieces.append(delta)


class TextContent(_StreamedText):
    """A text block: ``{"type": "text", "text": ..., "textSignature"?: ...}``."""

    __slots__ = ("text_signature",)
    type: Literal["text"] = "text"

    def __init__(self, text: str = "", text_signature: str | None = None) -> None:
        super().__init__(text)
        self.text_signature = text_signature

    @property
    def text(self) -> str:
        return self._joined()

    @text.setter
    def text(self, value: str) -> None:
        self._text = value
        self._pieces.clear()

    def append(self, delta: str) -> None:
        self._append(delta)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": "text", "text": self.text}
        if self.text_signature is not None:
            out["textSignature"] = self.text_signature
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> TextContent:
        return cls(data.get("text") or "", data.get("textSignature"))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TextContent)
            and self.text == other.text
            and self.text_signature == other.text_signature
        )

    def __repr__(self) -> str:
        return f"TextContent(text={self.text!r}, text_signature={self.text_signature!r})"

    __hash__ = None  # type: ignore[assignment]


class ThinkingContent(_StreamedText):
    """A reasoning block: ``{"type": "thinking", "thinking": ..., "thinkingSignature"?, "redacted"?}``."""

    __slots__ = ("redacted", "thinking_signature")
    type: Literal["thinking"] = "thinking"

    def __init__(
        self, thinking: str = "", thinking_signature: str | None = None, redacted: bool | None = None
    ) -> None:
        super().__init__(thinking)
        self.thinking_signature = thinking_signature
        self.redacted = redacted

    @property
    def thinking(self) -> str:
        return self._joined()

    @thinking.setter
    def thinking(self, value: str) -> None:
        self._text = value
        self._pieces.clear()

    def append(self, delta: str) -> None:
        self._append(delta)

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": "thinking", "thinking": self.thinking}
        if self.thinking_signature is not None:
            out["thinkingSignature"] = self.thinking_signature
        if self.redacted is not None:
            out["redacted"] = self.redacted
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ThinkingContent:
        return cls(
            thinking=data.get("thinking") or "",
            thinking_signature=data.get("thinkingSignature"),
            redacted=data.get("redacted"),
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ThinkingContent)
            and self.thinking == other.thinking
            and self.thinking_signature == other.thinking_signature
            and self.redacted == other.redacted
        )

    def __repr__(self) -> str:
        return (
            f"ThinkingContent(thinking={self.thinking!r}, "
            f"thinking_signature={self.thinking_signature!r}, redacted={self.redacted!r})"
        )

    __hash__ = None  # type: ignore[assignment]


class ImageContent(Struct):
    """An image block (user messages and tool results only); ``data`` is bare base64."""

    data: str
    mime_type: str
    type: ClassVar[Literal["image"]] = "image"

    def to_json(self) -> JsonObject:
        return {"type": "image", "data": self.data, "mimeType": self.mime_type}

    @classmethod
    def from_json(cls, data: JsonObject) -> ImageContent:
        return cls(data=data.get("data") or "", mime_type=data.get("mimeType") or "")


class ToolCall(Struct):
    """A tool call block; ``arguments`` is always an object once the block is finished."""

    id: str
    name: str
    arguments: JsonObject = field(default_factory=dict)
    thought_signature: str | None = None
    arguments_error: str | None = None
    """Why the arguments the model sent could not be used (then ``arguments`` is ``{}``): the call
    is answered with this instead of being run (pi's ``argumentsError``)."""
    type: ClassVar[Literal["toolCall"]] = "toolCall"

    def to_json(self) -> JsonObject:
        out: JsonObject = {"type": "toolCall", "id": self.id, "name": self.name, "arguments": self.arguments}
        if self.thought_signature is not None:
            out["thoughtSignature"] = self.thought_signature
        if self.arguments_error is not None:
            out["argumentsError"] = self.arguments_error
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ToolCall:
        arguments = data.get("arguments")
        error = data.get("argumentsError")
        return cls(
            id=data.get("id") or "",
            name=data.get("name") or "",
            arguments=arguments if isinstance(arguments, dict) else {},
            thought_signature=data.get("thoughtSignature"),
            arguments_error=error if isinstance(error, str) else None,
        )


UserContent: TypeAlias = TextContent | ImageContent
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall
ContentBlock: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall

_BLOCK_TYPES: dict[str, Any] = {
    "text": TextContent,
    "thinking": ThinkingContent,
    "image": ImageContent,
    "toolCall": ToolCall,
}


def content_from_json(data: JsonObject) -> ContentBlock:
    """Build a content block from its JSON form; raises ``ValueError`` on an unknown ``type``."""
    kind = data.get("type")
    cls = _BLOCK_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown content block type: {kind!r}")
    block: ContentBlock = cls.from_json(data)
    return block


_ASSISTANT_BLOCKS = frozenset({"text", "thinking", "toolCall"})
_USER_BLOCKS = frozenset({"text", "image"})


def _blocks_from_json(raw: Any, kinds: frozenset[str]) -> list[ContentBlock]:
    """The blocks of a message's ``content`` list whose type is one of ``kinds``; raises like
    ``content_from_json`` on a block of an unknown type (a message file read millions of blocks:
    one loop, no generator per message)."""
    blocks: list[ContentBlock] = []
    for data in raw or ():
        kind = data.get("type")
        cls = _BLOCK_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise ValueError(f"unknown content block type: {kind!r}")
        if kind in kinds:
            blocks.append(cls.from_json(data))
    return blocks


def _js_number(value: float) -> float:
    """A whole float as an int, so it is written as JavaScript writes numbers (``0``, not ``0.0``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


class Cost(Struct):
    """Dollar cost of one response, split like the token counts."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0
    total_from_provider: bool | None = None
    """Whether ``total`` is what the provider billed (OpenRouter reports it) rather than the catalogue
    estimate; ``None``: not known (a message written before pi 1.x)."""

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "input": _js_number(self.input),
            "output": _js_number(self.output),
            "cacheRead": _js_number(self.cache_read),
            "cacheWrite": _js_number(self.cache_write),
            "total": _js_number(self.total),
        }
        if self.total_from_provider is not None:
            out["totalFromProvider"] = self.total_from_provider
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> Cost:
        get = data.get
        from_provider = get("totalFromProvider")
        return cls(
            get("input", 0),
            get("output", 0),
            get("cacheRead", 0),
            get("cacheWrite", 0),
            get("total", 0),
            from_provider if isinstance(from_provider, bool) else None,
        )


class Usage(Struct):
    """Token counts normalised across APIs; ``total_tokens`` is the sum of the four counts."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = field(default_factory=Cost)
    reasoning: int | None = None
    """The reasoning tokens among ``output`` (not added to it again), as the APIs that break them
    out report them; ``None`` for an API that does not (Anthropic)."""
    cache_write_1h: int | None = None
    """The part of ``cache_write`` kept for an hour (billed at twice the input price); only
    Anthropic reports the split."""

    def recompute_total(self) -> None:
        self.total_tokens = self.input + self.output + self.cache_read + self.cache_write

    def plus(self, other: Usage) -> Usage:
        """A new usage: this one and ``other`` added up, token counts and costs."""
        cost = Cost(
            self.cost.input + other.cost.input,
            self.cost.output + other.cost.output,
            self.cost.cache_read + other.cost.cache_read,
            self.cost.cache_write + other.cost.cache_write,
            self.cost.total + other.cost.total,
        )
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.total_tokens + other.total_tokens,
            cost,
        )

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        out["totalTokens"] = self.total_tokens
        out["cost"] = self.cost.to_json()
        if self.cache_write_1h is not None:
            out["cacheWrite1h"] = self.cache_write_1h
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> Usage:
        get = data.get
        reasoning = get("reasoning")
        long_write = get("cacheWrite1h")
        return cls(
            get("input", 0),
            get("output", 0),
            get("cacheRead", 0),
            get("cacheWrite", 0),
            get("totalTokens", 0),
            Cost.from_json(get("cost") or {}),
            reasoning if isinstance(reasoning, int) and not isinstance(reasoning, bool) else None,
            long_write if isinstance(long_write, int) and not isinstance(long_write, bool) else None,
        )


class UserMessage(Struct):
    content: str | list[UserContent]
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["user"]] = "user"

    def to_json(self) -> JsonObject:
        content: Any = self.content if isinstance(self.content, str) else [b.to_json() for b in self.content]
        return {"role": "user", "content": content, "timestamp": self.timestamp}

    @classmethod
    def from_json(cls, data: JsonObject) -> UserMessage:
        raw = data.get("content")
        content = raw if isinstance(raw, str) else _blocks_from_json(raw, _USER_BLOCKS)
        return cls(content, data.get("timestamp", 0))  # type: ignore[arg-type]


class AssistantMessage(Struct):
    content: list[AssistantContent]
    api: Api
    provider: Provider
    model: str
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = field(default_factory=now_ms)
    error_message: str | None = None
    response_model: str | None = None
    response_id: str | None = None
    diagnostics: list[JsonObject] | None = None
    # Recorded by pi 1.x: the provider's own stop reason, the response's wall time and the
    # thinking level the request asked for. Kept so a session file round-trips through tau.
    raw_stop_reason: str | None = None
    duration_ms: int | None = None
    thinking_level: str | None = None
    provider_thinking_level: str | None = None
    """The effort an Anthropic model with mid-conversation effort was asked for (pi 1.6's
    ``providerThinkingLevel``): later requests state it again before this reply."""
    role: ClassVar[Literal["assistant"]] = "assistant"

    def __copy__(self) -> AssistantMessage:
        # The agent copies the streaming reply for its listeners at every delta; the generic copy
        # of a slotted class goes through the pickle protocol, about ten times slower than this.
        if type(self) is not AssistantMessage:
            return msgspec.structs.replace(self)
        return AssistantMessage(
            self.content,
            self.api,
            self.provider,
            self.model,
            self.usage,
            self.stop_reason,
            self.timestamp,
            self.error_message,
            self.response_model,
            self.response_id,
            self.diagnostics,
            self.raw_stop_reason,
            self.duration_ms,
            self.thinking_level,
            self.provider_thinking_level,
        )

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "role": "assistant",
            "content": [b.to_json() for b in self.content],
            "api": self.api,
            "provider": self.provider,
            "model": self.model,
            "usage": self.usage.to_json(),
            "stopReason": self.stop_reason,
            "timestamp": self.timestamp,
        }
        if self.provider_thinking_level is not None:
            out["providerThinkingLevel"] = self.provider_thinking_level
        # The fields a reply learns while it streams come after, in the order pi 1.6 adds them.
        if self.response_id is not None:
            out["responseId"] = self.response_id
        if self.response_model is not None:
            out["responseModel"] = self.response_model
        if self.diagnostics is not None:
            out["diagnostics"] = self.diagnostics
        if self.raw_stop_reason is not None:
            out["rawStopReason"] = self.raw_stop_reason
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        if self.duration_ms is not None:
            out["durationMs"] = self.duration_ms
        if self.thinking_level is not None:
            out["thinkingLevel"] = self.thinking_level
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> AssistantMessage:
        get = data.get
        # Positional, in field order (a resumed session makes one per reply): content, api,
        # provider, model, usage, stop_reason, timestamp, error_message, response_model,
        # response_id, diagnostics, raw_stop_reason, duration_ms, thinking_level,
        # provider_thinking_level.
        return cls(
            _blocks_from_json(get("content"), _ASSISTANT_BLOCKS),  # type: ignore[arg-type]
            get("api") or "",
            get("provider") or "",
            get("model") or "",
            Usage.from_json(get("usage") or {}),
            get("stopReason") or "stop",
            get("timestamp", 0),
            get("errorMessage"),
            get("responseModel"),
            get("responseId"),
            get("diagnostics"),
            _optional_str(get("rawStopReason")),
            _optional_int(get("durationMs")),
            _optional_str(get("thinkingLevel")),
            _optional_str(get("providerThinkingLevel")),
        )

    def text(self) -> str:
        """All text blocks joined: the visible answer."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]


class ToolResultMessage(Struct):
    tool_call_id: str
    tool_name: str
    content: list[UserContent]
    is_error: bool = False
    details: Any = None
    timestamp: int = field(default_factory=now_ms)
    nested_calls: JsonObject | None = None
    """pi's ``nestedCalls``: the calls the tool made while it ran (a codemode script's), a bounded
    record ``{calls: [{id, name, status, arguments?, durationMs?, error?}], complete}``."""
    duration_ms: int | None = None
    """pi's ``durationMs``: how long the tool ran (absent when it did not run, and in older records)."""
    usage: Usage | None = None
    """pi's ``usage``: what the models the tool called cost (a codemode script's image generations);
    counted in the session's totals."""
    role: ClassVar[Literal["toolResult"]] = "toolResult"

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "role": "toolResult",
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "content": [b.to_json() for b in self.content],
        }
        if self.details is not None:
            out["details"] = self.details
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        out["isError"] = self.is_error
        if self.duration_ms is not None:
            out["durationMs"] = self.duration_ms
        out["timestamp"] = self.timestamp
        if self.nested_calls is not None:
            out["nestedCalls"] = self.nested_calls
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ToolResultMessage:
        get = data.get
        usage = get("usage")
        return cls(  # positional, in field order
            get("toolCallId") or "",
            get("toolName") or "",
            _blocks_from_json(get("content"), _USER_BLOCKS),  # type: ignore[arg-type]
            bool(get("isError", False)),
            get("details"),
            get("timestamp", 0),
            get("nestedCalls") if isinstance(get("nestedCalls"), dict) else None,
            _optional_int(get("durationMs")),
            Usage.from_json(usage) if isinstance(usage, dict) else None,
        )


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _optional_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def message_from_json(data: JsonObject) -> Message:
    """Build a message from its JSON form; raises ``ValueError`` on an unknown ``role``."""
    role = data.get("role")
    if role == "user":
        return UserMessage.from_json(data)
    if role == "assistant":
        return AssistantMessage.from_json(data)
    if role == "toolResult":
        return ToolResultMessage.from_json(data)
    raise ValueError(f"unknown message role: {role!r}")


class JsonSchemaSampling(Struct, frozen=True, tag_field="type", tag="json_schema"):
    """Sample a tool's arguments against its schema (pi 1.6's ``{"type": "json_schema", strict}``):
    ``prefer`` goes strict where the model can and as any other tool elsewhere; ``require`` makes
    the request fail where the model cannot."""

    strict: Literal["prefer", "require"] = "prefer"


class GrammarSampling(Struct, frozen=True, tag_field="type", tag="grammar"):
    """Sample a tool's one string argument from a grammar (pi 1.6's ``{"type": "grammar", variants}``):
    ``variants`` holds the grammar per dialect, ``openai_lark`` and/or ``openai_regex`` (Lark is
    preferred). Models with ``compat.supportsOpenAIGrammarTools`` get an OpenAI custom tool; any
    other model gets the tool as a plain function tool."""

    variants: dict[str, str] = field(default_factory=dict)


ConstrainedSampling: TypeAlias = JsonSchemaSampling | GrammarSampling
"""A tool's ``constrainedSampling`` (pi 1.6's ``ConstrainedSamplingConfig``)."""


def constrained_sampling_from_json(data: Any) -> ConstrainedSampling | None:
    """pi's ``constrainedSampling`` value read leniently: ``false``, a missing value or an unknown
    shape is none."""
    if not isinstance(data, dict):
        return None
    kind = data.get("type")
    if kind == "json_schema":
        return JsonSchemaSampling("require" if data.get("strict") == "require" else "prefer")
    if kind == "grammar":
        variants = data.get("variants")
        if not isinstance(variants, dict):
            variants = {}
        return GrammarSampling({k: v for k, v in variants.items() if isinstance(v, str)})
    return None


class Tool(JsonRecord):
    """A tool the model may call; ``parameters`` is a plain JSON Schema object.

    ``constrained_sampling`` is written as pi 1.6's ``constrainedSampling`` (see
    ``JsonSchemaSampling`` and ``GrammarSampling``)."""

    name: str
    description: str
    parameters: JsonObject = field(default_factory=lambda: {"type": "object", "properties": {}})
    constrained_sampling: ConstrainedSampling | None = None

    @classmethod
    def from_json(cls, data: JsonObject) -> Tool:
        return cls(
            name=data["name"],
            description=data.get("description") or "",
            parameters=data.get("parameters") or {"type": "object", "properties": {}},
            constrained_sampling=constrained_sampling_from_json(data.get("constrainedSampling")),
        )


class PromptAnchor(Struct):
    """The prompt and tools a conversation's first request declared (issue #31): later changes
    travel as ``PromptUpdate``s appended to the conversation, so the cached prefix survives."""

    system_prompt: str
    tools: list[Tool] = field(default_factory=list)
    sections: dict[str, str] | None = None
    """The named sections the first record held (pi 1.x's system message), when it had them:
    ``system_prompt`` is then ``content`` and their texts, blank-line apart. An API that sends the
    transcript as recorded (pi-messages) sends them as they are."""
    content: str = ""
    """With ``sections``: the record's own text before them (usually empty)."""
    timestamp: int = 0
    """When the first record was made (pi-messages sends it; 0 when unknown)."""


class PromptUpdate(Struct):
    """A change of prompt or tools that follows ``messages[:at]``: ``content`` is free text,
    ``sections`` patches named prompt sections (``None`` removes one), tools are added or removed
    by name. See ``tau.ai.prompt_updates`` for how each API is sent it."""

    at: int
    content: str = ""
    sections: dict[str, str | None] = field(default_factory=dict)
    tools_added: list[Tool] = field(default_factory=list)
    tools_removed: list[str] = field(default_factory=list)
    timestamp: int = 0
    """When the change was recorded (pi-messages sends it; 0 when unknown)."""


class Context(Struct):
    """What one model call is made of.

    ``system_prompt`` and ``tools`` are always the current ones. ``anchor`` and ``updates``, when
    set, say how they came about (the first request's prompt and tools, then changes in place):
    an API that can, keeps the anchor and sends the changes where they happened
    (``tau.ai.prompt_updates``); any other sends the current prompt and tools.
    """

    messages: list[Message] = field(default_factory=list)
    system_prompt: str | None = None
    tools: list[Tool] | None = None
    anchor: PromptAnchor | None = None
    updates: list[PromptUpdate] | None = None

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        if self.system_prompt is not None:
            out["systemPrompt"] = self.system_prompt
        out["messages"] = [m.to_json() for m in self.messages]
        if self.tools is not None:
            out["tools"] = [t.to_json() for t in self.tools]
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> Context:
        tools = data.get("tools")
        return cls(
            messages=[message_from_json(m) for m in data.get("messages") or []],
            system_prompt=data.get("systemPrompt"),
            tools=[Tool.from_json(t) for t in tools] if tools is not None else None,
        )


class CostTier(JsonRecord, omit_defaults=False):
    """Prices that replace the base ones once a request's input exceeds ``input_tokens_above``
    (every price written, zero or not)."""

    input_tokens_above: int
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0

    @classmethod
    def from_json(cls, data: JsonObject) -> CostTier:
        return cls(
            input_tokens_above=data.get("inputTokensAbove", 0),
            input=data.get("input", 0),
            output=data.get("output", 0),
            cache_read=data.get("cacheRead", 0),
            cache_write=data.get("cacheWrite", 0),
        )


class ModelCost(Struct):
    """Prices in US dollars per million tokens; ``tiers`` hold long-context prices (pi-ai 1.x)."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: list[CostTier] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }
        if self.tiers:
            out["tiers"] = [tier.to_json() for tier in self.tiers]
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> ModelCost:
        return cls(
            input=data.get("input", 0),
            output=data.get("output", 0),
            cache_read=data.get("cacheRead", 0),
            cache_write=data.get("cacheWrite", 0),
            tiers=[CostTier.from_json(tier) for tier in data.get("tiers") or []],
        )


class Model(Struct):
    """A model descriptor. Build one by hand with any ``base_url`` to reach a local server.

    ``compat`` and ``thinking_level_map`` keep pi's camelCase JSON keys as dictionary keys.
    """

    id: str
    api: Api
    provider: Provider
    base_url: str
    name: str = ""
    reasoning: bool = False
    input: list[str] = field(default_factory=lambda: ["text"])
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    compat: JsonObject | None = None
    thinking_level_map: dict[str, str | None] | None = None
    # pi's image limits and prompt-cache lifetimes, kept as pi's JSON (camelCase keys).
    input_limits: JsonObject | None = None
    prompt_cache: JsonObject | None = None
    # Fields merged into every request body (OpenAI-compatible APIs only), then the effective
    # thinking level's own (keys: tau's levels, not thinkingLevelMap values); pi's JSON as is.
    sampling_params: JsonObject | None = None
    sampling_params_by_thinking_level: dict[str, JsonObject] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.id

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "id": self.id,
            "name": self.name,
            "api": self.api,
            "provider": self.provider,
            "baseUrl": self.base_url,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "cost": self.cost.to_json(),
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
        }
        if self.headers is not None:
            out["headers"] = dict(self.headers)
        if self.compat is not None:
            out["compat"] = dict(self.compat)
        if self.thinking_level_map is not None:
            out["thinkingLevelMap"] = dict(self.thinking_level_map)
        if self.input_limits is not None:
            out["inputLimits"] = dict(self.input_limits)
        if self.prompt_cache is not None:
            out["promptCache"] = dict(self.prompt_cache)
        if self.sampling_params is not None:
            out["samplingParams"] = dict(self.sampling_params)
        if self.sampling_params_by_thinking_level is not None:
            out["samplingParamsByThinkingLevel"] = {
                level: dict(params) for level, params in self.sampling_params_by_thinking_level.items()
            }
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> Model:
        return cls(
            id=data["id"],
            name=data.get("name") or data["id"],
            api=data["api"],
            provider=data["provider"],
            base_url=data.get("baseUrl") or "",
            reasoning=bool(data.get("reasoning", False)),
            input=list(data.get("input") or ["text"]),
            cost=ModelCost.from_json(data.get("cost") or {}),
            context_window=data.get("contextWindow", 128_000),
            max_tokens=data.get("maxTokens", 16_384),
            headers=data.get("headers"),
            compat=data.get("compat"),
            thinking_level_map=data.get("thinkingLevelMap"),
            input_limits=data.get("inputLimits"),
            prompt_cache=data.get("promptCache"),
            sampling_params=data.get("samplingParams"),
            sampling_params_by_thinking_level=data.get("samplingParamsByThinkingLevel"),
        )


def models_are_equal(a: Model | None, b: Model | None) -> bool:
    """Two models are the same when provider and id match; ``None`` equals nothing."""
    if a is None or b is None:
        return False
    return a.provider == b.provider and a.id == b.id

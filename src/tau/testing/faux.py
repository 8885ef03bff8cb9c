"""An in-process scripted provider, registered like any API: test code built on tau offline.

    faux = register_faux_provider()
    faux.set_responses([faux_message("hello"), faux_message(faux_tool_call("read", {"path": "a"}))])
    reply = await complete(faux.get_model(), Context(messages=[UserMessage("hi")]))
    faux.unregister()

Each call consumes the next scripted response (a message, or a function of the request that returns
one). The response is streamed with the full event protocol: text and thinking in small pieces, tool
arguments as JSON fragments. Usage is estimated at four characters a token; with a ``session_id``
(and cache retention not ``none``) the common prefix with the session's previous prompt is reported
as a cache read, the rest as a cache write.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from msgspec import Struct, field

from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import ResponseInfo, SimpleStreamOptions, StreamOptions
from tau.ai.registry import ApiProvider, register_api_provider, unregister_api_providers
from tau.ai.stream_writer import StreamWriter, run_stream
from tau.ai.types import (
    AssistantContent,
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    ModelCost,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)

FAUX_BASE_URL = "http://localhost:0"
_ids = itertools.count(1)


class FauxState(Struct):
    call_count: int = 0


FauxFactory: TypeAlias = Callable[
    [Context, StreamOptions, FauxState, Model], "AssistantMessage | Awaitable[AssistantMessage]"
]
FauxResponse: TypeAlias = AssistantMessage | FauxFactory


def faux_text(text: str) -> TextContent:
    return TextContent(text)


def faux_thinking(thinking: str, signature: str | None = None) -> ThinkingContent:
    return ThinkingContent(thinking, thinking_signature=signature)


def faux_tool_call(name: str, arguments: dict[str, object], *, id: str | None = None) -> ToolCall:
    return ToolCall(id=id or f"faux_call_{next(_ids)}", name=name, arguments=dict(arguments))


def faux_message(
    content: str | AssistantContent | Sequence[AssistantContent],
    *,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    response_id: str | None = None,
) -> AssistantMessage:
    """A scripted reply; a plain string becomes one text block."""
    if isinstance(content, str):
        blocks: list[AssistantContent] = [TextContent(content)]
    elif isinstance(content, (TextContent, ThinkingContent, ToolCall)):
        blocks = [content]
    else:
        blocks = list(content)
    return AssistantMessage(
        content=blocks,
        api="faux",
        provider="faux",
        model="faux-1",
        stop_reason=stop_reason,
        error_message=error_message,
        response_id=response_id,
    )


class FauxProvider(Struct):
    """A registered faux API: its models, its script and its call count."""

    api: str
    models: list[Model]
    source_id: str
    state: FauxState = field(default_factory=FauxState)
    chunk_chars: int = 16
    tokens_per_second: float | None = None
    _pending: deque[FauxResponse] = field(default_factory=deque)
    _prompts: dict[str, str] = field(default_factory=dict)

    def get_model(self, model_id: str | None = None) -> Model:
        if model_id is None:
            return self.models[0]
        for model in self.models:
            if model.id == model_id:
                return model
        raise LookupError(f"faux provider has no model {model_id!r}")

    def set_responses(self, responses: Sequence[FauxResponse]) -> None:
        self._pending = deque(responses)

    def append_responses(self, responses: Sequence[FauxResponse]) -> None:
        self._pending.extend(responses)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def unregister(self) -> None:
        unregister_api_providers(self.source_id)

    # -- streaming -----------------------------------------------------------------------------

    def stream(self, model: Model, context: Context, options: StreamOptions) -> AssistantMessageEventStream:
        step = self._pending.popleft() if self._pending else None
        self.state.call_count += 1

        async def produce(writer: StreamWriter) -> None:
            if options.on_response is not None:
                hook = options.on_response(ResponseInfo(status=200, headers={}), model)
                if inspect.isawaitable(hook):
                    await hook
            if step is None:
                self._estimate_usage(writer, context, options, [])
                writer.output.stop_reason = "error"
                writer.output.error_message = "No more faux responses queued"
                return
            scripted = (
                step if isinstance(step, AssistantMessage) else step(context, options, self.state, model)
            )
            if inspect.isawaitable(scripted):
                scripted = await scripted
            assert isinstance(scripted, AssistantMessage)
            self._estimate_usage(writer, context, options, scripted.content)
            writer.output.response_id = scripted.response_id
            writer.start()
            for block in scripted.content:
                await self._stream_block(writer, block)
            writer.output.stop_reason = scripted.stop_reason
            writer.output.error_message = scripted.error_message

        return run_stream(model, options, produce)

    def stream_simple(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream:
        return self.stream(model, context, options)

    async def _stream_block(self, writer: StreamWriter, block: AssistantContent) -> None:
        if isinstance(block, TextContent):
            index = writer.text_start(block.text_signature)
            for piece in self._pieces(block.text):
                await self._pace(piece)
                writer.text_delta(index, piece)
            writer.text_end(index)
        elif isinstance(block, ThinkingContent):
            index = writer.thinking_start(block.thinking_signature, block.redacted)
            for piece in self._pieces(block.thinking):
                await self._pace(piece)
                writer.thinking_delta(index, piece)
            writer.thinking_end(index)
        else:
            index = writer.toolcall_start(block.id, block.name, block.thought_signature)
            for piece in self._pieces(json.dumps(block.arguments)):
                await self._pace(piece)
                writer.toolcall_delta(index, piece)
            writer.toolcall_end(index)

    def _pieces(self, text: str) -> list[str]:
        size = max(1, self.chunk_chars)
        return [text[i : i + size] for i in range(0, len(text), size)]

    async def _pace(self, piece: str) -> None:
        # Yield to the loop between pieces so aborts and steering land mid-stream.
        delay = _tokens(piece) / self.tokens_per_second if self.tokens_per_second else 0
        await asyncio.sleep(delay)

    def _estimate_usage(
        self,
        writer: StreamWriter,
        context: Context,
        options: StreamOptions,
        content: Sequence[AssistantContent],
    ) -> None:
        prompt = serialize_context(context)
        prompt_tokens = _tokens(prompt)
        input_tokens, cache_read, cache_write = prompt_tokens, 0, 0
        if options.session_id and options.cache_retention != "none":
            previous = self._prompts.get(options.session_id)
            if previous is None:
                cache_write = prompt_tokens
            else:
                shared = _common_prefix_length(previous, prompt)
                cache_read = _tokens(previous[:shared])
                cache_write = _tokens(prompt[shared:])
                input_tokens = max(0, prompt_tokens - cache_read)
            self._prompts[options.session_id] = prompt
        writer.set_usage(
            input=input_tokens,
            output=_tokens(_assistant_text(content)),
            cache_read=cache_read,
            cache_write=cache_write,
        )


def register_faux_provider(
    *,
    api: str | None = None,
    provider: str = "faux",
    models: Sequence[Model] | None = None,
    chunk_chars: int = 16,
    tokens_per_second: float | None = None,
) -> FauxProvider:
    """Register a scripted API (a fresh api name unless given) and return its handle."""
    serial = next(_ids)
    api_name = api or f"faux-{serial}"
    source_id = f"faux-provider-{serial}"
    if models:
        resolved = [_rebind(m, api_name, provider) for m in models]
    else:
        resolved = [
            Model(
                id="faux-1",
                name="Faux Model",
                api=api_name,
                provider=provider,
                base_url=FAUX_BASE_URL,
                input=["text", "image"],
                cost=ModelCost(),
                context_window=128_000,
                max_tokens=16_384,
            )
        ]
    faux = FauxProvider(
        api=api_name,
        models=resolved,
        source_id=source_id,
        chunk_chars=chunk_chars,
        tokens_per_second=tokens_per_second,
    )
    register_api_provider(
        ApiProvider(api=api_name, stream=faux.stream, stream_simple=faux.stream_simple), source_id
    )
    return faux


def _rebind(model: Model, api: str, provider: str) -> Model:
    clone = Model.from_json(model.to_json())
    clone.api = api
    clone.provider = provider
    if not clone.base_url:
        clone.base_url = FAUX_BASE_URL
    return clone


def _tokens(text: str) -> int:
    return -(-len(text) // 4)


def _common_prefix_length(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def _user_text(content: str | Sequence[TextContent | ImageContent]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b.text if isinstance(b, TextContent) else f"[image:{b.mime_type}:{len(b.data)}]" for b in content
    )


def _assistant_text(content: Sequence[AssistantContent]) -> str:
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent):
            parts.append(block.thinking)
        else:
            parts.append(f"{block.name}:{json.dumps(block.arguments)}")
    return "\n".join(parts)


def _message_text(message: Message) -> str:
    if isinstance(message, UserMessage):
        return _user_text(message.content)
    if isinstance(message, AssistantMessage):
        return _assistant_text(message.content)
    return "\n".join([message.tool_name, _user_text(message.content)])


def serialize_context(context: Context) -> str:
    """The prompt as one string: what usage and cache hits are estimated from."""
    parts: list[str] = []
    if context.system_prompt:
        parts.append(f"system:{context.system_prompt}")
    parts.extend(f"{m.role}:{_message_text(m)}" for m in context.messages)
    if context.tools:
        parts.append("tools:" + json.dumps([t.to_json() for t in context.tools]))
    return "\n\n".join(parts)

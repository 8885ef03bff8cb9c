"""The machinery every provider shares: build the partial message, emit events, end the stream.

A provider writes one coroutine, ``produce(writer)``, that reads its wire protocol and calls the
writer (``text_start``/``text_delta``/…). ``run_stream`` runs it as a task and guarantees the
protocol: one ``start``, blocks closed on success, exactly one terminal event, and every failure
(exception, abort, cancellation, an error stop reason) reported as a value, its text redacted of
every known secret (``tau.ai.redaction``).
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from tau._unicode import join_pairs, join_split_pair
from tau.ai.cost import calculate_cost
from tau.ai.events import (
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
)
from tau.ai.options import StreamOptions
from tau.ai.redaction import redact
from tau.ai.types import (
    AssistantMessage,
    Model,
    ModelCost,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    Usage,
)
from tau.errors import TauError

if TYPE_CHECKING:
    from tau.ai.constrained_sampling import GrammarInput


class ProviderError(TauError):
    """A failure reported by (or while talking to) a provider; becomes the ``errorMessage``."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class StreamWriter:
    """Builds one assistant message and pushes the matching events."""

    def __init__(self, stream: AssistantMessageEventStream, output: AssistantMessage, model: Model) -> None:
        self.stream = stream
        self.output = output
        self.model = model
        # The prices usage is counted at: the model's, or those of the model that answered instead.
        self.pricing = model.cost
        self._started = False
        self._open: set[int] = set()
        # Raw argument text per tool-call block; scratch state lives here, never on the block.
        self._tool_json: dict[int, _ArgumentText] = {}
        # The raw input of each custom (grammar) tool call, which stands for its argument text.
        self._tool_inputs: dict[int, GrammarInput] = {}

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Announce that the server accepted the request (idempotent)."""
        if not self._started:
            self._started = True
            at_start = copy.copy(self.output)
            at_start.content = []
            at_start.usage = copy.deepcopy(self.output.usage)
            self.stream.push(StartEvent(partial=self.output, at_start=at_start))

    # -- text and thinking ---------------------------------------------------------------------

    def text_start(self, text_signature: str | None = None) -> int:
        self.start()
        index = self._append(TextContent(text_signature=text_signature))
        self.stream.push(TextStartEvent(content_index=index, partial=self.output))
        return index

    def text_delta(self, index: int, delta: str) -> None:
        block = self.output.content[index]
        assert isinstance(block, TextContent)
        block.append(delta)
        self.stream.push(TextDeltaEvent(content_index=index, delta=delta, partial=self.output))

    def text_end(self, index: int) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.output.content[index]
        assert isinstance(block, TextContent)
        self.stream.push(TextEndEvent(content_index=index, content=block.text, partial=self.output))

    def thinking_start(self, signature: str | None = None, redacted: bool | None = None) -> int:
        self.start()
        index = self._append(ThinkingContent(thinking_signature=signature, redacted=redacted))
        self.stream.push(ThinkingStartEvent(content_index=index, partial=self.output))
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        block = self.output.content[index]
        assert isinstance(block, ThinkingContent)
        block.append(delta)
        self.stream.push(ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.output))

    def thinking_end(self, index: int) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.output.content[index]
        assert isinstance(block, ThinkingContent)
        self.stream.push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.output))

    # -- tool calls ----------------------------------------------------------------------------

    def toolcall_start(self, call_id: str, name: str, thought_signature: str | None = None) -> int:
        self.start()
        index = self._append(ToolCall(id=call_id, name=name, thought_signature=thought_signature))
        self._tool_json[index] = _ArgumentText()
        self.stream.push(ToolCallStartEvent(content_index=index, partial=self.output))
        return index

    def toolcall_delta(self, index: int, fragment: str) -> None:
        """Append raw argument JSON; ``arguments`` becomes the best-effort parse so far.

        The parse is redone only once the text has grown enough since the last one (see
        :class:`_ArgumentText`), so a long argument costs linear time, not quadratic.
        """
        text = self._tool_json.setdefault(index, _ArgumentText())
        text.append(fragment)
        if text.due():
            block = self.output.content[index]
            assert isinstance(block, ToolCall)
            block.arguments = _parse_streaming_json(text.mark_parsed())
        self.stream.push(ToolCallDeltaEvent(content_index=index, delta=fragment, partial=self.output))

    def toolcall_replace_json(self, index: int, full_json: str) -> None:
        """Replace the accumulated argument text with the server's complete string."""
        text = _ArgumentText()
        text.append(full_json)
        self._tool_json[index] = text

    def toolcall_input(self, index: int, tool_input: GrammarInput, json_delta: str | None) -> None:
        """A custom tool call's input grew: ``json_delta`` is the matching piece of its JSON
        argument text (``GrammarInput.append``); ``arguments`` become ``{property: input}``."""
        self._tool_json.pop(index, None)
        self._tool_inputs[index] = tool_input
        block = self.output.content[index]
        assert isinstance(block, ToolCall)
        if tool_input.arguments_due():
            block.arguments = tool_input.arguments()
        if json_delta:
            self.stream.push(ToolCallDeltaEvent(content_index=index, delta=json_delta, partial=self.output))

    def toolcall_end(self, index: int) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.output.content[index]
        assert isinstance(block, ToolCall)
        tool_input = self._tool_inputs.pop(index, None)
        if tool_input is not None:
            rest = tool_input.close()
            block.arguments = tool_input.arguments()
            if rest:
                self.stream.push(ToolCallDeltaEvent(content_index=index, delta=rest, partial=self.output))
            self.stream.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.output))
            return
        text = self._tool_json.pop(index, None)
        raw = text.mark_parsed() if text is not None else ""
        block.arguments = _parse_streaming_json(raw)
        if not block.arguments and raw.strip():
            block.arguments_error = _not_an_object(raw)
        self.stream.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.output))

    def tool_call(self, index: int) -> ToolCall:
        block = self.output.content[index]
        assert isinstance(block, ToolCall)
        return block

    def end_block(self, index: int) -> None:
        """Close block ``index`` with the end event of its kind."""
        block = self.output.content[index]
        if isinstance(block, TextContent):
            self.text_end(index)
        elif isinstance(block, ThinkingContent):
            self.thinking_end(index)
        else:
            self.toolcall_end(index)

    def discard(self) -> None:
        """Forget what streamed so far (blocks and usage): for an API whose failed reply keeps
        nothing of it, as pi 1.6's pi-messages ends one."""
        self.output.content = []
        self.output.usage = Usage()
        self._open.clear()
        self._tool_json.clear()

    def end_open_blocks(self) -> None:
        for index in sorted(self._open):
            self.end_block(index)

    def _append(self, block: TextContent | ThinkingContent | ToolCall) -> int:
        self.output.content.append(block)
        index = len(self.output.content) - 1
        self._open.add(index)
        return index

    # -- usage ---------------------------------------------------------------------------------

    def set_usage(
        self,
        *,
        input: int | None = None,
        output: int | None = None,
        cache_read: int | None = None,
        cache_write: int | None = None,
        reasoning: int | None = None,
        cache_write_1h: int | None = None,
    ) -> None:
        """Overwrite the counts that are given, then recompute the total and the cost."""
        usage = self.output.usage
        if reasoning is not None:
            usage.reasoning = max(0, reasoning)
        if cache_write_1h is not None:
            usage.cache_write_1h = max(0, cache_write_1h)
        if input is not None:
            usage.input = max(0, input)
        if output is not None:
            usage.output = max(0, output)
        if cache_read is not None:
            usage.cache_read = max(0, cache_read)
        if cache_write is not None:
            usage.cache_write = max(0, cache_write)
        usage.recompute_total()
        calculate_cost(
            self.model if self.pricing is self.model.cost else _priced(self.model, self.pricing), usage
        )

    def finish_blocks_state(self) -> None:
        self._tool_json.clear()
        self._tool_inputs.clear()


# Arguments up to this size are re-parsed on every delta; beyond it, each parse waits until the text
# has doubled, so the parses of an argument of n bytes cost O(n) in all.
EAGER_PARSE_CHARS = 4096


class _ArgumentText:
    """A tool call's streamed argument text, and when its partial parse is worth redoing."""

    __slots__ = ("_length", "_parsed_at", "_pieces")

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._length = 0
        self._parsed_at = 0

    def append(self, fragment: str) -> None:
        fragment = join_pairs(fragment)
        if self._pieces and (joined := join_split_pair(self._pieces[-1], fragment)) is not None:
            # An escaped surrogate pair split across two fragments: the character, as in JavaScript.
            self._pieces[-1], fragment = joined  # the last piece keeps its length
        self._pieces.append(fragment)
        self._length += len(fragment)

    def due(self) -> bool:
        return self._length <= EAGER_PARSE_CHARS or self._length >= 2 * self._parsed_at

    def mark_parsed(self) -> str:
        """The whole text so far (its pieces joined into one), noted as parsed at this length."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        self._parsed_at = self._length
        return self._pieces[0] if self._pieces else ""


StreamProducer = Callable[[StreamWriter], Awaitable[None]]


def new_output(model: Model) -> AssistantMessage:
    """An empty assistant message carrying the model's provenance."""
    return AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id)


def error_stream(model: Model, message: str, *, reason: StopReason = "error") -> AssistantMessageEventStream:
    """A stream that fails at once with ``message`` (used before any request is made)."""
    stream = AssistantMessageEventStream()
    stream.push(error_event(model, message, reason=reason))
    return stream


def error_event(model: Model, message: str, *, reason: StopReason = "error") -> ErrorEvent:
    """The terminal event of a request that failed before it was made."""
    output = new_output(model)
    output.stop_reason = reason
    output.error_message = redact(message)
    output.duration_ms = 0
    return ErrorEvent(reason="aborted" if reason == "aborted" else "error", error=output)


def run_stream(model: Model, options: StreamOptions, produce: StreamProducer) -> AssistantMessageEventStream:
    """Run ``produce`` as a task and turn everything it does into a well-formed event stream.

    Must be called with a running event loop (``stream()`` is called from async code).
    """
    stream = AssistantMessageEventStream()
    output = new_output(model)
    output.stop_reason = "pending"  # until the provider says how the reply ended (as pi 1.6)
    started = time.monotonic()
    writer = StreamWriter(stream, output, model)
    signal = options.signal
    loop = asyncio.get_running_loop()
    abandoned = False

    async def main() -> None:
        try:
            if signal is not None and signal.aborted:
                raise asyncio.CancelledError
            await produce(writer)
            if output.stop_reason == "pending":  # an API that names no reason for a normal end
                output.stop_reason = "stop"
            if output.stop_reason in ("error", "aborted"):
                raise ProviderError(output.error_message or f"Provider stopped with {output.stop_reason}")
            writer.end_open_blocks()
            if output.stop_reason == "stop" and any(isinstance(b, ToolCall) for b in output.content):
                output.stop_reason = "toolUse"
            writer.finish_blocks_state()
            reason = output.stop_reason
            assert reason in ("stop", "length", "toolUse")
            _time(output, started)
            stream.push(DoneEvent(reason=reason, message=output))
        except asyncio.CancelledError:
            _time(output, started)
            _fail(writer, "aborted", "Request was aborted" if not abandoned else "Stream consumer went away")
        except Exception as exc:  # every failure is reported in-band
            aborted = signal is not None and signal.aborted
            _time(output, started)
            _fail(writer, "aborted" if aborted else "error", _describe(exc))

    task = loop.create_task(main())

    def cancel() -> None:
        if not task.done():
            loop.call_soon_threadsafe(task.cancel)

    def abandon() -> None:
        nonlocal abandoned
        abandoned = True
        cancel()

    remove_listener = signal.add_listener(cancel) if signal is not None else None
    stream.set_abandon_handler(abandon)
    if remove_listener is not None:
        task.add_done_callback(lambda _: remove_listener())
    stream.attach_producer(task)
    return stream


def _time(output: AssistantMessage, started: float) -> None:
    """The reply's wall time, from the request to its end, in whole milliseconds (pi 1.6's ``durationMs``)."""
    if output.duration_ms is None:
        output.duration_ms = max(0, round((time.monotonic() - started) * 1000))


def _fail(writer: StreamWriter, reason: StopReason, message: str) -> None:
    output = writer.output
    if reason == "aborted":  # an aborted reply keeps what it has, so its open blocks end as such
        writer.end_open_blocks()
    writer.finish_blocks_state()
    output.stop_reason = reason
    if reason == "aborted":
        output.error_message = redact(output.error_message or message)
    else:
        output.error_message = redact(message)
    writer.stream.push(ErrorEvent(reason="aborted" if reason == "aborted" else "error", error=output))


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if text:
        return text
    return type(exc).__name__


def _not_an_object(text: str) -> str | None:
    """Why complete argument JSON that is not an object cannot be used (``None`` for an object, or
    for text that is no complete JSON value: that is parsed as best it can be)."""
    from tau.ai.partial_json import parse_complete_json

    found, value = parse_complete_json(text)
    if not found or isinstance(value, dict):
        return None
    kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
    return (
        f"the arguments are {kind}, but they must be one JSON object whose keys are the tool's "
        f"parameters\n\nReceived arguments:\n{text}"
    )


def _parse_streaming_json(text: str) -> dict[str, Any]:
    """``tau.ai.partial_json.parse_streaming_json``, imported with the first tool call (a text-only
    run never needs the repair rules)."""
    from tau.ai.partial_json import parse_streaming_json

    return parse_streaming_json(text)


def _priced(model: Model, cost: ModelCost) -> Model:
    return msgspec.structs.replace(model, cost=cost)

"""Streaming events of one model response, and the stream object that carries them.

Every event of a stream refers to the same ``partial`` assistant message, mutated in place; keep a
copy if you need a snapshot. A stream ends with exactly one terminal event (``done`` or ``error``),
and ``await stream.result()`` gives the final message either way: it never raises.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

from msgspec import Struct

from tau.ai.types import AssistantMessage, JsonObject, ToolCall

if TYPE_CHECKING:
    import asyncio

# asyncio is imported where it is first needed: it costs more to import than the rest of tau.ai.


class StartEvent(Struct):
    partial: AssistantMessage
    at_start: AssistantMessage | None = None
    """A copy of the message as it was when this event was pushed (no blocks, usage so far): the
    shared ``partial`` may have run ahead by the time a consumer reads the event."""
    type: ClassVar[Literal["start"]] = "start"


class TextStartEvent(Struct):
    content_index: int
    partial: AssistantMessage
    type: ClassVar[Literal["text_start"]] = "text_start"


class TextDeltaEvent(Struct):
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[Literal["text_delta"]] = "text_delta"


class TextEndEvent(Struct):
    content_index: int
    content: str
    partial: AssistantMessage
    type: ClassVar[Literal["text_end"]] = "text_end"


class ThinkingStartEvent(Struct):
    content_index: int
    partial: AssistantMessage
    type: ClassVar[Literal["thinking_start"]] = "thinking_start"


class ThinkingDeltaEvent(Struct):
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"


class ThinkingEndEvent(Struct):
    content_index: int
    content: str
    partial: AssistantMessage
    type: ClassVar[Literal["thinking_end"]] = "thinking_end"


class ToolCallStartEvent(Struct):
    content_index: int
    partial: AssistantMessage
    type: ClassVar[Literal["toolcall_start"]] = "toolcall_start"


class ToolCallDeltaEvent(Struct):
    content_index: int
    delta: str
    partial: AssistantMessage
    type: ClassVar[Literal["toolcall_delta"]] = "toolcall_delta"


class ToolCallEndEvent(Struct):
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage
    type: ClassVar[Literal["toolcall_end"]] = "toolcall_end"


class DoneEvent(Struct):
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage
    type: ClassVar[Literal["done"]] = "done"


class ErrorEvent(Struct):
    reason: Literal["error", "aborted"]
    error: AssistantMessage
    type: ClassVar[Literal["error"]] = "error"


AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)


def event_to_json(event: AssistantMessageEvent, *, include_partial: bool = True) -> JsonObject:
    """The event in pi's JSON shape (camelCase). ``include_partial=False`` leaves the partial out."""
    out: JsonObject = {"type": event.type}
    if isinstance(event, DoneEvent):
        out["reason"] = event.reason
        out["message"] = event.message.to_json()
        return out
    if isinstance(event, ErrorEvent):
        out["reason"] = event.reason
        out["error"] = event.error.to_json()
        return out
    if not isinstance(event, StartEvent):
        out["contentIndex"] = event.content_index
    if isinstance(event, (TextDeltaEvent, ThinkingDeltaEvent, ToolCallDeltaEvent)):
        out["delta"] = event.delta
    elif isinstance(event, (TextEndEvent, ThinkingEndEvent)):
        out["content"] = event.content
    elif isinstance(event, ToolCallEndEvent):
        out["toolCall"] = event.tool_call.to_json()
    if include_partial:
        out["partial"] = event.partial.to_json()
    return out


class AssistantMessageEventStream:
    """An async-iterable queue of events with a terminal result.

    The producer calls ``push``; ``end`` closes the stream without a terminal event. Pushes after the
    terminal event are ignored. Iteration yields events in push order and stops after the terminal
    event; ``result()`` resolves to the terminal message.
    """

    def __init__(self) -> None:
        self._events: deque[AssistantMessageEvent] = deque()
        self._closed = False
        self._final: AssistantMessage | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._on_abandon: Callable[[], None] | None = None
        self._producer: object | None = None

    # -- producer side -------------------------------------------------------------------------

    def push(self, event: AssistantMessageEvent) -> None:
        if self._closed:
            return
        self._events.append(event)
        if isinstance(event, DoneEvent):
            self._final = event.message
            self._closed = True
        elif isinstance(event, ErrorEvent):
            self._final = event.error
            self._closed = True
        self._wake()

    def end(self, result: AssistantMessage | None = None) -> None:
        """Close the stream; ``result`` becomes the final message if none was pushed."""
        if self._final is None and result is not None:
            self._final = result
        self._closed = True
        self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def set_abandon_handler(self, handler: Callable[[], None]) -> None:
        """Called when a consumer stops early (cancelled or broke out of iteration)."""
        self._on_abandon = handler

    def attach_producer(self, producer: object) -> None:
        """Hold a strong reference to the task that feeds this stream while it runs."""
        self._producer = producer

    def _wake(self) -> None:
        if not self._waiters:
            return
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _wait(self) -> None:
        import asyncio

        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter

    def _abandon(self) -> None:
        if not self._closed and self._on_abandon is not None:
            self._on_abandon()

    # -- consumer side -------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[AssistantMessageEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AssistantMessageEvent]:
        finished = False
        try:
            while True:
                # One shared queue: events are handed out once, so memory stays bounded by what
                # the consumers have not read yet. A consumer that starts late sees what is queued.
                if self._events:
                    event = self._events.popleft()
                    yield event
                    if isinstance(event, (DoneEvent, ErrorEvent)):
                        finished = True
                        return
                    continue
                if self._closed:
                    finished = True
                    return
                await self._wait()
        finally:
            if not finished:
                self._abandon()

    async def result(self) -> AssistantMessage:
        """The terminal message (``done`` or ``error``); never raises for provider failures."""
        import asyncio

        try:
            while not self._closed:
                await self._wait()
        except asyncio.CancelledError:
            self._abandon()
            raise
        if self._final is None:
            raise RuntimeError("stream ended without a result")
        return self._final

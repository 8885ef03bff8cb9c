"""tau's session events (live) and messages (replayed on ``session/load``) as ACP session updates.

Updates go out in order through one ``UpdateSender`` per connection: a listener is synchronous, the
connection is not, so they are queued and written by one task; a prompt answers only once
everything its run produced has been sent (``flush``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeAlias

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ImageContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from tau.agent.events import MessageUpdate, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from tau.agent.tool import AgentToolResult
from tau.ai.events import TextDeltaEvent, ThinkingDeltaEvent
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.modes.acp.tool_calls import kind_of, locations_of, result_content, started_content, title_of

__all__ = ["SessionUpdate", "UpdateSender", "event_updates", "history_updates"]

SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AvailableCommandsUpdate
    | ConfigOptionUpdate
)
Send: TypeAlias = Callable[[str, SessionUpdate], Awaitable[None]]


class UpdateSender:
    """Writes queued ``(session id, update)`` pairs in order; a write that fails (the client is
    gone) drops the rest quietly, the session itself goes on to a clean end."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._queue: asyncio.Queue[tuple[str, SessionUpdate]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._broken = False

    def put(self, session_id: str, update: SessionUpdate) -> None:
        if self._broken:
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._pump())
        self._queue.put_nowait((session_id, update))

    async def flush(self) -> None:
        if self._task is not None:
            await self._queue.join()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _pump(self) -> None:
        while True:
            session_id, update = await self._queue.get()
            try:
                if not self._broken:
                    await self._send(session_id, update)
            except Exception:  # a closed pipe, a connection already shut
                self._broken = True
            finally:
                self._queue.task_done()


def event_updates(event: Any, cwd: str, args_by_call: dict[str, Any]) -> Iterator[SessionUpdate]:
    """The updates one session event makes (most make none). ``args_by_call`` keeps each running
    call's arguments from its start to its end."""
    if isinstance(event, MessageUpdate):
        inner = event.assistant_message_event
        if isinstance(inner, TextDeltaEvent) and inner.delta:
            yield update_agent_message_text(inner.delta)
        elif isinstance(inner, ThinkingDeltaEvent) and inner.delta:
            yield update_agent_thought_text(inner.delta)
    elif isinstance(event, ToolExecutionStart):
        args_by_call[event.tool_call_id] = event.args
        yield start_tool_call(
            event.tool_call_id,
            title_of(event.tool_name, event.args),
            kind=kind_of(event.tool_name),
            status="in_progress",
            content=started_content(event.tool_name, event.args, cwd),
            locations=locations_of(event.tool_name, event.args, cwd),
            raw_input=event.args,
        )
    elif isinstance(event, ToolExecutionUpdate):
        content = result_content(event.tool_name, {}, cwd, event.partial_result, False)
        if content:
            yield update_tool_call(event.tool_call_id, content=content)
    elif isinstance(event, ToolExecutionEnd):
        args = args_by_call.pop(event.tool_call_id, {})
        yield _finished_call(event.tool_call_id, event.tool_name, args, cwd, event.result, event.is_error)


def _finished_call(
    call_id: str, tool_name: str, args: Any, cwd: str, result: AgentToolResult, is_error: bool
) -> ToolCallProgress:
    return update_tool_call(
        call_id,
        status="failed" if is_error else "completed",
        content=result_content(tool_name, args, cwd, result, is_error),
        locations=locations_of(tool_name, args, cwd, result.details),
    )


def history_updates(messages: list[Any], cwd: str) -> Iterator[SessionUpdate]:
    """A stored conversation as the updates a client would have seen live (``session/load``)."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                yield update_user_message_text(message.content)
                continue
            for block in message.content:
                if isinstance(block, TextContent):
                    yield update_user_message_text(block.text)
                elif isinstance(block, ImageContent):
                    yield update_user_message(
                        ImageContentBlock(type="image", data=block.data, mime_type=block.mime_type)
                    )
        elif isinstance(message, AssistantMessage):
            for part in message.content:
                if isinstance(part, TextContent) and part.text:
                    yield update_agent_message_text(part.text)
                elif isinstance(part, ThinkingContent) and part.thinking and not part.redacted:
                    yield update_agent_thought_text(part.thinking)
                elif isinstance(part, ToolCall):
                    calls[part.id] = part
                    yield start_tool_call(
                        part.id,
                        title_of(part.name, part.arguments),
                        kind=kind_of(part.name),
                        status="in_progress",
                        locations=locations_of(part.name, part.arguments, cwd),
                        raw_input=part.arguments,
                    )
        elif isinstance(message, ToolResultMessage):
            call = calls.get(message.tool_call_id)
            args = call.arguments if call is not None else {}
            result = AgentToolResult(
                [block for block in message.content if isinstance(block, TextContent | ImageContent)],
                message.details,
            )
            yield _finished_call(message.tool_call_id, message.tool_name, args, cwd, result, message.is_error)

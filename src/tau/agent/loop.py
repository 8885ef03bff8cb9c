"""The agent loop: call the model, run the tools it asks for, repeat until it stops.

A *turn* is one assistant response plus the execution of its tool calls. After each turn the
steering queue is polled (its messages open the next turn); when the model has nothing left to do,
the follow-up queue is polled. Every step is reported through ``emit``, an awaited sink: the loop
waits for it, so whoever listens sees the state in order.

    new_messages = await run_agent_loop([UserMessage("hi")], context, config, emit)

``agent_loop(...)`` is the same run as an async-iterable stream of events.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Awaitable, Callable

from tau.agent._awaitable import resolve
from tau.agent.config import AgentLoopConfig, PollMessages, StreamFn, TurnSummary
from tau.agent.context import AgentContext
from tau.agent.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    TurnEnd,
    TurnStart,
)
from tau.agent.messages import AgentMessage
from tau.agent.tool_execution import execute_tool_calls, refuse_truncated_tool_calls
from tau.ai.abort import AbortSignal
from tau.ai.events import DoneEvent, ErrorEvent, StartEvent
from tau.ai.stream_writer import error_stream
from tau.ai.streaming import stream_simple
from tau.ai.types import AssistantMessage, Context, ToolResultMessage

Emit = Callable[[AgentEvent], Awaitable[None]]


async def run_agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run from new prompt messages; returns every message the run created."""
    loop_context = AgentContext(context.system_prompt, [*context.messages, *prompts], list(context.tools))
    new_messages: list[AgentMessage] = list(prompts)
    await emit(AgentStart())
    await emit(TurnStart())
    for message in prompts:
        await emit(MessageStart(message))
        await emit(MessageEnd(message))
    await _run_turns(loop_context, new_messages, config, emit, signal, stream_fn or stream_simple)
    return new_messages


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> list[AgentMessage]:
    """Run from the existing context (its last message must not be the assistant's)."""
    check_can_continue(context)
    loop_context = AgentContext(context.system_prompt, list(context.messages), list(context.tools))
    new_messages: list[AgentMessage] = []
    await emit(AgentStart())
    await emit(TurnStart())
    await _run_turns(loop_context, new_messages, config, emit, signal, stream_fn or stream_simple)
    return new_messages


def check_can_continue(context: AgentContext) -> None:
    if not context.messages:
        raise ValueError("Cannot continue: no messages in context")
    if context.messages[-1].role == "assistant":
        raise ValueError("Cannot continue from message role: assistant")


async def _run_turns(
    context: AgentContext,
    new_messages: list[AgentMessage],
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None,
    stream_fn: StreamFn,
) -> None:
    """The main loop. The first turn reuses the ``turn_start`` the entry point emitted."""
    first_turn = True
    pending = await _poll(config.get_steering_messages)
    while True:
        has_more_tool_calls = True
        while has_more_tool_calls or pending:
            if not first_turn:
                if config.prepare_next_turn is not None:
                    replaced = await config.prepare_next_turn(context)
                    if replaced is not None:  # compacted between turns: the run goes on from there
                        context.messages = list(replaced)
                await emit(TurnStart())
                if config.get_tools is not None:
                    context.tools = list(config.get_tools())
            first_turn = False
            for message in pending:
                await emit(MessageStart(message))
                await emit(MessageEnd(message))
                context.messages.append(message)
                new_messages.append(message)
            pending = []
            if config.prompt_ledger is not None:
                for change in await config.prompt_ledger.before_request(context):
                    await emit(MessageStart(change))
                    await emit(MessageEnd(change))
                    context.messages.append(change)
                    new_messages.append(change)

            assistant = await stream_assistant_response(context, config, emit, signal, stream_fn)
            new_messages.append(assistant)
            if assistant.stop_reason in ("error", "aborted"):
                await emit(TurnEnd(assistant, []))
                await emit(AgentEnd(list(new_messages)))
                return

            tool_results: list[ToolResultMessage] = []
            has_more_tool_calls = False
            calls = assistant.tool_calls()
            if calls:
                if assistant.stop_reason == "length":
                    batch = await refuse_truncated_tool_calls(calls, emit)
                else:
                    batch = await execute_tool_calls(context, assistant, calls, config, emit, signal)
                tool_results = batch.messages
                has_more_tool_calls = not batch.terminate
                context.messages.extend(tool_results)
                new_messages.extend(tool_results)
            await emit(TurnEnd(assistant, tool_results))

            if config.should_stop_after_turn is not None:
                summary = TurnSummary(assistant, tool_results, context, new_messages)
                if await resolve(config.should_stop_after_turn(summary)):
                    await emit(AgentEnd(list(new_messages)))
                    return
            pending = await _poll(config.get_steering_messages)

        follow_ups = await _poll(config.get_follow_up_messages)
        if not follow_ups:
            break
        pending = follow_ups
    await emit(AgentEnd(list(new_messages)))


async def _poll(source: PollMessages | None) -> list[AgentMessage]:
    return list(await resolve(source())) if source is not None else []


async def stream_assistant_response(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None,
    stream_fn: StreamFn,
) -> AssistantMessage:
    """One LLM call: build the request from the context, stream the reply into it, return it."""
    request = await _build_request(context, config, signal)
    api_key = await resolve(config.get_api_key(config.model.provider)) if config.get_api_key else None
    base = config.stream_options
    options = copy.copy(base)
    options.signal = signal
    options.api_key = api_key or base.api_key
    options.extra = dict(base.extra)
    model = config.model
    failure: str | None = None
    if config.request_preparer is not None:
        prepared = await config.request_preparer.prepare(model, request, options)
        model, failure = prepared.model, prepared.error
        if prepared.messages is not None:  # compacted for this call: the run goes on from there
            context.messages = list(prepared.messages)
            request = await _build_request(context, config, signal)
    if failure is not None:
        response = error_stream(model, failure)
    else:
        response = await resolve(stream_fn(model, request, options))

    partial: AssistantMessage | None = None
    async for event in response:
        if isinstance(event, StartEvent):
            partial = event.partial
            context.messages.append(partial)
            await emit(MessageStart(event.at_start or _started(partial)))
        elif isinstance(event, (DoneEvent, ErrorEvent)):
            break
        elif partial is not None:
            partial = event.partial
            context.messages[-1] = partial
            await emit(MessageUpdate(_snapshot(partial), event))

    final = await response.result()
    final.thinking_level = options.reasoning or "off"  # the level asked for, whichever stream answered
    give_duplicate_calls_fresh_ids(final)
    if partial is None:
        context.messages.append(final)
        await emit(MessageStart(_snapshot(final)))
    else:
        context.messages[-1] = final
    await emit(MessageEnd(final))
    return final


async def _build_request(
    context: AgentContext, config: AgentLoopConfig, signal: AbortSignal | None
) -> Context:
    """The request for the context's conversation, prompt and tools."""
    messages = context.messages
    if config.transform_context is not None:
        messages = await resolve(config.transform_context(messages, signal))
    llm_messages = await resolve(config.convert_to_llm(messages))
    request = Context(
        messages=llm_messages,
        system_prompt=context.system_prompt,
        tools=[tool.to_tool() for tool in context.tools],
    )
    if config.prompt_ledger is not None:
        request = config.prompt_ledger.project(messages, request)
    return request


def give_duplicate_calls_fresh_ids(message: AssistantMessage) -> None:
    """Rename a tool call whose id an earlier call of the same reply already has.

    Every call must get its own result, and providers reject a request whose tool-call ids repeat;
    so a repeated id becomes ``<id>_2``, ``<id>_3``… before the message is recorded.
    """
    taken: set[str] = set()
    for call in message.tool_calls():
        if call.id in taken:
            base = call.id or "call"
            number = 2
            while f"{base}_{number}" in taken:
                number += 1
            call.id = f"{base}_{number}"
        taken.add(call.id)


def _started(message: AssistantMessage) -> AssistantMessage:
    """The reply as it was at its ``start`` event, for a stream that did not record it: no blocks yet.
    A provider can run ahead of this loop (a whole response read in one go), so by now the shared
    partial may hold later blocks, and a listener seeding from ``message_start`` would see them twice."""
    snapshot = copy.copy(message)
    snapshot.content = []
    snapshot.usage = copy.deepcopy(message.usage)
    snapshot.stop_reason = "pending"
    return snapshot


def _snapshot(message: AssistantMessage) -> AssistantMessage:
    """A copy whose block list will not grow under the listener (blocks themselves are shared).
    Made for every streamed delta: ``__copy__`` itself, without ``copy.copy``'s dispatch."""
    snapshot = message.__copy__()
    snapshot.content = list(message.content)
    return snapshot


# -- the stream form -------------------------------------------------------------------------------


class AgentEventStream:
    """A run in progress, observed as events: ``async for event in stream`` then
    ``await stream.result()`` for the new messages. The run does not wait for the reader."""

    def __init__(self, run: Callable[[Emit], Awaitable[list[AgentMessage]]]) -> None:
        self._events: asyncio.Queue[AgentEvent | None] = asyncio.Queue()

        async def emit(event: AgentEvent) -> None:
            self._events.put_nowait(event)

        async def main() -> list[AgentMessage]:
            try:
                return await run(emit)
            finally:
                self._events.put_nowait(None)

        self._task = asyncio.get_running_loop().create_task(main())

    def __aiter__(self) -> AsyncIterator[AgentEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[AgentEvent]:
        while (event := await self._events.get()) is not None:
            yield event
        await self._task  # re-raise what ended the run, if anything

    async def result(self) -> list[AgentMessage]:
        """The messages the run created; raises what the loop raised."""
        return await self._task


def agent_loop(
    prompts: list[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start ``run_agent_loop`` and return its events as a stream. Call from async code."""
    return AgentEventStream(lambda emit: run_agent_loop(prompts, context, config, emit, signal, stream_fn))


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
    stream_fn: StreamFn | None = None,
) -> AgentEventStream:
    """Start ``run_agent_loop_continue``; raises at once if the context cannot be continued."""
    check_can_continue(context)
    return AgentEventStream(lambda emit: run_agent_loop_continue(context, config, emit, signal, stream_fn))

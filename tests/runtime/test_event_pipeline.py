"""The session's event pipeline: who is handed a streamed delta (``message_update``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.agent.events import MessageEnd, MessageStart, MessageUpdate
from tau.ai.events import TextDeltaEvent
from tau.ai.types import AssistantMessage, TextContent
from tau.runtime.event_pipeline import DisplayQueues, EventPipeline
from tau.session import SessionManager


def _reply() -> AssistantMessage:
    return AssistantMessage([TextContent("hi")], api="a", provider="p", model="m")


def _events() -> list[Any]:
    reply = _reply()
    delta = TextDeltaEvent(content_index=0, delta="hi", partial=reply)
    return [MessageStart(reply), MessageUpdate(reply, delta), MessageUpdate(reply, delta), MessageEnd(reply)]


async def _run(pipeline: EventPipeline) -> None:
    for event in _events():
        pipeline.enqueue(event)
    await pipeline.drain()
    pipeline.raise_errors()


def _pipeline() -> EventPipeline:
    return EventPipeline(SessionManager.in_memory("/p"), DisplayQueues())


async def test_a_listener_that_takes_no_updates_sees_every_other_event_and_a_plain_one_sees_all() -> None:
    pipeline = _pipeline()
    plain: list[str] = []
    no_updates: list[str] = []
    pipeline.subscribe(lambda event: plain.append(event.type))
    pipeline.subscribe(lambda event: no_updates.append(event.type), updates=False)
    await _run(pipeline)
    assert plain == ["message_start", "message_update", "message_update", "message_end"]
    assert no_updates == ["message_start", "message_end"]


@pytest.mark.parametrize("extensions_loaded", [False, True])
async def test_the_extension_step_is_handed_updates_only_while_extensions_can_see_them(
    extensions_loaded: bool,
) -> None:
    pipeline = _pipeline()
    stepped: list[str] = []
    pipeline.extension_step = lambda event: stepped.append(event.type)  # type: ignore[func-returns-value]
    pipeline.extensions_see_updates = lambda: extensions_loaded
    pipeline.subscribe(lambda event: None, updates=False)
    await _run(pipeline)
    updates = ["message_update"] * 2 if extensions_loaded else []
    assert stepped == ["message_start", *updates, "message_end"]


async def _catching_up_behind_a_held_event(
    pipeline: EventPipeline,
) -> tuple[list[str], asyncio.Event, asyncio.Future[None]]:
    """A listener holds ``message_start`` until the gate opens; meanwhile a caller waits to catch up
    with it (its callback notes ``answer``). Returns what the listener saw, the gate, the caller."""
    seen: list[str] = []
    gate = asyncio.Event()

    async def listener(event: Any) -> None:
        seen.append(event.type)
        if event.type == "message_start":
            await gate.wait()

    pipeline.subscribe(listener)
    pipeline.enqueue(_events()[0])
    await asyncio.sleep(0)  # the listener holds the first event
    waiting = asyncio.ensure_future(pipeline.catch_up(lambda: seen.append("answer")))
    await asyncio.sleep(0)  # the caller waits for the first event only
    return seen, gate, waiting


async def test_what_runs_once_caught_up_comes_before_any_event_queued_while_waiting() -> None:
    pipeline = _pipeline()
    seen, gate, waiting = await _catching_up_behind_a_held_event(pipeline)
    for event in _events()[1:]:
        pipeline.enqueue(event)
    gate.set()
    await waiting
    await pipeline.drain()
    assert seen == ["message_start", "answer", "message_update", "message_update", "message_end"]


async def test_a_caller_cancelled_while_catching_up_does_not_run_its_callback() -> None:
    pipeline = _pipeline()
    seen, gate, waiting = await _catching_up_behind_a_held_event(pipeline)
    waiting.cancel()
    gate.set()
    await pipeline.drain()
    assert seen == ["message_start"]

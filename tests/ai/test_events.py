"""The event stream object (spec 10 §9, tests 5-9)."""

from __future__ import annotations

import asyncio

from tau.ai import AssistantMessage, DoneEvent, ErrorEvent, StartEvent, TextDeltaEvent, event_to_json
from tau.ai.events import AssistantMessageEventStream


def _message(stop: str = "stop") -> AssistantMessage:
    return AssistantMessage(content=[], api="a", provider="p", model="m", stop_reason=stop)  # type: ignore[arg-type]


async def test_events_iterate_in_push_order_and_result_is_the_done_message() -> None:
    stream = AssistantMessageEventStream()
    message = _message()
    stream.push(StartEvent(message))
    stream.push(TextDeltaEvent(0, "a", message))
    stream.push(DoneEvent("stop", message))
    assert [e.type for e in [e async for e in stream]] == ["start", "text_delta", "done"]
    assert await stream.result() is message


async def test_result_is_the_error_message_and_iteration_stops_there() -> None:
    stream = AssistantMessageEventStream()
    failed = _message("error")
    stream.push(ErrorEvent("error", failed))
    stream.push(TextDeltaEvent(0, "late", failed))
    assert [e.type async for e in stream] == ["error"]
    assert await stream.result() is failed


async def test_a_late_consumer_still_sees_queued_events() -> None:
    stream = AssistantMessageEventStream()
    message = _message()
    stream.push(StartEvent(message))
    stream.push(DoneEvent("stop", message))
    stream.push(StartEvent(message))  # after the terminal event: ignored
    await asyncio.sleep(0)
    assert [e.type async for e in stream] == ["start", "done"]


async def test_end_without_a_terminal_event_releases_waiting_consumers() -> None:
    stream = AssistantMessageEventStream()

    async def consume() -> list[str]:
        return [e.type async for e in stream]

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    stream.end(_message())
    assert await asyncio.wait_for(task, 2) == []
    assert (await stream.result()).stop_reason == "stop"


async def test_a_consumer_waiting_before_pushes_receives_them() -> None:
    stream = AssistantMessageEventStream()
    message = _message()

    async def consume() -> list[str]:
        return [e.type async for e in stream]

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.01)
    stream.push(StartEvent(message))
    stream.push(DoneEvent("stop", message))
    assert await asyncio.wait_for(task, 2) == ["start", "done"]


def test_event_json_uses_pi_names_and_can_leave_out_the_partial() -> None:
    message = _message()
    assert event_to_json(TextDeltaEvent(2, "hi", message), include_partial=False) == {
        "type": "text_delta",
        "contentIndex": 2,
        "delta": "hi",
    }
    done = event_to_json(DoneEvent("stop", message))
    assert done["reason"] == "stop" and done["message"]["role"] == "assistant"

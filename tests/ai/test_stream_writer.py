"""The shared stream machinery: protocol invariants, errors and aborts as values."""

from __future__ import annotations

import asyncio
import json
import time

from tau.ai import AbortSignal, DoneEvent, ErrorEvent, Model, StreamOptions
from tau.ai.stream_writer import ProviderError, StreamWriter, run_stream

MODEL = Model(id="m", api="test-api", provider="test", base_url="http://127.0.0.1:9")


async def _collect(stream):  # type: ignore[no-untyped-def]
    return [event async for event in stream]


async def test_a_successful_stream_emits_start_blocks_and_done_in_order() -> None:
    async def produce(w: StreamWriter) -> None:
        i = w.text_start()
        w.text_delta(i, "hel")
        w.text_delta(i, "lo")
        w.text_end(i)
        w.set_usage(input=3, output=2)

    stream = run_stream(MODEL, StreamOptions(), produce)
    events = await _collect(stream)
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_delta", "text_end", "done"]
    message = await stream.result()
    assert message.text() == "hello"
    assert message.usage.total_tokens == 5
    assert all(getattr(e, "partial", message) is message for e in events[:-1])


async def test_open_blocks_are_closed_before_done() -> None:
    async def produce(w: StreamWriter) -> None:
        i = w.toolcall_start("c1", "read")
        w.toolcall_delta(i, '{"path": "a.')
        w.toolcall_delta(i, 'py"}')

    events = await _collect(run_stream(MODEL, StreamOptions(), produce))
    assert [e.type for e in events][-2:] == ["toolcall_end", "done"]
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.reason == "toolUse"
    assert done.message.tool_calls()[0].arguments == {"path": "a.py"}


async def test_an_exception_in_the_producer_becomes_an_error_event() -> None:
    async def produce(w: StreamWriter) -> None:
        i = w.text_start()
        w.text_delta(i, "partial")
        raise ProviderError("500 upstream exploded")

    stream = run_stream(MODEL, StreamOptions(), produce)
    events = await _collect(stream)
    assert isinstance(events[-1], ErrorEvent)
    message = await stream.result()
    assert message.stop_reason == "error"
    assert message.error_message == "500 upstream exploded"
    assert message.text() == "partial"


async def test_abort_mid_stream_keeps_the_partial_text() -> None:
    signal = AbortSignal()
    gate = asyncio.Event()

    async def produce(w: StreamWriter) -> None:
        i = w.text_start()
        w.text_delta(i, "so far")
        gate.set()
        await asyncio.sleep(30)

    stream = run_stream(MODEL, StreamOptions(signal=signal), produce)
    await gate.wait()
    signal.abort()
    message = await asyncio.wait_for(stream.result(), 5)
    assert message.stop_reason == "aborted"
    assert message.text() == "so far"


async def test_abort_before_the_request_yields_only_an_error_event() -> None:
    signal = AbortSignal()
    signal.abort()
    called = False

    async def produce(w: StreamWriter) -> None:
        nonlocal called
        called = True

    stream = run_stream(MODEL, StreamOptions(signal=signal), produce)
    events = await _collect(stream)
    assert [e.type for e in events] == ["error"]
    assert not called
    assert (await stream.result()).content == []


async def test_cancelling_the_consumer_task_stops_the_producer() -> None:
    stopped = asyncio.Event()

    async def produce(w: StreamWriter) -> None:
        w.start()
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()

    stream = run_stream(MODEL, StreamOptions(), produce)

    async def consume() -> None:
        async for _ in stream:
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.wait_for(stopped.wait(), 5)
    assert (await stream.result()).stop_reason == "aborted"


async def test_pushes_after_the_terminal_event_are_ignored() -> None:
    async def produce(w: StreamWriter) -> None:
        w.start()

    stream = run_stream(MODEL, StreamOptions(), produce)
    message = await stream.result()
    stream.push(DoneEvent(reason="stop", message=message))
    events = await _collect(stream)
    assert [e.type for e in events] == ["start", "done"]


async def test_a_megabyte_of_tool_arguments_in_tiny_deltas_streams_in_linear_time() -> None:
    content = "line of file content\n" * 50_000  # about 1 MB
    raw = json.dumps({"path": "big.txt", "content": content})
    seen_path_early: list[bool] = []

    async def produce(w: StreamWriter) -> None:
        i = w.toolcall_start("c1", "write")
        for start in range(0, len(raw), 16):
            w.toolcall_delta(i, raw[start : start + 16])
            if start == 48:
                seen_path_early.append(w.tool_call(i).arguments.get("path") == "big.txt")
        w.toolcall_end(i)

    started = time.process_time()
    message = await run_stream(MODEL, StreamOptions(), produce).result()
    # Re-parsing the whole text on every delta takes minutes here; linear work takes well under a second.
    assert time.process_time() - started < 10
    assert seen_path_early == [True]
    assert message.tool_calls()[0].arguments == {"path": "big.txt", "content": content}

"""JSON lines for session events, with bursts of deltas merged."""

from __future__ import annotations

import asyncio
import json

from tau.agent.events import MessageEnd, MessageUpdate, TurnStart
from tau.ai import AssistantMessage, TextContent, TextDeltaEvent, ThinkingDeltaEvent
from tau.modes.event_lines import EventLineWriter

MESSAGE = AssistantMessage(content=[TextContent("abc")], api="a", provider="p", model="m")


def _update(delta: str, index: int = 0, thinking: bool = False) -> MessageUpdate:
    kind = ThinkingDeltaEvent if thinking else TextDeltaEvent
    return MessageUpdate(message=MESSAGE, assistant_message_event=kind(index, delta, MESSAGE))


def _writer() -> tuple[EventLineWriter, list[dict]]:  # type: ignore[type-arg]
    lines: list[dict] = []  # type: ignore[type-arg]
    return EventLineWriter(lambda line: lines.append(json.loads(line))), lines


async def test_a_burst_of_deltas_becomes_one_line_with_their_text() -> None:
    writer, lines = _writer()
    for piece in ("a", "b", "c"):
        writer(_update(piece))
    writer(MessageEnd(message=MESSAGE))
    assert lines[0] == {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "abc"}}
    assert lines[1]["type"] == "message_end"


async def test_deltas_of_another_block_or_kind_are_not_merged() -> None:
    writer, lines = _writer()
    writer(_update("x", index=0, thinking=True))
    writer(_update("y", index=1))
    writer(_update("z", index=2))
    writer.flush()
    assert [(line["assistantMessageEvent"]["type"], line["assistantMessageEvent"]["delta"]) for line in lines] == [
        ("thinking_delta", "x"),
        ("text_delta", "y"),
        ("text_delta", "z"),
    ]


async def test_a_waiting_delta_is_written_after_the_window_without_another_event() -> None:
    lines: list[str] = []
    writer = EventLineWriter(lines.append, window_s=0.01)
    writer(_update("late"))
    assert lines == []
    await asyncio.sleep(0.05)
    assert json.loads(lines[0])["assistantMessageEvent"]["delta"] == "late"


async def test_other_events_keep_their_order_after_pending_deltas() -> None:
    writer, lines = _writer()
    writer(_update("a"))
    writer(TurnStart())
    assert [line["type"] for line in lines] == ["message_update", "turn_start"]

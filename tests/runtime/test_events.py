"""session_event_to_json: pi's shapes, and tau's delta-only message_update by default."""

from __future__ import annotations

import json

from tau.agent.events import MessageEnd, MessageUpdate, TurnStart
from tau.ai.events import TextDeltaEvent
from tau.ai.types import AssistantMessage, TextContent
from tau.runtime.events import (
    QueueUpdate,
    SessionInfoChanged,
    ThinkingLevelChanged,
    session_event_to_json,
)
from tau.testing.faux import FauxProvider, faux_message

from .conftest import SessionFactory


def _reply(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text)], api="faux", provider="faux", model="faux-1")


def test_session_events_have_pis_shapes() -> None:
    assert session_event_to_json(QueueUpdate(["s"], ["f"])) == {
        "type": "queue_update",
        "steering": ["s"],
        "followUp": ["f"],
    }
    assert session_event_to_json(ThinkingLevelChanged("high")) == {
        "type": "thinking_level_changed",
        "level": "high",
    }
    assert session_event_to_json(SessionInfoChanged("work")) == {
        "type": "session_info_changed",
        "name": "work",
    }
    assert session_event_to_json(SessionInfoChanged(None)) == {"type": "session_info_changed"}


def test_message_update_without_partials_is_only_the_delta() -> None:
    partial = _reply("Hello")
    event = MessageUpdate(partial, TextDeltaEvent(content_index=0, delta="lo", partial=partial))
    assert session_event_to_json(event, include_partials=False) == {
        "type": "message_update",
        "usage": partial.usage.to_json(),  # pi 1.x: the reply's usage so far
        "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "lo"},
    }


def test_message_update_with_partials_is_exactly_pis_shape() -> None:
    partial = _reply("Hello")
    event = MessageUpdate(partial, TextDeltaEvent(content_index=0, delta="lo", partial=partial))
    assert session_event_to_json(event, include_partials=True) == {
        "type": "message_update",
        "message": partial.to_json(),
        "assistantMessageEvent": {
            "type": "text_delta",
            "contentIndex": 0,
            "delta": "lo",
            "partial": partial.to_json(),
        },
    }


def test_other_agent_events_keep_their_full_shape_in_both_modes() -> None:
    message = _reply("done")
    for include in (False, True):
        assert session_event_to_json(MessageEnd(message), include_partials=include) == {
            "type": "message_end",
            "message": message.to_json(),
        }
        assert session_event_to_json(TurnStart(), include_partials=include) == {"type": "turn_start"}


async def test_a_long_reply_streams_in_output_linear_in_its_length(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    reply = "word " * 4000  # 20 KB, streamed in 64-character pieces
    faux.chunk_chars = 64
    faux.set_responses([faux_message(reply)])
    session = make_session()
    lines: dict[bool, list[str]] = {False: [], True: []}

    def record(event: object) -> None:
        for include in (False, True):
            lines[include].append(json.dumps(session_event_to_json(event, include_partials=include)))  # type: ignore[arg-type]

    session.subscribe(record)
    await session.prompt("talk")
    compact = sum(len(line) for line in lines[False])
    # ~300 small deltas (each with pi 1.6's usage, ~270 bytes) plus the final message a few times
    assert compact < 12 * len(reply)
    assert sum(len(line) for line in lines[True]) > 20 * compact
    ends = [json.loads(line) for line in lines[False] if '"message_end"' in line[:30]]
    assert ends[-1]["message"]["content"] == [{"type": "text", "text": reply}]

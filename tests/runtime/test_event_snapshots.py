"""Events carry a message as it was when the event happened, never a later state of it."""

from __future__ import annotations

from typing import Any

from tau.agent.events import MessageStart
from tau.ai.events import (
    AssistantMessageEventStream,
    DoneEvent,
    StartEvent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
)
from tau.ai.types import AssistantMessage, Context, Model, TextContent
from tau.runtime.events import session_event_to_json

from .conftest import SessionFactory


def run_ahead_stream(model: Model, context: Context, options: Any) -> AssistantMessageEventStream:
    """A provider that has read the whole response before the agent looks at its first event."""
    stream = AssistantMessageEventStream()
    reply = AssistantMessage(content=[], api=model.api, provider=model.provider, model=model.id)
    stream.push(StartEvent(partial=reply))
    block = TextContent()
    reply.content.append(block)
    stream.push(TextStartEvent(content_index=0, partial=reply))
    block.append("whole reply")
    stream.push(TextDeltaEvent(content_index=0, delta="whole reply", partial=reply))
    stream.push(TextEndEvent(content_index=0, content="whole reply", partial=reply))
    stream.push(DoneEvent(reason="stop", message=reply))
    return stream


async def test_message_start_carries_the_reply_as_it_started_when_the_provider_ran_ahead(
    make_session: SessionFactory,
) -> None:
    session = make_session()
    session.agent.stream_fn = run_ahead_stream
    starts: list[dict[str, Any]] = []
    session.subscribe(
        lambda event: starts.append(session_event_to_json(event)) if isinstance(event, MessageStart) else None
    )
    await session.prompt("hi")
    assistant_start = next(s["message"] for s in starts if s["message"]["role"] == "assistant")
    assert assistant_start["content"] == []
    assert session.get_last_assistant_text() == "whole reply"

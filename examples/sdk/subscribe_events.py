"""Watching a session: ``session.subscribe`` receives every agent and session event, in order.

The listener prints each event's type, except the streaming ``message_update`` events, whose text
deltas are printed as they come (``assistant_message_event`` is the provider event behind the
update). ``subscribe`` returns a function that unsubscribes the listener.

    python examples/sdk/subscribe_events.py "Write a haiku about tests."
"""

from __future__ import annotations

import asyncio
import sys

from tau import create_agent_session
from tau.runtime.events import AgentSessionEvent


def on_event(event: AgentSessionEvent) -> None:
    """Print text deltas inline and every other event's type on its own line."""
    if event.type == "message_update":
        update = event.assistant_message_event
        if update.type == "text_delta":
            print(update.delta, end="", flush=True)
        return
    print(f"\n[{event.type}]" if event.type == "message_end" else f"[{event.type}]")


async def main(prompt: str = "Write a haiku about tests.", *, cwd: str | None = None) -> None:
    """Run ``prompt`` and print the event stream."""
    session = create_agent_session(cwd=cwd).session
    unsubscribe = session.subscribe(on_event)
    try:
        await session.prompt(prompt)
    finally:
        unsubscribe()
        await session.dispose()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:2]))

"""An in-memory session: nothing is written to disk (what ``--no-session`` does).

``SessionManager.in_memory(cwd)`` keeps the conversation tree in memory only, so the session has no
file; it still remembers earlier turns, as the second prompt here shows.

    python examples/sdk/in_memory_session.py
"""

from __future__ import annotations

import asyncio
import os

from tau import create_agent_session
from tau.session.manager import SessionManager


async def main(
    prompts: tuple[str, ...] = ("My favourite colour is teal. Just say OK.", "What is my favourite colour?"),
    *,
    cwd: str | None = None,
) -> list[str]:
    """Send ``prompts`` in turn to one session that never touches the disk; return the answers."""
    manager = SessionManager.in_memory(cwd or os.getcwd())
    session = create_agent_session(session_manager=manager).session
    answers: list[str] = []
    try:
        for prompt in prompts:
            await session.prompt(prompt)
            answers.append(session.get_last_assistant_text() or "")
            print(f"> {prompt}\n{answers[-1]}")
        print(f"session file: {session.session_file}; messages: {len(session.messages)}")
    finally:
        await session.dispose()
    return answers


if __name__ == "__main__":
    asyncio.run(main())

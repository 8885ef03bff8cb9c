"""Leaving a failed attempt out of the conversation for good, as pi 1.6 does.

A reply that failed (an error auto-retry sends again, an overflow, a reply cut off) stays in the
session file but leaves what the model is sent: a ``context_edit`` entry with replacement ``null``
targets it, and one targets each result of a tool call it made (a result without its call would
make every later request fail). Each entry is announced with ``entry_appended``; the agent's
messages are then rebuilt from the session, so a resumed session (tau's or pi's) sends the same.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tau.agent.agent import Agent
from tau.ai.types import AssistantMessage, ToolCall, ToolResultMessage
from tau.runtime.event_pipeline import EventPipeline
from tau.runtime.events import AgentSessionEvent, EntryAppended
from tau.session.entries import MessageEntry
from tau.session.manager import SessionManager

__all__ = ["omit_failed_attempt"]


async def omit_failed_attempt(
    message: AssistantMessage,
    *,
    agent: Agent,
    session: SessionManager,
    pipeline: EventPipeline,
    emit: Callable[[AgentSessionEvent], Awaitable[None]],
) -> bool:
    """Write the ``context_edit`` entries that take ``message`` (and its tool results) out of the
    context, ``emit`` an ``entry_appended`` for each, and rebuild ``agent``'s messages.

    ``False`` when the reply is not on the session's branch (nothing is written)."""
    await pipeline.catch_up()  # the reply is persisted first
    branch = session.get_branch()
    index = next(
        (
            i
            for i in range(len(branch) - 1, -1, -1)
            if isinstance(e := branch[i], MessageEntry) and e.message is message
        ),
        None,
    )
    if index is None:
        return False
    call_ids = {block.id for block in message.content if isinstance(block, ToolCall)}
    targets = [branch[index].id]
    for entry in branch[index + 1 :]:
        if not isinstance(entry, MessageEntry):
            continue
        if isinstance(entry.message, AssistantMessage):
            break
        if isinstance(entry.message, ToolResultMessage) and entry.message.tool_call_id in call_ids:
            targets.append(entry.id)
    for target in targets:
        edit = session.get_entry(session.append_context_edit(target, None))
        if edit is not None:
            await emit(EntryAppended(edit))
    agent.state.messages = session.build_session_context(system_messages=True).messages
    return True

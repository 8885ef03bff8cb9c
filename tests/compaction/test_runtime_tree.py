"""Moving in the session tree with ``AgentSession.navigate_tree`` (spec 40 §10.1, spec 50 §9;
test case 46 at the session level)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, Context, Model
from tau.compaction.prompts import BRANCH_SUMMARY_PREAMBLE
from tau.runtime.agent_session import AgentSession
from tau.runtime.events import session_event_to_json
from tau.session.entries import BranchSummaryEntry, LabelEntry, MessageEntry
from tau.session.errors import EntryNotFoundError
from tau.testing.faux import FauxProvider, faux_message

from .conftest import SessionFactory


async def two_exchanges(session: AgentSession, faux: FauxProvider) -> list[str]:
    """Ids of: first user message, its reply, second user message, its reply."""
    faux.append_responses([faux_message("first answer"), faux_message("second answer")])
    await session.prompt("first question")
    await session.prompt("read the config")
    entries = session.session_manager.get_entries()
    return [e.id for e in entries if isinstance(e, MessageEntry) and e.message.role != "system"]


async def test_navigating_to_a_user_message_moves_to_its_parent_and_returns_its_text(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    first_user, first_reply, second_user, second_reply = await two_exchanges(session, faux)
    result = await session.navigate_tree(second_user)
    assert not result.cancelled and result.editor_text == "read the config"
    assert session.session_manager.get_leaf_id() == first_reply
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert faux.pending == 0

    assert (await session.navigate_tree(first_reply)).editor_text is None  # already there: no-op
    with pytest.raises(EntryNotFoundError):
        await session.navigate_tree("nope")

    await session.navigate_tree(second_reply, label="checkpoint")  # back down, labelling the target
    leaf = session.session_manager.get_leaf_entry()
    assert isinstance(leaf, LabelEntry) and leaf.target_id == second_reply and leaf.parent_id == second_reply
    assert session.session_manager.get_label(second_reply) == "checkpoint"
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert first_user


async def test_a_branch_summary_is_hung_under_the_new_position(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    _, first_reply, second_user, _ = await two_exchanges(session, faux)
    seen: list[Context] = []

    def summarise(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("## Goal\nread the config")

    faux.append_responses([summarise])
    left = session.session_manager.get_leaf_id()
    result = await session.navigate_tree(
        second_user, summarize=True, custom_instructions="config", label="tried"
    )
    entry = result.summary_entry
    assert isinstance(entry, BranchSummaryEntry)
    # fromId names the leaf left behind, as pi 1.6 writes it; fromHook says no extension wrote it.
    assert entry.parent_id == first_reply and entry.from_id == left and left != first_reply
    assert entry.from_hook is False
    assert entry.summary.startswith(BRANCH_SUMMARY_PREAMBLE + "\n\n## Goal\nread the config")
    assert entry.details == {"readFiles": [], "modifiedFiles": []}
    assert session.session_manager.get_label(entry.id) == "tried"
    assert [m.role for m in session.messages] == ["user", "assistant", "branchSummary"]
    [request] = seen
    assert not request.tools


async def test_46_an_aborted_branch_summary_cancels_the_move(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    _, _, second_user, second_reply = await two_exchanges(session, faux)
    entered = asyncio.Event()

    async def hang(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        entered.set()
        await asyncio.sleep(10)
        return faux_message("never")

    faux.append_responses([hang])
    moving = asyncio.ensure_future(session.navigate_tree(second_user, summarize=True))
    await asyncio.wait_for(entered.wait(), 5)
    session.abort_compaction()
    result = await asyncio.wait_for(moving, 5)
    assert result.cancelled and result.aborted
    assert session.session_manager.get_leaf_id() == second_reply
    assert not any(isinstance(e, BranchSummaryEntry) for e in session.session_manager.get_entries())


def overloaded() -> AssistantMessage:
    return faux_message("", stop_reason="error", error_message="529 Overloaded")


async def test_a_passing_branch_summary_failure_is_retried_with_events_without_a_reason(
    make_session: SessionFactory, faux: FauxProvider, services: Any
) -> None:
    services.settings_manager.apply_overrides({"retry": {"baseDelayMs": 5}})
    session = make_session()
    _, _, second_user, _ = await two_exchanges(session, faux)
    events: list[dict[str, Any]] = []
    session.subscribe(lambda event: events.append(session_event_to_json(event)))
    faux.append_responses([overloaded(), faux_message("## Goal\nsummary after a retry")])
    result = await session.navigate_tree(second_user, summarize=True)
    assert result.summary_entry is not None and "summary after a retry" in result.summary_entry.summary
    assert result.summary_entry.usage is not None and result.summary_entry.usage.output > 0  # what it cost
    assert [e for e in events if e["type"].startswith("summarization_retry_")] == [
        {
            "type": "summarization_retry_scheduled",
            "attempt": 1,
            "maxAttempts": 3,
            "delayMs": 5,
            "errorMessage": "529 Overloaded",
        },
        {"type": "summarization_retry_attempt_start", "source": "branchSummary"},
        {"type": "summarization_retry_finished"},
    ]


async def test_an_abort_during_the_retry_wait_cancels_the_move_at_once(
    make_session: SessionFactory, faux: FauxProvider, services: Any
) -> None:
    services.settings_manager.apply_overrides({"retry": {"baseDelayMs": 30_000}})
    session = make_session()
    _, _, second_user, second_reply = await two_exchanges(session, faux)
    events: list[str] = []
    session.subscribe(lambda event: events.append(event.type))
    faux.append_responses([overloaded()])
    moving = asyncio.ensure_future(session.navigate_tree(second_user, summarize=True))
    while "summarization_retry_scheduled" not in events:
        await asyncio.sleep(0.01)
    session.abort_compaction()
    result = await asyncio.wait_for(moving, 2)  # not the 30 s wait
    assert result.cancelled and result.aborted
    assert events[-1] == "summarization_retry_finished"
    assert session.session_manager.get_leaf_id() == second_reply

"""AgentSession compaction on the faux provider (spec 30 §1.5, spec 50 §3; test cases 27–39, 41,
42, 53, 54): automatic compaction at the threshold and on overflow, manual compaction, refusals,
failures, aborts and the extension hook points.

The faux model has an 8000-token window; reserve 2000 (threshold 6000), keep 300. The faux
provider reports about 2100 tokens for an empty conversation (system prompt and tools).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from event_log import EventLog
from msgspec.structs import replace

from tau.ai.types import AssistantMessage, Context, Model
from tau.compaction import (
    CompactionAbortedError,
    CompactionCancelledError,
    CompactionResult,
    FileDetails,
    NothingToCompactError,
    SummarizationError,
)
from tau.runtime.agent_session import AgentSession
from tau.runtime.compaction_control import OVERFLOW_RECOVERY_FAILED
from tau.runtime.compaction_hooks import BeforeCompactEvent, BeforeCompactResult, CompactionHooks
from tau.runtime.events import CompactionEnd, CompactionStart, session_event_to_json
from tau.session.entries import CompactionEntry, MessageEntry
from tau.testing.faux import FauxProvider, faux_message

from .conftest import SessionFactory, Summarizer, reply_or_summarize, request_text

OVERFLOW = "prompt is too long: 213462 tokens > 200000 maximum"


def compactions(session: AgentSession) -> list[CompactionEntry]:
    return [e for e in session.session_manager.get_entries() if isinstance(e, CompactionEntry)]


def file_roles(session: AgentSession) -> list[str]:
    entries = session.session_manager.get_entries()
    return [e.message.role for e in entries if isinstance(e, MessageEntry) and e.message.role != "system"]


async def prime(session: AgentSession, faux: FauxProvider) -> None:
    """One exchange of about 500 + 500 tokens: history a compaction can summarise."""
    faux.append_responses([faux_message("r" * 2000)])
    await session.prompt("p" * 2000)


class Gate:
    """A faux response that waits until released (to act while the summariser works)."""

    def __init__(self, reply: AssistantMessage) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.reply = reply

    async def __call__(self, context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        self.entered.set()
        await self.release.wait()
        return self.reply


# -- threshold -----------------------------------------------------------------------------------


async def test_27_48_a_run_over_the_threshold_compacts_once_and_does_not_continue(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    summarizer = Summarizer()
    faux.append_responses([faux_message("b" * 8000), summarizer, summarizer])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 1600)

    [entry] = compactions(session)
    assert entry.summary == "H\n\n---\n\n**Turn Context (split turn):**\n\nP"
    assert entry.details == {"readFiles": [], "modifiedFiles": []}
    assert log.of("compaction_start") == [CompactionStart("threshold")]
    [end] = log.of("compaction_end")
    assert (end.reason, end.aborted, end.will_retry, end.error_message) == ("threshold", False, False, None)
    assert end.result is not None and end.result.first_kept_entry_id == entry.first_kept_entry_id
    assert faux.state.call_count == 4 and faux.pending == 0  # no automatic continue
    assert [m.role for m in session.messages] == ["compactionSummary", "assistant"]
    assert not any(isinstance(c.tools, list) and c.tools for c in summarizer.requests)
    assert log.types.index("agent_end") < log.types.index("compaction_start")


async def test_28_usage_from_before_the_latest_compaction_does_not_trigger_again(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    session.set_auto_compaction_enabled(False)
    faux.append_responses([faux_message("b" * 8000)])
    await session.prompt("q" * 1600)  # over the threshold, but compaction is off
    faux.append_responses([Summarizer(), Summarizer()])
    await session.compact()
    session.set_auto_compaction_enabled(True)

    faux.append_responses([faux_message("ok")])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("next")  # the pre-prompt check sees the big, now stale, reply
    assert log.of("compaction_start") == []
    assert len(compactions(session)) == 1


async def test_29_an_error_reply_without_a_usage_anchor_does_not_compact(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    faux.set_responses([faux_message("", stop_reason="error", error_message="invalid request")])
    await session.prompt("q" * 30_000)  # 7500 estimated tokens, but nothing was ever reported
    assert compactions(session) == []


async def test_29_an_error_reply_over_the_threshold_by_estimate_compacts(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    summarizer = Summarizer()
    faux.append_responses(
        [faux_message("", stop_reason="error", error_message="invalid request"), summarizer]
    )
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 16_000)  # anchor ~3600 + 4000 estimated > 6000
    assert [e.reason for e in log.of("compaction_end")] == ["threshold"]
    assert len(compactions(session)) == 1


async def test_30_an_error_reply_whose_only_anchor_predates_the_compaction_does_not_compact(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    faux.append_responses([faux_message("r" * 1200)])
    await session.prompt("p" * 1600)
    faux.append_responses([Summarizer(), Summarizer()])
    await session.compact()
    anchor = next(m for m in reversed(session.messages) if isinstance(m, AssistantMessage))
    assert anchor.text() == "r" * 1200  # kept verbatim, usage from before the compaction

    faux.append_responses([faux_message("", stop_reason="error", error_message="invalid request")])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 30_000)
    assert log.of("compaction_start") == []
    assert len(compactions(session)) == 1


# -- overflow ------------------------------------------------------------------------------------


async def test_31_overflow_compacts_drops_the_error_from_memory_and_continues(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    seen: list[Context] = []

    def recovered(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("recovered")

    summarizer = Summarizer()
    faux.append_responses(
        [faux_message("", stop_reason="error", error_message=OVERFLOW), summarizer, summarizer, recovered]
    )
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 1600)

    assert log.of("compaction_start") == [CompactionStart("overflow")]
    [end] = log.of("compaction_end")
    assert end.result is not None and end.will_retry and not end.aborted
    assert session.get_last_assistant_text() == "recovered"
    assert not any(isinstance(m, AssistantMessage) and m.stop_reason == "error" for m in session.messages)
    assert file_roles(session) == [
        "user",
        "assistant",
        "user",
        "assistant",
        "assistant",
    ]  # error kept on disk
    [request] = seen
    # Only the failed attempt followed the prompt, so the cut lands on it, as pi 1.6's does: the
    # prompt is the opening of a split turn and is summarised with the history (two calls).
    assert len(summarizer.requests) == 2
    assert "q" * 1600 not in request_text(request) and "<summary>" in request_text(request)
    assert "H\n\n---\n\n**Turn Context (split turn):**\n\nP" in request_text(request)
    assert log.types.count("agent_start") == 2  # the failed run and the continue: no new prompt


async def test_32_an_overflow_from_another_model_is_not_treated_as_overflow(
    make_session: SessionFactory, faux: FauxProvider, services: Any
) -> None:
    from .conftest import faux_model

    session = make_session(model=faux_model(services, "faux-2"))
    await prime(session, faux)
    session.set_auto_compaction_enabled(False)
    faux.append_responses([faux_message("", stop_reason="error", error_message=OVERFLOW)])
    await session.prompt("q")
    session.set_auto_compaction_enabled(True)
    await session.set_model(faux_model(services, "faux-1"))

    faux.append_responses([faux_message("fine")])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("again")  # the pre-prompt check sees faux-2's overflow
    assert log.of("compaction_start") == []
    assert compactions(session) == []


async def test_33_a_second_overflow_before_new_input_fails_without_compacting_again(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    overflow = faux_message("", stop_reason="error", error_message=OVERFLOW)
    faux.append_responses([overflow, Summarizer(), Summarizer(), overflow])  # a split turn: two calls
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 1600)

    assert len(compactions(session)) == 1
    first, second = log.of("compaction_end")
    assert first.will_retry and first.result is not None
    assert second == CompactionEnd(
        "overflow", None, aborted=False, will_retry=False, error_message=OVERFLOW_RECOVERY_FAILED
    )
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.error_message == OVERFLOW
    assert faux.pending == 0

    # New input allows one more recovery (a prompt larger than keepRecentTokens, so the earlier
    # one can be summarised: with nothing to summarise no compaction starts, as in pi 1.6).
    faux.append_responses(
        [
            faux_message("", stop_reason="error", error_message=OVERFLOW),
            Summarizer(),
            Summarizer(),  # the new prompt opens a split turn, as in the first recovery
            faux_message("done"),
        ]
    )
    await session.prompt("n" * 1600)
    assert len(log.of("compaction_start")) == 2 and len(compactions(session)) == 2
    assert log.of("compaction_end")[-1].will_retry
    assert faux.pending == 0 and session.messages[-1].text() == "done"  # type: ignore[union-attr]


async def test_33b_an_overflow_with_nothing_to_summarise_starts_no_compaction_as_pi16(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    faux.append_responses([faux_message("", stop_reason="error", error_message=OVERFLOW)])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("a first prompt, all of it kept")
    assert log.of("compaction_start") == [] and log.of("compaction_end") == []
    assert compactions(session) == [] and faux.pending == 0


async def test_53_disabled_compaction_runs_neither_on_threshold_nor_on_overflow(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    session.set_auto_compaction_enabled(False)
    await prime(session, faux)
    faux.append_responses(
        [faux_message("b" * 8000), faux_message("", stop_reason="error", error_message=OVERFLOW)]
    )
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 1600)
    await session.prompt("more")
    assert log.of("compaction_start") == [] and compactions(session) == []
    assert faux.pending == 0


async def test_54_the_pre_prompt_check_counts_an_aborted_reply_the_post_run_check_does_not(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    log = EventLog()

    def abort_on_first_delta(event: Any) -> None:
        log(event)
        if event.type == "message_update" and session.is_streaming:
            session.agent.abort()

    unsubscribe = session.subscribe(abort_on_first_delta)
    faux.append_responses([faux_message("b" * 8000)])  # usage (reported up front) is over the threshold
    await session.prompt("q" * 1600)
    unsubscribe()
    aborted = session.messages[-1]
    assert isinstance(aborted, AssistantMessage) and aborted.stop_reason == "aborted"
    assert log.of("compaction_start") == []

    log = EventLog()
    session.subscribe(log)
    faux.append_responses([reply_or_summarize("after")] * 3)
    await session.prompt("go on")
    assert [e.reason for e in log.of("compaction_start")] == ["threshold"]
    assert log.types.index("compaction_end") < log.types.index("agent_start")
    assert session.get_last_assistant_text() == "after"


async def test_36_49_threshold_compaction_delivers_queued_follow_ups(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    gate = Gate(faux_message("H"))
    faux.append_responses([faux_message("b" * 8000), gate, Summarizer(), faux_message("follow-up answered")])
    running = asyncio.ensure_future(session.prompt("q" * 1600))
    await asyncio.wait_for(gate.entered.wait(), 5)
    await session.follow_up("and one more thing")
    gate.release.set()
    await asyncio.wait_for(running, 5)
    assert session.get_last_assistant_text() == "follow-up answered"
    assert len(compactions(session)) == 1
    assert faux.pending == 0


# -- manual compaction ---------------------------------------------------------------------------


async def test_manual_compact_summarises_appends_and_rebuilds(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    faux.append_responses([faux_message("r" * 1200)])
    await session.prompt("p" * 1600)
    summarizer = Summarizer()
    faux.append_responses([summarizer, summarizer])
    log = EventLog()
    session.subscribe(log)

    result = await session.compact("keep the parser notes")
    assert log.of("compaction_start") == [CompactionStart("manual")]
    assert log.of("compaction_end") == [CompactionEnd("manual", result)]
    [entry] = compactions(session)
    assert (entry.summary, entry.first_kept_entry_id, entry.tokens_before) == (
        result.summary,
        result.first_kept_entry_id,
        result.tokens_before,
    )
    assert session.session_manager.get_leaf_id() == entry.id
    assert session.messages[0].role == "compactionSummary"
    assert any(
        request_text(c).endswith("Additional focus: keep the parser notes") for c in summarizer.requests
    )

    with open(session.session_file or "", encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    assert lines[-1]["type"] == "compaction" and lines[-1]["parentId"] == lines[-2]["id"]

    faux.append_responses([faux_message("still working")])
    await session.prompt("continue")
    assert session.get_last_assistant_text() == "still working"


async def test_37_manual_compact_refuses_an_empty_or_already_compacted_session(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    log = EventLog()
    session.subscribe(log)
    with pytest.raises(NothingToCompactError, match=r"Nothing to compact \(session too small\)"):
        await session.compact()
    assert faux.state.call_count == 0
    assert (
        log.of("compaction_end")[-1].error_message
        == "Compaction failed: Nothing to compact (session too small)"
    )

    await prime(session, faux)
    faux.append_responses([faux_message("r" * 1200), Summarizer(), Summarizer()])
    await session.prompt("p" * 1600)
    await session.compact()
    with pytest.raises(NothingToCompactError, match="Already compacted"):
        await session.compact()
    assert len(compactions(session)) == 1


async def test_a_manual_compact_of_a_short_session_is_refused_as_pi_refuses_it(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    log = EventLog()
    session.subscribe(log)
    faux.set_responses([faux_message("short")])
    await session.prompt("hello")
    entries_before = list(session.session_manager.get_entries())
    with pytest.raises(NothingToCompactError, match=r"^Nothing to compact \(session too small\)$"):
        await session.compact()
    assert faux.state.call_count == 1  # the reply only: no summary request
    assert session.session_manager.get_entries() == entries_before
    [end] = log.of("compaction_end")
    assert end.result is None and not end.aborted
    assert end.error_message == "Compaction failed: Nothing to compact (session too small)"


async def test_a_failing_summariser_leaves_the_session_unchanged_and_work_goes_on(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    boom = faux_message("", stop_reason="error", error_message="summariser exploded")
    faux.append_responses([faux_message("b" * 8000), boom, Summarizer()])
    log = EventLog()
    session.subscribe(log)
    before = list(session.session_manager.get_entries())
    await session.prompt("q" * 1600)
    [end] = log.of("compaction_end")
    assert end.error_message == "Auto-compaction failed: Summarization failed: summariser exploded"
    assert end.result is None and not end.will_retry
    assert compactions(session) == []
    assert len(session.session_manager.get_entries()) == len(before) + 2  # the prompt and its reply only

    faux.set_responses([faux_message("", stop_reason="error", error_message="still broken"), Summarizer()])
    with pytest.raises(SummarizationError, match="still broken"):
        await session.compact()
    assert (
        log.of("compaction_end")[-1].error_message == "Compaction failed: Summarization failed: still broken"
    )
    assert compactions(session) == []

    faux.set_responses([faux_message("the task goes on")])
    session.set_auto_compaction_enabled(False)
    await session.prompt("next step")
    assert session.get_last_assistant_text() == "the task goes on"


async def test_abort_during_a_manual_compaction_raises_and_changes_nothing(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    faux.append_responses([faux_message("r" * 1200)])
    await session.prompt("p" * 1600)
    gate = Gate(faux_message("never used"))
    faux.append_responses([gate, gate])
    log = EventLog()
    session.subscribe(log)
    running = asyncio.ensure_future(session.compact())
    await asyncio.wait_for(gate.entered.wait(), 5)
    assert session.is_compacting
    session.abort_compaction()
    with pytest.raises(CompactionAbortedError):
        await asyncio.wait_for(running, 5)
    assert not session.is_compacting
    assert log.of("compaction_end") == [CompactionEnd("manual", None, aborted=True)]
    assert compactions(session) == []


async def test_abort_during_an_automatic_compaction_ends_it_quietly(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    gate = Gate(faux_message("never used"))
    faux.append_responses([faux_message("b" * 8000), gate, gate])
    log = EventLog()
    session.subscribe(log)
    running = asyncio.ensure_future(session.prompt("q" * 1600))
    await asyncio.wait_for(gate.entered.wait(), 5)
    session.abort_compaction()
    await asyncio.wait_for(running, 5)
    assert log.of("compaction_end") == [CompactionEnd("threshold", None, aborted=True)]
    assert compactions(session) == []


# -- hook points ---------------------------------------------------------------------------------


class CancellingHooks(CompactionHooks):
    async def session_before_compact(self, event: BeforeCompactEvent) -> BeforeCompactResult | None:
        return BeforeCompactResult(cancel=True)


async def test_38_a_cancelling_hook_stops_manual_and_automatic_compaction(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    session._compaction.hooks = CancellingHooks()
    await prime(session, faux)
    faux.append_responses([faux_message("b" * 8000)])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("q" * 1600)
    assert log.of("compaction_end") == [CompactionEnd("threshold", None, aborted=True)]
    with pytest.raises(CompactionCancelledError, match="Compaction cancelled"):
        await session.compact()
    assert log.of("compaction_end")[-1] == CompactionEnd("manual", None, aborted=True)
    assert compactions(session) == []
    assert faux.pending == 0 and faux.state.call_count == 2  # no summariser call


async def test_39_a_hook_supplied_compaction_is_written_verbatim_from_hook(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    first_id = session.session_manager.get_entries()[0].id
    supplied = CompactionResult("custom summary", first_id, 4242, FileDetails(["x"], []))
    saved: list[tuple[CompactionEntry, bool]] = []

    class Supplying(CompactionHooks):
        async def session_before_compact(self, event: BeforeCompactEvent) -> BeforeCompactResult | None:
            assert event.preparation.first_kept_entry_id and event.branch_entries
            return BeforeCompactResult(compaction=supplied)

        async def session_compact(
            self,
            entry: CompactionEntry,
            from_extension: bool,
            reason: str = "manual",
            will_retry: bool = False,
        ) -> None:
            assert session.session_manager.get_leaf_id() == entry.id  # already saved
            assert (reason, will_retry) == ("manual", False)
            saved.append((entry, from_extension))

    session._compaction.hooks = Supplying()
    faux.append_responses([faux_message("r" * 1200)])
    await session.prompt("p" * 1600)
    result = await session.compact()
    assert result.estimated_tokens_after is not None and result.estimated_tokens_after > 0  # added, as pi
    assert replace(result, estimated_tokens_after=None) == supplied
    [entry] = compactions(session)
    assert (entry.summary, entry.first_kept_entry_id, entry.tokens_before, entry.from_hook) == (
        "custom summary",
        first_id,
        4242,
        True,
    )
    assert saved == [(entry, True)]
    assert faux.pending == 0


# -- after compaction ----------------------------------------------------------------------------


async def test_41_context_usage_is_unknown_until_the_next_reply(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session()
    await prime(session, faux)
    before = session.get_context_usage()
    assert before is not None and before.tokens is not None and before.percent is not None
    faux.append_responses([faux_message("r" * 1200), Summarizer(), Summarizer()])
    await session.prompt("p" * 1600)
    await session.compact()
    unknown = session.get_context_usage()
    assert unknown is not None and (unknown.tokens, unknown.percent, unknown.context_window) == (
        None,
        None,
        8000,
    )

    faux.append_responses([faux_message("fresh")])
    await session.prompt("hello again")
    known = session.get_context_usage()
    assert known is not None and known.tokens is not None and known.tokens > 0
    assert known.percent == pytest.approx(known.tokens / 80)


async def test_42_in_memory_sessions_compact_the_same_way(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    session = make_session(in_memory=True)
    await prime(session, faux)
    faux.append_responses([faux_message("b" * 8000), Summarizer(), Summarizer()])
    await session.prompt("q" * 1600)
    assert session.session_file is None
    [entry] = compactions(session)
    assert session.messages[0].role == "compactionSummary"
    assert session.session_manager.get_leaf_id() == entry.id


def test_compaction_events_in_json() -> None:
    result = CompactionResult("S", "abc", 10, FileDetails([], ["m.py"]))
    assert session_event_to_json(CompactionStart("overflow")) == {
        "type": "compaction_start",
        "reason": "overflow",
    }
    assert session_event_to_json(CompactionEnd("manual", result)) == {
        "type": "compaction_end",
        "reason": "manual",
        "result": {
            "summary": "S",
            "firstKeptEntryId": "abc",
            "tokensBefore": 10,
            "details": {"readFiles": [], "modifiedFiles": ["m.py"]},
        },
        "aborted": False,
        "willRetry": False,
    }
    failed = CompactionEnd("threshold", None, error_message="Auto-compaction failed: x")
    assert session_event_to_json(failed) == {
        "type": "compaction_end",
        "reason": "threshold",
        "aborted": False,
        "willRetry": False,
        "errorMessage": "Auto-compaction failed: x",
    }


async def test_33c_a_cut_reply_leaves_the_context_with_the_results_of_its_tool_call(
    make_session: SessionFactory, faux: FauxProvider, tmp_path: Any
) -> None:
    """pi 1.6's #11227: a reply cut off below the output limit whose tool call got a result (here
    a session resumed after it) leaves the context together with that result, else every later
    request would carry a result without its call."""
    from tau.ai.types import TextContent, ToolResultMessage, UserMessage
    from tau.session.entries import ContextEditEntry
    from tau.session.manager import SessionManager
    from tau.testing.faux import faux_tool_call

    first = make_session()
    await prime(first, faux)
    manager = SessionManager.open(first.session_file)  # type: ignore[arg-type]
    call = faux_tool_call("bash", {"command": "echo one"})
    manager.append_message(UserMessage("u" * 1600))
    manager.append_message(faux_message([TextContent("Let me run"), call], stop_reason="length"))
    manager.append_message(
        ToolResultMessage(call.id, "bash", [TextContent("not run: cut off")], is_error=True)
    )
    session = make_session(session_manager=manager)
    summarizer = Summarizer()
    sent: list[Context] = []

    def answer(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        sent.append(context)
        return faux_message("done")

    faux.append_responses([summarizer, answer])
    log = EventLog()
    session.subscribe(log)
    await session.prompt("go on")

    branch = session.session_manager.get_branch()
    edits = [e for e in branch if isinstance(e, ContextEditEntry)]
    targets = [session.session_manager.get_entry(e.target_id) for e in edits]
    assert [type(t.message).__name__ for t in targets if isinstance(t, MessageEntry)] == [
        "AssistantMessage",
        "ToolResultMessage",
    ]
    assert all(e.replacement is None for e in edits)
    [begin] = log.of("compaction_start")
    assert begin == CompactionStart("overflow")
    [request] = sent
    text = repr(request.messages)
    assert call.id not in text and "not run: cut off" not in text
    assert faux.pending == 0

"""Session-level auto-retry (spec 30 §1.4) on the faux provider, and the provider-level limits the
session puts on each request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from event_log import EventLog

from tau.ai.options import SimpleStreamOptions
from tau.ai.types import AssistantMessage, Context, Model
from tau.config.settings import RetrySettings
from tau.runtime.agent_session import AgentSession
from tau.runtime.events import AutoRetryEnd, AutoRetryStart, session_event_to_json
from tau.runtime.retry import apply_provider_retry_settings, is_retryable_error
from tau.runtime.services import AgentSessionServices, create_agent_session_services
from tau.session.entries import ContextEditEntry, MessageEntry
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

from .conftest import Gate, SessionFactory, file_lines, register_faux_models, user_texts

BASE_DELAY_MS = 2


def failure(text: str) -> AssistantMessage:
    return faux_message("", stop_reason="error", error_message=text)


def write_settings(agent_dir: str, **retry: Any) -> None:
    settings = {
        "retry": {"baseDelayMs": BASE_DELAY_MS, **retry},
        # Overflow errors belong to compaction; keep it out of these tests.
        "compaction": {"enabled": False},
    }
    (Path(agent_dir) / "settings.json").write_text(json.dumps(settings))


@pytest.fixture
def services(project: str, agent_dir: str, faux: FauxProvider) -> AgentSessionServices:
    """The conftest services, with millisecond retry delays in the agent dir's settings."""
    write_settings(agent_dir)
    built = create_agent_session_services(cwd=project, agent_dir=agent_dir)
    register_faux_models(built, faux)
    return built


def logged(session: AgentSession) -> EventLog:
    log = EventLog()
    session.subscribe(log)
    return log


def file_roles(session: AgentSession) -> list[tuple[str, str | None]]:
    return [
        (line["message"]["role"], line["message"].get("stopReason"))
        for line in file_lines(session.session_file)
        if line["type"] == "message" and line["message"]["role"] != "system"
    ]


# -- what is retried -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        "529 overloaded_error: Overloaded",
        "429 Too Many Requests",
        "rate_limit_error: slow down",
        "RateLimit reached",
        "503 Service Unavailable",
        "502 Bad Gateway",
        "Connection error calling http://x/v1: All connection attempts failed",
        "Connection lost while streaming: peer closed connection",
        "Stream idle timeout: no data from the provider for 120 s (timed out)",
        "Provider returned error",
        "socket hang up",
        "stream ended without a finish reason",
        "429 quota (the server asked to retry after 259200 s (3 days), longer than the retry delay cap)",
    ],
)
def test_transient_errors_are_retryable(error: str) -> None:
    assert is_retryable_error(failure(error))


@pytest.mark.parametrize(
    "error",
    [
        "401 invalid x-api-key",
        "403 Forbidden: connection error to your org's gateway",
        "400 invalid request: 'timeout' is not a valid parameter",
        "invalid api key",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "max_tokens: 2500 is too large",
    ],
)
def test_permanent_errors_and_overflow_are_not_retryable(error: str) -> None:
    assert not is_retryable_error(failure(error))


def test_only_error_replies_are_retryable() -> None:
    assert not is_retryable_error(faux_message("the server said 503", stop_reason="stop"))
    assert not is_retryable_error(faux_message("", stop_reason="aborted", error_message="timed out"))
    assert not is_retryable_error(faux_message("", stop_reason="error"))


# -- the chain -----------------------------------------------------------------------------------


async def test_a_transient_error_is_dropped_from_the_context_and_retried(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    seen: list[Context] = []

    def answer(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("recovered")

    faux.set_responses([failure("529 overloaded"), answer])
    session = make_session()
    log = logged(session)
    await session.prompt("hello")

    [start] = log.of("auto_retry_start")
    assert (start.attempt, start.max_attempts, start.delay_ms) == (1, 3, BASE_DELAY_MS)
    assert start.error_message == "529 overloaded"
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (True, 1, None)
    # The retried request is rebuilt from the context without the failed reply.
    assert [m.role for m in seen[0].messages] == ["user"] and user_texts(seen[0]) == ["hello"]
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.get_last_assistant_text() == "recovered"
    assert file_roles(session) == [("user", None), ("assistant", "error"), ("assistant", "stop")]
    assert not session.is_retrying


async def test_retry_events_come_in_pi_order(make_session: SessionFactory, faux: FauxProvider) -> None:
    faux.set_responses([failure("503 Service Unavailable"), faux_message("ok")])
    session = make_session()
    log = logged(session)
    await session.prompt("hello")
    types = [t for t in log.types if t not in ("message_update", "message_start")]
    assert types == [
        "agent_start",
        "turn_start",
        "message_end",  # the system message recorded for the run (pi 1.6)
        "message_end",  # the user message
        "message_end",  # the failed reply
        "turn_end",
        "agent_end",
        "auto_retry_start",
        "entry_appended",  # the failed reply's context_edit (pi 1.6)
        "agent_start",
        "turn_start",
        "message_end",
        "auto_retry_end",
        "turn_end",
        "agent_end",
        "agent_settled",  # once, after the whole chain (pi 1.x)
    ]


async def test_the_file_leaves_the_failed_reply_out_of_the_context_as_pi16s_does(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([failure("503 Service Unavailable"), faux_message("ok")])
    session = make_session()
    await session.prompt("hello")
    entries = session.session_manager.get_entries()
    [failed] = [
        e
        for e in entries
        if isinstance(e, MessageEntry)
        and isinstance(e.message, AssistantMessage)
        and e.message.stop_reason == "error"
    ]
    [edit] = [e for e in entries if isinstance(e, ContextEditEntry)]
    assert (edit.target_id, edit.replacement, edit.parent_id) == (failed.id, None, failed.id)
    # A session resumed from the file sends the conversation without it.
    context = session.session_manager.build_session_context()
    assert [m.stop_reason for m in context.messages if isinstance(m, AssistantMessage)] == ["stop"]


async def test_delays_double_and_are_capped_by_the_retry_delay_cap(
    agent_dir: str, make_session: SessionFactory, faux: FauxProvider
) -> None:
    write_settings(agent_dir, baseDelayMs=5, maxRetries=4, provider={"maxRetryDelayMs": 12})
    faux.set_responses([failure("500 boom")] * 4 + [faux_message("ok")])
    session = make_session()
    session.services.settings_manager.reload()
    log = logged(session)
    await session.prompt("hello")
    assert [e.delay_ms for e in log.of("auto_retry_start")] == [5, 10, 12, 12]
    assert [e.attempt for e in log.of("auto_retry_start")] == [1, 2, 3, 4]


async def test_when_retries_run_out_the_error_is_the_final_reply(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([failure("503 unavailable")] * 4 + [faux_message("never sent")])
    session = make_session()
    log = logged(session)
    await session.prompt("hello")

    assert [e.attempt for e in log.of("auto_retry_start")] == [1, 2, 3]
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (False, 3, "503 unavailable")
    assert log.types[-2:] == ["auto_retry_end", "agent_settled"]
    assert faux.pending == 1 and faux.state.call_count == 4
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.error_message == "503 unavailable"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert file_roles(session) == [("user", None)] + [("assistant", "error")] * 4
    assert not session.is_retrying


@pytest.mark.parametrize(
    "error",
    ["prompt is too long: 250000 tokens > 200000 maximum", "401 invalid x-api-key", "400 bad request"],
)
async def test_overflow_auth_and_bad_requests_are_not_retried(
    make_session: SessionFactory, faux: FauxProvider, error: str
) -> None:
    faux.set_responses([failure(error), faux_message("never sent")])
    session = make_session()
    log = logged(session)
    await session.prompt("hello")
    assert log.of("auto_retry_start") == [] and log.of("auto_retry_end") == []
    assert faux.state.call_count == 1
    assert session.messages[-1].role == "assistant"


async def test_retries_can_be_turned_off(make_session: SessionFactory, faux: FauxProvider) -> None:
    faux.set_responses([failure("529 overloaded"), faux_message("never sent")])
    session = make_session()
    session.set_auto_retry_enabled(False)
    assert session.auto_retry_enabled is False
    log = logged(session)
    await session.prompt("hello")
    assert [t for t in log.types if t.startswith("auto_retry")] == []
    assert faux.state.call_count == 1


async def test_a_reply_that_comes_through_resets_the_attempt_counter(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses(
        [
            failure("503 unavailable"),
            faux_message(faux_tool_call("bash", {"command": "echo hi"})),
            failure("503 unavailable"),
            failure("503 unavailable"),
            faux_message("done"),
        ]
    )
    session = make_session()
    log = logged(session)
    await session.prompt("hello")
    assert [e.attempt for e in log.of("auto_retry_start")] == [1, 1, 2]
    assert [(e.success, e.attempt) for e in log.of("auto_retry_end")] == [(True, 1), (True, 2)]
    assert session.get_last_assistant_text() == "done"
    assert [m.role for m in session.messages] == ["user", "assistant", "toolResult", "assistant"]


async def test_the_counter_starts_again_for_the_next_prompt(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([failure("503"), faux_message("one"), failure("503"), faux_message("two")])
    session = make_session()
    log = logged(session)
    await session.prompt("first")
    await session.prompt("second")
    assert [e.attempt for e in log.of("auto_retry_start")] == [1, 1]
    assert session.get_last_assistant_text() == "two"


# -- cancelling ----------------------------------------------------------------------------------


async def _prompt_until_retry_waits(session: AgentSession, log: EventLog) -> asyncio.Task[None]:
    task = asyncio.create_task(session.prompt("hello"))
    for _ in range(500):
        if log.of("auto_retry_start"):
            return task
        await asyncio.sleep(0.005)
    raise AssertionError("no retry started")


async def test_abort_during_the_delay_cancels_the_retry(
    agent_dir: str, make_session: SessionFactory, faux: FauxProvider
) -> None:
    write_settings(agent_dir, baseDelayMs=30_000)
    faux.set_responses([failure("529 overloaded"), faux_message("never sent")])
    session = make_session()
    session.services.settings_manager.reload()
    log = logged(session)
    prompting = await _prompt_until_retry_waits(session, log)
    assert session.is_retrying and session.retry_attempt == 1

    await asyncio.wait_for(session.abort(), 2)
    await asyncio.wait_for(prompting, 2)
    [end] = log.of("auto_retry_end")
    assert (end.success, end.attempt, end.final_error) == (False, 1, "Retry cancelled")
    assert faux.state.call_count == 1 and not session.is_retrying
    # As in pi, the failed reply stays out of the context; the session file keeps it.
    assert [m.role for m in session.messages] == ["user"]
    entries = session.session_manager.get_entries()
    assert [
        e.message.role for e in entries if isinstance(e, MessageEntry) and e.message.role != "system"
    ] == [
        "user",
        "assistant",
    ]


async def test_abort_retry_cancels_only_the_wait(
    agent_dir: str, make_session: SessionFactory, faux: FauxProvider
) -> None:
    write_settings(agent_dir, baseDelayMs=30_000)
    faux.set_responses([failure("529 overloaded"), faux_message("after")])
    session = make_session()
    session.services.settings_manager.reload()
    log = logged(session)
    prompting = await _prompt_until_retry_waits(session, log)
    session.abort_retry()
    await asyncio.wait_for(prompting, 2)
    assert [e.final_error for e in log.of("auto_retry_end")] == ["Retry cancelled"]
    await session.prompt("again")
    assert session.get_last_assistant_text() == "after"


async def test_a_new_prompt_supersedes_a_waiting_retry(
    agent_dir: str, make_session: SessionFactory, faux: FauxProvider
) -> None:
    write_settings(agent_dir, baseDelayMs=30_000)
    faux.set_responses([failure("529 overloaded"), faux_message("answer to the new prompt")])
    session = make_session()
    session.services.settings_manager.reload()
    log = logged(session)
    prompting = await _prompt_until_retry_waits(session, log)
    await asyncio.wait_for(session.prompt("never mind"), 2)
    await asyncio.wait_for(prompting, 2)
    assert [e.final_error for e in log.of("auto_retry_end")] == ["Retry cancelled"]
    assert session.get_last_assistant_text() == "answer to the new prompt"
    assert faux.state.call_count == 2


async def test_abort_during_the_retried_run_ends_the_chain(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    gate = Gate()
    faux.set_responses([failure("529 overloaded"), gate])
    session = make_session()
    log = logged(session)
    prompting = asyncio.create_task(session.prompt("hello"))
    await asyncio.wait_for(gate.entered.wait(), 2)
    assert session.is_streaming and session.is_retrying
    await asyncio.wait_for(session.abort(), 2)
    await asyncio.wait_for(prompting, 2)
    [end] = log.of("auto_retry_end")
    assert end.success is False and end.attempt == 1 and end.final_error
    assert not session.is_retrying


# -- provider level ------------------------------------------------------------------------------


async def test_provider_retries_are_off_while_a_session_retry_runs(
    agent_dir: str, make_session: SessionFactory, faux: FauxProvider
) -> None:
    write_settings(agent_dir, provider={"maxRetries": 2})
    limits: list[tuple[int, int, int | None]] = []

    def record(result: AssistantMessage) -> Any:
        def respond(
            context: Context, options: SimpleStreamOptions, state: Any, model: Model
        ) -> AssistantMessage:
            limits.append((options.max_retries, options.max_retry_delay_ms, options.idle_timeout_ms))
            return result

        return respond

    faux.set_responses([record(failure("503")), record(faux_message("ok")), record(faux_message("later"))])
    session = make_session()
    session.services.settings_manager.reload()
    await session.prompt("hello")
    await session.prompt("again")
    assert [m for m, _, _ in limits] == [2, 0, 2]
    assert all(cap == 60000 for _, cap, _ in limits)


def test_provider_level_retries_default_to_none_as_in_pi() -> None:
    options = SimpleStreamOptions(max_retries=7)
    apply_provider_retry_settings(options, RetrySettings())
    assert options.max_retries == 0


def test_provider_settings_reach_the_request_options() -> None:
    options = SimpleStreamOptions()
    settings = RetrySettings(
        provider_timeout_ms=5000,
        provider_max_retries=5,
        provider_max_retry_delay_ms=0,
        provider_idle_timeout_ms=750,
    )
    apply_provider_retry_settings(options, settings)
    assert (options.timeout_ms, options.max_retries, options.max_retry_delay_ms, options.idle_timeout_ms) == (
        5000,
        5,
        0,
        750,
    )
    apply_provider_retry_settings(options, settings, provider_retries=False)
    assert options.max_retries == 0


def test_retry_events_have_pis_json_shape() -> None:
    assert session_event_to_json(
        AutoRetryStart(attempt=1, max_attempts=3, delay_ms=2000, error_message="x")
    ) == {
        "type": "auto_retry_start",
        "attempt": 1,
        "maxAttempts": 3,
        "delayMs": 2000,
        "errorMessage": "x",
    }
    assert session_event_to_json(AutoRetryEnd(success=True, attempt=1)) == {
        "type": "auto_retry_end",
        "success": True,
        "attempt": 1,
    }
    assert (
        session_event_to_json(AutoRetryEnd(success=False, attempt=2, final_error="boom"))["finalError"]
        == "boom"
    )

"""The summary request as pi 1.4+ sends it, through the real ``tau`` against the fake HTTP server: its
output budget is the model's output limit (fitted to the window), a passing failure is retried
with ``summarization_retry_*`` events in the JSON and RPC streams, and ``compaction.modelOverrides``
sets the token budgets of one model."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.compaction.prompts import SUMMARIZER_SYSTEM_PROMPT
from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Fault, ScriptedUsage, Turn

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def set_model(tau: TauCommand, *, context_window: int, max_tokens: int) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"][0].update(contextWindow=context_window, maxTokens=max_tokens)
    path.write_text(json.dumps(models))


def set_settings(tau: TauCommand, settings: dict[str, Any]) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


def full_turn(reported_input: int) -> Turn:
    """A reply whose reported usage puts the context at ``reported_input`` tokens."""
    return Turn(text="first reply " + "x" * 2000, usage=ScriptedUsage(input=reported_input, output=100))


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def retry_events(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["type"].startswith("summarization_retry_")]


def max_tokens(body: dict[str, Any]) -> int:
    return int(body.get("max_completion_tokens") or body["max_tokens"])


def input_tokens(body: dict[str, Any]) -> int:
    """The summary request's input as tau estimates it: characters / 4, rounded up."""
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in body["messages"]
    ]
    assert texts[0] == SUMMARIZER_SYSTEM_PROMPT
    return -(-sum(len(text) for text in texts) // 4)


def request_tokens(body: dict[str, Any]) -> int:
    """The summary request's input as pi-ai 1.6 estimates any request: 3.5 characters per token."""
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"] for m in body["messages"]
    ]
    return sum(math.ceil(len(text) / 3.5) for text in texts)


def test_the_summary_may_use_the_models_whole_output_limit(tau: TauCommand) -> None:
    set_model(tau, context_window=400_000, max_tokens=64_000)
    set_settings(tau, {"compaction": {"keepRecentTokens": 200}})
    tau.server.add(cut_turn(390_000, 64_000), Turn(text="## Goal\nsummary"))
    result = tau.run(*MODEL, "-p", "first task")
    assert (result.returncode, result.stderr) == (1, TRUNCATED)
    summarizer = tau.server.requests[1].body
    assert "first task" in json.dumps(summarizer["messages"])
    assert max_tokens(summarizer) == 64_000  # not 80% of reserveTokens (13107), nor the 32000 default


def cut_turn(reported_input: int, output_limit: int, reason: str = "length") -> Turn:
    """Like ``full_turn``, but cut at the model's output limit ``output_limit`` (all of it used, so
    not retried: pi 1.6 recovers only a reply cut below it): the conversation does not end with a
    finished reply, so the summary is asked for in a request of its own (issue #31). Print mode
    then ends with status 1 and a warning, as pi 1.6 does for a truncated reply."""
    turn = full_turn(reported_input)
    turn.stop_reason = reason  # the protocol's own word for it
    turn.usage.output = output_limit
    return turn


TRUNCATED = "Response was truncated: the model reached its output token limit.\n"


def test_the_summary_output_limit_is_lowered_to_fit_the_context_window(tau: TauCommand) -> None:
    set_model(tau, context_window=40_000, max_tokens=64_000)
    set_settings(tau, {"compaction": {"keepRecentTokens": 200}})
    tau.server.add(cut_turn(39_000, 64_000), Turn(text="## Goal\nsummary"))
    assert tau.run(*MODEL, "-p", "first task").returncode == 1  # the reply stays cut off
    summarizer = tau.server.requests[1].body
    # The lower of compaction's own fit (4 characters per token) and the one stream_simple gives every
    # request as pi-ai 1.6 does (3.5 characters per token, per message).
    assert max_tokens(summarizer) == 40_000 - max(input_tokens(summarizer), request_tokens(summarizer)) - 4096


def test_the_summary_of_a_finished_conversation_is_asked_of_the_conversation_itself(tau: TauCommand) -> None:
    set_model(tau, context_window=40_000, max_tokens=64_000)
    set_settings(tau, {"compaction": {"keepRecentTokens": 200}})
    tau.server.add(full_turn(24_000), Turn(text="## Goal\nsummary"))
    assert tau.run(*MODEL, "-p", "first task").returncode == 0
    turn, summarizer = (request.body for request in tau.server.requests)
    # The request the conversation last made (same system, tools and messages), then its reply and
    # one instruction: all but the last two messages come from the provider's cache.
    assert summarizer["tools"] == turn["tools"] and summarizer["messages"][0] == turn["messages"][0]
    assert summarizer["messages"][:-2] == turn["messages"]
    assert summarizer["messages"][-2]["role"] == "assistant"
    instruction = summarizer["messages"][-1]["content"][0]["text"]
    assert instruction.startswith("Stop the task here: do not call any tool") and "## Goal" in instruction
    # Fitted beside the conversation as the provider counted it (24,000 in, 100 out) plus the instruction.
    assert 10_000 < max_tokens(summarizer) < 40_000 - 24_100 - 4096


def test_a_conversation_that_leaves_no_room_for_the_summary_is_summarised_in_a_request_of_its_own(
    tau: TauCommand,
) -> None:
    set_model(tau, context_window=40_000, max_tokens=64_000)
    set_settings(tau, {"compaction": {"keepRecentTokens": 200}})
    tau.server.add(full_turn(39_000), Turn(text="## Goal\nsummary"))
    assert tau.run(*MODEL, "-p", "first task").returncode == 0
    summarizer = tau.server.requests[1].body
    # 39,000 of 40,000 tokens counted by the provider: the cached conversation has no room left.
    assert summarizer["messages"][0]["content"] == SUMMARIZER_SYSTEM_PROMPT
    assert max_tokens(summarizer) > 30_000


def test_the_compaction_result_carries_the_summary_cost_and_the_context_left(tau: TauCommand) -> None:
    set_model(tau, context_window=4000, max_tokens=1000)
    set_settings(tau, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}})
    tau.server.add(full_turn(3500), Turn(text="## Goal\nsummary", usage=ScriptedUsage(input=1234, output=56)))
    result = tau.run(*MODEL, "--mode", "json", "-p", "first task")
    assert result.returncode == 0, result.stderr
    [end] = [line for line in events(result.stdout) if line["type"] == "compaction_end"]
    assert (end["result"]["usage"]["input"], end["result"]["usage"]["output"]) == (1234, 56)
    # what is left: the summary message and the kept reply of ~2000 characters, about 4 per token
    assert 500 < end["result"]["estimatedTokensAfter"] < end["result"]["tokensBefore"]
    [session] = tau.session_files()
    [entry] = [json.loads(line) for line in session.read_text().splitlines() if '"compaction"' in line]
    assert entry["usage"] == end["result"]["usage"]  # counted in the session's totals
    assert "estimatedTokensAfter" not in entry  # only in the result: a heuristic of the moment


@pytest.mark.parametrize("finished", [True, False], ids=["finished", "cut-off"])
def test_the_summary_request_reads_the_cache_or_writes_nothing_to_it(tau: TauCommand, finished: bool) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"].update(api="anthropic-messages", baseUrl=tau.server.url(""))
    models["providers"]["local"]["models"][0].update(contextWindow=40_000, maxTokens=8000)
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    set_settings(tau, {"compaction": {"keepRecentTokens": 200}})
    tau.server.add(
        full_turn(24_000) if finished else cut_turn(24_000, 8000, "max_tokens"), Turn(text="## Goal\nsummary")
    )
    result = tau.run(*MODEL, "-p", "first task")
    assert (result.returncode, result.stderr) == ((0, "") if finished else (1, TRUNCATED))
    turn, summarizer = (request.body for request in tau.server.requests)
    assert "cache_control" in json.dumps(turn)  # the conversation itself is cached as usual
    assert "first task" in json.dumps(summarizer["messages"])
    if finished:  # the conversation plus an instruction: read from the cache, marked as usual
        assert summarizer["system"] == turn["system"] and "cache_control" in json.dumps(
            summarizer["messages"][-1]
        )
    else:  # a one-off prompt of its own: writing it to the cache would be waste
        assert "cache_control" not in json.dumps(summarizer)


def test_an_overloaded_summariser_is_retried_with_events_in_the_json_stream(tau: TauCommand) -> None:
    set_model(tau, context_window=4000, max_tokens=1000)
    set_settings(
        tau, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}, "retry": {"baseDelayMs": 20}}
    )
    tau.server.add(
        full_turn(3500),
        Turn(fault=Fault("status", status=529, body=OVERLOADED)),
        Turn(text="## Goal\nsummary after a retry"),
    )
    result = tau.run(*MODEL, "--mode", "json", "-p", "first task")
    assert result.returncode == 0, result.stderr
    lines = events(result.stdout)
    [scheduled, attempt, finished] = retry_events(lines)
    assert scheduled["attempt"] == 1 and scheduled["maxAttempts"] == 3 and scheduled["delayMs"] == 20
    assert "verloaded" in scheduled["errorMessage"]
    assert set(scheduled) == {"type", "attempt", "maxAttempts", "delayMs", "errorMessage"}
    assert scheduled["type"] == "summarization_retry_scheduled"
    assert attempt == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "threshold",
    }
    assert finished == {"type": "summarization_retry_finished"}
    types = [line["type"] for line in lines]
    assert types.index("compaction_start") < types.index("summarization_retry_scheduled")
    assert types.index("summarization_retry_finished") < types.index("compaction_end")
    [end] = [line for line in lines if line["type"] == "compaction_end"]
    assert "summary after a retry" in end["result"]["summary"]
    assert len(tau.server.requests) == 3


def test_a_bad_request_from_the_summariser_is_not_retried(tau: TauCommand) -> None:
    set_model(tau, context_window=4000, max_tokens=1000)
    set_settings(
        tau, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}, "retry": {"baseDelayMs": 20}}
    )
    invalid = {"error": {"message": "invalid request: unknown field"}}
    tau.server.add(full_turn(3500), Turn(fault=Fault("status", status=400, body=invalid)))
    result = tau.run(*MODEL, "--mode", "json", "-p", "first task")
    lines = events(result.stdout)
    assert retry_events(lines) == []
    [end] = [line for line in lines if line["type"] == "compaction_end"]
    assert end.get("result") is None and "Auto-compaction failed" in end["errorMessage"]
    assert len(tau.server.requests) == 2
    [session] = tau.session_files()
    assert '"compaction"' not in session.read_text()


def test_retries_switched_off_leave_a_passing_failure_unretried(tau: TauCommand) -> None:
    set_model(tau, context_window=4000, max_tokens=1000)
    set_settings(
        tau, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}, "retry": {"enabled": False}}
    )
    tau.server.add(full_turn(3500), Turn(fault=Fault("status", status=529, body=OVERLOADED)))
    lines = events(tau.run(*MODEL, "--mode", "json", "-p", "first task").stdout)
    assert retry_events(lines) == []
    assert len(tau.server.requests) == 2


async def test_a_manual_compaction_retries_with_events_in_the_rpc_stream(tau: TauCommand) -> None:
    set_settings(
        tau, {"compaction": {"keepRecentTokens": 200}, "retry": {"baseDelayMs": 20, "maxRetries": 2}}
    )
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(
            Turn(text="first reply " + "x" * 2000),
            Turn(fault=Fault("status", status=529, body=OVERLOADED)),
            Turn(fault=Fault("status", status=503, body={"error": {"message": "service unavailable"}})),
            Turn(text="## Goal\nthe summary"),
        )
        await rpc.prompt("first task")
        data = await rpc.call("compact")
        assert "the summary" in data["summary"]
        retries = retry_events(rpc.lines)
    assert [line["type"] for line in retries] == [
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_scheduled",
        "summarization_retry_attempt_start",
        "summarization_retry_finished",
    ]
    assert [(r["attempt"], r["maxAttempts"], r["delayMs"]) for r in retries[::2][:2]] == [
        (1, 2, 20),
        (2, 2, 40),
    ]
    assert retries[1] == {
        "type": "summarization_retry_attempt_start",
        "source": "compaction",
        "reason": "manual",
    }


def test_model_overrides_set_the_reserve_of_the_matching_model_only(tau: TauCommand) -> None:
    set_model(tau, context_window=10_000, max_tokens=1000)
    overrides = {"local/fake-model": {"reserveTokens": 5000}, "local/other": {"reserveTokens": 100}}
    set_settings(
        tau, {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200, "modelOverrides": overrides}}
    )
    tau.server.add(full_turn(6000), Turn(text="## Goal\nsummary"))  # 6000 > 10000 - 5000, < 10000 - 1000
    result = tau.run(*MODEL, "-p", "first task")
    assert result.returncode == 0, result.stderr
    assert len(tau.server.requests) == 2
    [session] = tau.session_files()
    assert '"type":"compaction"' in session.read_text().replace(" ", "")


def test_without_a_matching_override_the_ordinary_reserve_applies(tau: TauCommand) -> None:
    set_model(tau, context_window=10_000, max_tokens=1000)
    overrides = {"local/FAKE-MODEL": {"reserveTokens": 5000}}  # keys are case-sensitive
    set_settings(tau, {"compaction": {"reserveTokens": 1000, "modelOverrides": overrides}})
    tau.server.add(full_turn(6000))
    result = tau.run(*MODEL, "-p", "first task")
    assert result.returncode == 0, result.stderr
    assert len(tau.server.requests) == 1  # no compaction


def test_a_bad_model_override_value_is_one_warning_and_the_ordinary_setting_applies(tau: TauCommand) -> None:
    set_model(tau, context_window=10_000, max_tokens=1000)
    overrides = {"local/fake-model": {"reserveTokens": -5, "keepRecentTokens": 300}}
    set_settings(tau, {"compaction": {"reserveTokens": 1000, "modelOverrides": overrides}})
    tau.server.add(full_turn(6000))
    result = tau.run(*MODEL, "-p", "first task")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "modelOverrides" in line]
    assert len(warnings) == 1, result.stderr
    assert '"compaction.modelOverrides.local/fake-model.reserveTokens"' in warnings[0] and "-5" in warnings[0]
    assert len(tau.server.requests) == 1  # the reserve stayed 1000: 6000 does not reach 9000


def test_a_model_override_that_is_not_an_object_is_one_warning(tau: TauCommand) -> None:
    set_settings(tau, {"compaction": {"modelOverrides": {"local/fake-model": 5000}}})
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "modelOverrides" in line]
    assert len(warnings) == 1 and "should be an object" in warnings[0], result.stderr

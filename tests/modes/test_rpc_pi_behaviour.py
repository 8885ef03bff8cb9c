"""Behaviours a client written for pi relies on (pi's RpcClient, pi-acp, pi's own RPC tests), through
a real ``tau --mode rpc`` (and ``--mode json``) process against the fake LLM server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn


def rpc_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *extra]


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


@pytest.fixture
async def client(tau: TauCommand) -> AsyncIterator[RpcClient]:
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        yield rpc


def kinds(lines: list[dict[str, Any]]) -> list[str]:
    """Each line's type, responses as ``response:<command>``."""
    return [f"response:{line['command']}" if line["type"] == "response" else line["type"] for line in lines]


def fast_tool_loop(tau: TauCommand, turns: int = 30) -> None:
    (tau.work / "a.txt").write_text("a\n")
    step = Turn(text="reading the file again", tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})])
    tau.server.add(*[step] * turns, Turn(text="done"))


def assistant_starts(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        line["message"]
        for line in lines
        if line["type"] == "message_start" and line["message"]["role"] == "assistant"
    ]


# -- item 1: message_start is the message as it started -----------------------------------------


async def test_every_assistant_message_start_is_empty_in_a_fast_tool_loop_over_rpc(
    tau: TauCommand, client: RpcClient
) -> None:
    fast_tool_loop(tau)
    events = await client.prompt("loop")
    starts = assistant_starts(events)
    assert len(starts) == 31
    assert [s["content"] for s in starts] == [[]] * 31


def test_every_assistant_message_start_is_empty_in_a_fast_tool_loop_in_json_mode(tau: TauCommand) -> None:
    fast_tool_loop(tau)
    result = tau.run("--mode", "json", *MODEL, "-p", "loop")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    starts = assistant_starts(lines)
    assert len(starts) == 31
    assert [s["content"] for s in starts] == [[]] * 31


# -- item 2: a command is answered before the events it causes -----------------------------------


async def test_the_prompt_response_comes_before_agent_start(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(Turn(text="hi"))
    await client.prompt("hello")
    order = kinds(client.lines)
    assert order.index("response:prompt") < order.index("agent_start")


async def test_queued_input_announces_the_queue_before_its_response(
    tau: TauCommand, client: RpcClient
) -> None:
    slow = Turn(text="slow", chunk_size=1, fault=Fault("stall", after_events=2, seconds=0.5))
    tau.server.add(slow, Turn(text="steered"), Turn(text="followed up"))
    await client.call("prompt", message="start")
    await client.wait_for("message_start")
    await client.call("steer", message="look here")
    await client.call("prompt", message="and later", streamingBehavior="followUp")
    await client.wait_for("agent_end")
    order = kinds(client.lines)
    steer_at, follow_at = (
        order.index("response:steer"),
        order.index("response:prompt", order.index("response:steer")),
    )
    assert order[steer_at - 1] == "queue_update" and order[follow_at - 1] == "queue_update"


# -- item 3: an abort mid-text ends the open block -----------------------------------------------


async def test_an_abort_mid_text_ends_the_text_block_before_the_aborted_message_end(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(
        Turn(text="partial text then more", chunk_size=4, fault=Fault("stall", after_events=3, seconds=10))
    )
    await client.call("prompt", message="go")
    seen = await client.wait_for("message_update")
    while seen[-1]["assistantMessageEvent"]["type"] != "text_delta":
        seen += await client.wait_for("message_update")
    await client.call("abort")
    await client.wait_for("agent_end")
    events = [line for line in client.lines if line["type"] != "response"]
    updates = [e["assistantMessageEvent"]["type"] for e in events if e["type"] == "message_update"]
    assert updates[-1] == "text_end"
    end = next(e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant")
    assert end["message"]["stopReason"] == "aborted"
    assert events.index(end) > max(i for i, e in enumerate(events) if e["type"] == "message_update")


# -- item 2 (continued) and item 4: model, thinking and retry commands -----------------------------


def add_thinking_model(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"].append(
        {"id": "thinker", "reasoning": True, "contextWindow": 100000, "maxTokens": 4096}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


async def test_model_and_thinking_commands_announce_the_level_before_their_response(tau: TauCommand) -> None:
    add_thinking_model(tau)
    # The switch takes the saved default (without one, the current level: off would stay off).
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "low"}))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("set_model", provider="local", modelId="thinker")
        await rpc.call("cycle_thinking_level")
        await rpc.call("cycle_model")
        order = kinds(rpc.lines)
    assert order == [
        "thinking_level_changed",
        "response:set_model",
        "thinking_level_changed",
        "response:cycle_thinking_level",
        "thinking_level_changed",
        "response:cycle_model",
    ]


async def test_abort_retry_ends_the_retry_before_its_response_and_drops_the_failed_reply(
    tau: TauCommand,
) -> None:
    settings = {"retry": {"baseDelayMs": 30000, "provider": {"maxRetries": 0}}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(fault=Fault("status", status=503, body={"error": {"message": "down for a bit"}})))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="hello")
        await rpc.wait_for("auto_retry_start")
        await rpc.call("abort_retry")
        order = kinds(rpc.lines)
        assert order.index("auto_retry_end") < order.index("response:abort_retry")
        messages = (await rpc.call("get_messages"))["messages"]
        assert [m["role"] for m in messages] == ["system", "user"]
        session_file = (await rpc.call("get_state"))["sessionFile"]
    recorded = [json.loads(line) for line in Path(session_file).read_text().splitlines()]
    replies = [
        e["message"] for e in recorded if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert [r["stopReason"] for r in replies] == ["error"]


# -- item 8: error texts name RPC fields ----------------------------------------------------------


async def test_a_prompt_while_busy_names_the_rpc_field_in_its_error(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="slow", chunk_size=1, fault=Fault("stall", after_events=2, seconds=0.5)))
    await client.call("prompt", message="start")
    await client.wait_for("message_start")
    response = await client.send({"type": "prompt", "message": "again"})
    assert response["success"] is False
    assert response["error"] == (  # pi 1.6's words (test_rpc_side_by_side_pi16 compares them)
        "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
    )


# -- item 6: absent, not null, where pi leaves a key out --------------------------------------------


async def test_a_cancelled_bash_has_no_exit_code(client: RpcClient) -> None:
    running = asyncio.ensure_future(client.call("bash", command="sleep 10"))
    await asyncio.sleep(0.5)
    await client.call("abort_bash")
    data = await asyncio.wait_for(running, 10)
    assert data["cancelled"] is True
    assert "exitCode" not in data


async def test_session_stats_without_a_session_file_leave_the_key_out(tau: TauCommand) -> None:
    async with RpcClient(rpc_command("--no-session"), cwd=str(tau.work), env=tau.env) as rpc:
        stats = await rpc.call("get_session_stats")
    assert "sessionFile" not in stats and stats["sessionId"]


async def test_the_last_assistant_text_before_any_reply_is_empty_data(client: RpcClient) -> None:
    assert await client.call("get_last_assistant_text") == {}


async def test_tool_results_without_details_have_no_details_key(tau: TauCommand, client: RpcClient) -> None:
    (tau.work / "a.txt").write_text("a\n")
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})]), Turn(text="ok"))
    events = await client.prompt("read it")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert "details" not in end["result"]
    assert all(v is not None for v in end["result"].values())
    messages = (await client.call("get_messages"))["messages"]
    [result] = [m for m in messages if m["role"] == "toolResult"]
    assert "details" not in result


async def test_a_failed_compaction_ends_without_a_result(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(
        Turn(text="first reply"), Turn(fault=Fault("status", status=400, body={"error": {"message": "bad"}}))
    )
    await client.prompt("hello")
    response = await client.send({"type": "compact"})
    assert response["success"] is False
    [end] = [line for line in client.lines if line["type"] == "compaction_end"]
    # pi 0.73 wrote "result": null; pi 1.x leaves the key out.
    assert "result" not in end and end["aborted"] is False and end["errorMessage"]


# -- item 9: session-level retries of 529 and Retry-After ----------------------------------------


def retry_settings(tau: TauCommand, **retry: Any) -> None:
    settings = {"retry": {"baseDelayMs": 10, "provider": {"maxRetries": 0}, **retry}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


async def test_a_529_is_retried_by_the_session_whatever_its_message(tau: TauCommand) -> None:
    retry_settings(tau)
    body = {"type": "error", "error": {"type": "capacity_error", "message": "Our servers are busy"}}
    tau.server.add(Turn(fault=Fault("status", status=529, body=body)), Turn(text="through"))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        events = await rpc.prompt("hello")
        while not any(e["type"] == "auto_retry_end" for e in events):
            events += await rpc.wait_for("agent_end")
    [start] = [e for e in events if e["type"] == "auto_retry_start"]
    assert start["errorMessage"] == "529 Our servers are busy"
    assert [e["success"] for e in events if e["type"] == "auto_retry_end"] == [True]


async def test_a_session_retry_waits_as_long_as_retry_after_asks(tau: TauCommand) -> None:
    retry_settings(tau)
    tau.server.add(
        Turn(fault=Fault("status", status=503, headers={"Retry-After": "1"})), Turn(text="through")
    )
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="hello")
        [start] = [e for e in await rpc.wait_for("auto_retry_start") if e["type"] == "auto_retry_start"]
        await rpc.wait_for("auto_retry_end")
    assert start["delayMs"] == 1000


async def test_a_session_retry_does_not_wait_past_the_cap_and_keeps_the_servers_error(
    tau: TauCommand,
) -> None:
    retry_settings(tau, provider={"maxRetries": 0, "maxRetryDelayMs": 5000})
    body = {"error": {"message": "quota resets tomorrow"}}
    tau.server.add(Turn(fault=Fault("status", status=429, body=body, headers={"Retry-After": "86400"})))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        events = await rpc.prompt("hello")
    assert not [e for e in events if e["type"].startswith("auto_retry")]
    [end] = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    error = end["message"]["errorMessage"]
    assert error.startswith("429 quota resets tomorrow") and "86400 s" in error
    assert len(tau.server.requests) == 1


# -- item 5: a manual compaction of a short session ----------------------------------------------


async def test_compact_after_one_short_exchange_is_refused_as_pi_16_refuses_it(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="hi there"))
    await client.prompt("hello")
    entries = (await client.call("get_entries"))["entries"]
    response = await client.send({"type": "compact"})
    # pi 1.6's own lines, run side by side on the same exchange.
    assert {k: v for k, v in response.items() if k != "id"} == {
        "type": "response",
        "command": "compact",
        "success": False,
        "error": "Nothing to compact (session too small)",
    }
    assert [line for line in client.lines if line["type"].startswith("compaction_")] == [
        {"type": "compaction_start", "reason": "manual"},
        {
            "type": "compaction_end",
            "reason": "manual",
            "aborted": False,
            "willRetry": False,
            "errorMessage": "Compaction failed: Nothing to compact (session too small)",
        },
    ]
    assert len(tau.server.requests) == 1  # no summary request
    assert (await client.call("get_entries"))["entries"] == entries  # no compaction entry

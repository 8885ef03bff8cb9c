"""pi 1.6's event stream (docs/json.md), ``--mode json`` and ``--mode rpc``, side by side with tau:
the same scripted exchange through each (its own fake server), then the events' types, order and
keys compared, with the values that differ by nature (ids, times, durations, the prompt's prose)
left out. A tool call, a retry after a 500 and after an overloaded answer, an aborted run and an
automatic compaction."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rpc_side_by_side import Side, add_turns, differences, kinds, line_shape, streamed, two_sides

from tau.testing.fake_llm import Fault, ScriptedToolCall, ScriptedUsage, Turn

JsonDict = dict[str, Any]


def assert_same_stream(ours: list[JsonDict], theirs: list[JsonDict]) -> None:
    ours, theirs = streamed(ours), streamed(theirs)
    assert kinds(ours) == kinds(theirs)
    found = [
        f"line {i} ({kinds([a])[0]}): {d}\n  tau: {str(a)[:300]}\n  pi:  {str(b)[:300]}"
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
        for d in differences(line_shape(a), line_shape(b))
    ]
    assert not found, "\n".join(found)


async def json_runs(tau: Side, pi: Side, *args: str) -> tuple[list[JsonDict], list[JsonDict]]:
    ours, theirs = await asyncio.gather(
        asyncio.to_thread(tau.run_json, *args), asyncio.to_thread(pi.run_json, *args)
    )
    return ours, theirs


async def test_a_tool_call_streams_pi16s_events(tmp_path: Path) -> None:
    async with two_sides(tmp_path, files={"a.txt": "a\n"}, rpc=False) as (tau, pi):
        add_turns(
            tau,
            pi,
            Turn(text="reading", tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})]),
            Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]),
            Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo oops; exit 3"})]),
            Turn(
                tool_calls=[
                    ScriptedToolCall("edit", {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]})
                ]
            ),
            Turn(tool_calls=[ScriptedToolCall("write", {"path": "b.txt", "content": "b\n"})]),
            Turn(tool_calls=[ScriptedToolCall("read", {"path": "missing.txt"})]),
            Turn(text="done", usage=ScriptedUsage(input=50, output=10)),
        )
        ours, theirs = await json_runs(tau, pi, "-p", "read a.txt")
    assert theirs[0]["type"] == "session" and set(ours[0]) == set(theirs[0])  # the header
    assert_same_stream(ours, theirs)


async def test_retries_after_a_500_and_an_overloaded_answer_stream_pi16s_events(tmp_path: Path) -> None:
    settings = {"retry": {"baseDelayMs": 10, "provider": {"maxRetries": 0}}}
    async with two_sides(tmp_path, settings=settings, rpc=False) as (tau, pi):
        add_turns(
            tau,
            pi,
            Turn(fault=Fault("status", status=500, body={"error": {"message": "internal error"}})),
            Turn(fault=Fault("status", status=529, body={"error": {"message": "Overloaded"}})),
            Turn(text="through"),
        )
        ours, theirs = await json_runs(tau, pi, "-p", "hello")
    assert_same_stream(ours, theirs)
    retries = [line for line in streamed(ours) if line["type"].startswith("auto_retry")]
    assert [line["type"] for line in retries] == ["auto_retry_start", "auto_retry_start", "auto_retry_end"]


async def test_an_aborted_run_streams_pi16s_events(tmp_path: Path) -> None:
    async with two_sides(tmp_path) as (tau, pi):
        add_turns(
            tau,
            pi,
            Turn(text="slow slow slow", chunk_size=2, fault=Fault("stall", after_events=3, seconds=10)),
        )

        async def run(side: Side) -> list[JsonDict]:
            await side.rpc.call("prompt", message="go")
            await side.rpc.wait_for("message_update")
            await side.rpc.call("abort")
            await asyncio.sleep(0.3)  # nothing more may come
            return side.rpc.lines

        ours, theirs = await asyncio.gather(run(tau), run(pi))
    assert_same_stream(ours, theirs)
    assert ours[-2]["type"] == "agent_settled" and ours[-2]["aborted"] is True


def small_window(models: JsonDict) -> None:
    models["providers"]["local"]["models"][0]["contextWindow"] = 4000


async def test_an_automatic_compaction_streams_pi16s_events(tmp_path: Path) -> None:
    settings = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}}
    async with two_sides(tmp_path, settings=settings, models=small_window, rpc=False) as (tau, pi):
        add_turns(
            tau,
            pi,
            Turn(text="first reply " + "x" * 2000, usage=ScriptedUsage(input=3500, output=600)),
            Turn(text="## Goal\nsummary"),
        )
        ours, theirs = await json_runs(tau, pi, "-p", "a long task")
    assert_same_stream(ours, theirs)
    assert [line["type"] for line in ours][-3:] == ["compaction_start", "compaction_end", "agent_settled"]


async def test_an_overflow_compaction_and_its_retry_stream_pi16s_events(tmp_path: Path) -> None:
    settings = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}}
    async with two_sides(tmp_path, settings=settings, models=small_window, rpc=False) as (tau, pi):
        add_turns(tau, pi, Turn(text="setup done " + "y" * 2000))
        await json_runs(tau, pi, "-p", "set things up")
        too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
        add_turns(
            tau,
            pi,
            Turn(fault=Fault("status", status=400, body=too_long)),
            Turn(text="## Goal\ncompacted"),
            Turn(text="recovered"),
        )
        ours, theirs = await json_runs(tau, pi, "-c", "-p", "now the real work")
    assert_same_stream(ours, theirs)

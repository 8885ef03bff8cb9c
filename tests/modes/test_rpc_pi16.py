"""pi 1.x's RPC and JSON protocol (pi 1.6.0), through a real ``tau --mode rpc`` / ``--mode json``
process against the fake LLM server. The shapes were taken from pi 1.6 run side by side on the same
scripted exchanges; ``fixtures/pi16_rpc_tool_exchange.jsonl`` is pi 1.6's own output for one of them
(the prose of its system message replaced by placeholders)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.modes.rpc_client import RpcClient, RpcError
from tau.testing.fake_llm import Fault, ScriptedToolCall, ScriptedUsage, Turn

PI16_TOOL_EXCHANGE = Path(__file__).parent / "fixtures" / "pi16_rpc_tool_exchange.jsonl"

INPUT_HANDLER = """
def setup(tau):
    @tau.on("input")
    def swallow(event, ctx):
        if event.text.startswith("handled:"):
            return {"action": "handled"}
"""

MARKER = """
def setup(tau):
    @tau.on("session_start")
    def at_start(event, ctx):
        tau.append_entry("note", {"at": "start"})

    @tau.register_command("mark", description="Add a note")
    async def mark(args, ctx):
        tau.append_entry("note", {"at": args})
"""


def rpc_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *extra]


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


@pytest.fixture
async def client(tau: TauCommand) -> AsyncIterator[RpcClient]:
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        yield rpc


def stalled(text: str, seconds: float = 10) -> Turn:
    return Turn(text=text, chunk_size=2, fault=Fault("stall", after_events=3, seconds=seconds))


def shape(line: dict[str, Any]) -> tuple[Any, ...]:
    """What the protocol fixes about a line: its kind and keys, and a streamed event's kind and keys."""
    update = line.get("assistantMessageEvent")
    return (
        line["type"],
        line.get("command"),
        tuple(sorted(line)),
        None if update is None else (update["type"], tuple(sorted(update))),
    )


# -- the streamed reply ---------------------------------------------------------------------------


async def test_a_tool_exchange_has_pi16s_lines_and_keys(tau: TauCommand, client: RpcClient) -> None:
    (tau.work / "a.txt").write_text("a\n")
    tau.server.add(
        Turn(text="reading", tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})]), Turn(text="done")
    )
    await client.call("prompt", message="go")
    await client.wait_for("agent_settled")
    pi = [json.loads(line) for line in PI16_TOOL_EXCHANGE.read_text().splitlines()]
    # pi's openai-completions parser also streams an empty first argument delta; that is the
    # provider's business, not the protocol's.
    pi = [line for line in pi if line.get("assistantMessageEvent", {}).get("delta", None) != ""]
    assert [shape(line) for line in client.lines] == [shape(line) for line in pi]
    # The streamed pieces themselves, byte for byte: no merged deltas, the same starts and ends.
    assert streamed(client.lines) == streamed(pi)


def streamed(lines: list[dict[str, Any]]) -> list[str]:
    """Each message_update's event as JSON (keys in their order), the tool call's id left out (the
    fake server derives it from the request, and each tool sends its own system prompt)."""
    events = [line["assistantMessageEvent"] for line in lines if line["type"] == "message_update"]
    text = [json.dumps(event) for event in events]
    ids = {event.get("id") for event in events} | {event.get("toolCall", {}).get("id") for event in events}
    for call_id in ids - {None}:
        text = [piece.replace(json.dumps(call_id), '"<id>"') for piece in text]
    return text


async def test_the_recorded_system_message_is_shown_once_as_pi16_shows_it(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    first = await client.prompt("first")
    kinds = [(e["type"], e.get("message", {}).get("role")) for e in first]
    assert kinds[:6] == [
        ("agent_start", None), ("turn_start", None), ("message_start", "system"),
        ("message_end", "system"), ("message_start", "user"), ("message_end", "user"),
    ]  # fmt: skip
    [end] = [e for e in first if e["type"] == "agent_end"]
    assert [m["role"] for m in end["messages"]] == ["system", "user", "assistant"]
    entries = (await client.call("get_entries"))["entries"]
    assert next(e["message"] for e in entries if e["type"] == "message") == first[2]["message"]
    second = await client.prompt("second")  # same prompt and tools: nothing new is recorded
    assert all(e.get("message", {}).get("role") != "system" for e in second)
    [end] = [e for e in second if e["type"] == "agent_end"]
    assert [m["role"] for m in end["messages"]] == ["user", "assistant"]


async def test_get_messages_starts_with_the_recorded_system_message_as_pi16s_does(
    tau: TauCommand, client: RpcClient
) -> None:
    assert (await client.call("get_messages"))["messages"] == []  # nothing recorded yet, as in pi 1.6
    tau.server.add(Turn(text="one"), Turn(text="two"))
    first = await client.prompt("first")
    await client.prompt("second")
    [end] = [e for e in first if e["type"] == "agent_end"]
    messages = (await client.call("get_messages"))["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert messages[0] == end["messages"][0]


def message_fields(line: dict[str, Any]) -> tuple[Any, ...] | None:
    """An assistant message's field names in order (with its usage's and cost's) and its stop reason."""
    message = line.get("message")
    usage = line.get("usage") if message is None else message.get("usage")
    if usage is None:
        return None
    keys = (list(usage), list(usage["cost"]))
    if message is None:
        return (line["type"], keys)
    return (line["type"], list(message), keys, message["stopReason"])


async def test_assistant_messages_have_pi16s_fields_in_pi16s_order(
    tau: TauCommand, client: RpcClient
) -> None:
    (tau.work / "a.txt").write_text("a\n")
    tau.server.add(
        Turn(text="reading", tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})]), Turn(text="done")
    )
    await client.call("prompt", message="go")
    await client.wait_for("agent_settled")
    pi = [json.loads(line) for line in PI16_TOOL_EXCHANGE.read_text().splitlines()]
    pi = [line for line in pi if line.get("assistantMessageEvent", {}).get("delta", None) != ""]
    ours = [fields for fields in map(message_fields, client.lines) if fields is not None]
    assert ours == [fields for fields in map(message_fields, pi) if fields is not None]
    start = ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]
    assert (ours[0][0], ours[0][1], ours[0][3]) == ("message_start", start, "pending")


def test_a_reply_records_its_reasoning_tokens_duration_and_thinking_level(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    tau.server.add(Turn(text="hi", thinking="hmm", usage=ScriptedUsage(input=100, output=20, reasoning=7)))
    result = tau.run(*MODEL, "--thinking", "high", "--mode", "json", "-p", "go")
    assert result.returncode == 0, result.stderr
    [end] = [
        e
        for e in map(json.loads, result.stdout.splitlines())
        if e["type"] == "message_end" and e["message"]["role"] == "assistant"
    ]
    message = end["message"]
    assert (message["usage"]["reasoning"], message["usage"]["cost"]["totalFromProvider"]) == (7, False)
    assert (message["rawStopReason"], message["thinkingLevel"]) == ("stop", "high")
    assert isinstance(message["durationMs"], int) and 0 <= message["durationMs"] < 10_000
    [session] = tau.session_files()
    saved = [json.loads(line) for line in session.read_text().splitlines()][-1]
    assert saved["message"] == message  # the session file keeps the same fields


async def test_each_delta_is_its_own_message_update_with_the_usage_so_far(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="hello there friend", chunk_size=5))
    events = await client.prompt("hi")
    updates = [e for e in events if e["type"] == "message_update"]
    assert [u["assistantMessageEvent"].get("delta") for u in updates] == [
        None,
        "hello",
        " ther",
        "e fri",
        "end",
        None,
    ]
    assert all(set(u) == {"type", "usage", "assistantMessageEvent"} for u in updates)
    end = next(e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant")
    assert updates[-1]["usage"] == end["message"]["usage"]


async def test_toolcall_start_names_the_call_and_tool_execution_end_its_duration(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 0.2"})]), Turn(text="done"))
    events = await client.prompt("go")
    [start] = [
        e["assistantMessageEvent"]
        for e in events
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "toolcall_start"
    ]
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert (start["id"], start["toolName"]) == (end["toolCallId"], "bash")
    assert 200 <= end["durationMs"] < 5000


async def test_an_unknown_tool_has_no_duration(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("no_such_tool", {})]), Turn(text="done"))
    events = await client.prompt("go")
    [end] = [e for e in events if e["type"] == "tool_execution_end"]
    assert end["isError"] is True and "durationMs" not in end


# -- agent_settled and willRetry ------------------------------------------------------------------


async def test_agent_settled_comes_once_after_the_retries(tau: TauCommand) -> None:
    settings = {"retry": {"baseDelayMs": 10, "provider": {"maxRetries": 0}}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(fault=Fault("status", status=503, body="unavailable")), Turn(text="through"))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        events = await rpc.prompt("hello")
    kinds = [
        e["type"]
        for e in events
        if e["type"] in ("agent_end", "auto_retry_start", "auto_retry_end", "agent_settled")
    ]
    assert kinds == ["agent_end", "auto_retry_start", "auto_retry_end", "agent_end", "agent_settled"]
    assert [e["willRetry"] for e in events if e["type"] == "agent_end"] == [True, False]
    assert events[-1] == {"type": "agent_settled", "aborted": False}


async def test_an_aborted_run_settles_as_aborted(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(stalled("slow slow slow"))
    await client.call("prompt", message="go")
    await client.wait_for("message_update")
    await client.call("abort")  # answered once the run has settled, as in pi
    settled = [line for line in client.lines if line["type"] == "agent_settled"]
    assert settled == [{"type": "agent_settled", "aborted": True}]


async def test_an_abort_while_a_retry_waits_settles_as_aborted(tau: TauCommand) -> None:
    settings = {"retry": {"baseDelayMs": 20000, "provider": {"maxRetries": 0}}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(fault=Fault("status", status=503, body="unavailable")))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="hello")
        await rpc.wait_for("auto_retry_start")
        await rpc.call("abort")
        events = await rpc.wait_for("agent_settled")
    assert events[-1] == {"type": "agent_settled", "aborted": True}


def test_json_mode_ends_with_agent_settled(tau: TauCommand) -> None:
    tau.server.add(Turn(text="hi"))
    result = tau.run("--mode", "json", *MODEL, "-p", "hello")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-2]["type"] == "agent_end" and lines[-2]["willRetry"] is False
    assert lines[-1] == {"type": "agent_settled", "aborted": False}


# -- input dispositions and the queue --------------------------------------------------------------


async def test_queued_input_answers_queued_and_clear_queue_hands_the_texts_back(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(stalled("slow slow slow", seconds=1), Turn(text="never needed"))
    assert await client.call("prompt", message="go") == {"disposition": "started"}
    await client.wait_for("message_update")
    assert await client.call("steer", message="s1") == {"disposition": "queued"}
    assert await client.call("follow_up", message="f1") == {"disposition": "queued"}
    assert await client.call("prompt", message="f2", streamingBehavior="followUp") == {
        "disposition": "queued"
    }
    assert await client.call("clear_queue") == {"steering": ["s1"], "followUp": ["f1", "f2"]}
    await client.wait_for("agent_settled")
    answer = next(i for i, e in enumerate(client.lines) if e.get("command") == "clear_queue")
    assert client.lines[answer - 1] == {"type": "queue_update", "steering": [], "followUp": []}
    users = [e for e in client.lines if e["type"] == "message_start" and e["message"]["role"] == "user"]
    assert len(users) == 1  # the cleared messages were not sent


# pi 1.6's lines for the exchange below (message_update left out), recorded side by side: the
# queued steer, then the follow-up, each run as a turn of the same run, and one agent_settled.
PI16_QUEUED_RUN = [
    "response:prompt", "agent_start", "turn_start", "message_start:system", "message_end:system",
    "message_start:user", "message_end:user", "message_start:assistant", "queue_update", "response:follow_up",
    "queue_update", "response:steer", "message_end:assistant", "turn_end",
    "turn_start", "queue_update", "message_start:user", "message_end:user", "message_start:assistant",
    "message_end:assistant", "turn_end",
    "turn_start", "queue_update", "message_start:user", "message_end:user", "message_start:assistant",
    "message_end:assistant", "turn_end", "agent_end", "agent_settled",
]  # fmt: skip


async def test_queued_steer_and_follow_up_run_before_the_one_agent_settled_as_in_pi16(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(stalled("slow slow slow", seconds=1), Turn(text="steered"), Turn(text="followed"))
    await client.call("prompt", message="go")
    await client.wait_for("message_update")
    await client.call("follow_up", message="f1")
    await client.call("steer", message="s1")
    await client.wait_for("agent_settled")
    await asyncio.sleep(0.2)  # nothing may follow agent_settled
    lines = []
    for line in client.lines:
        kind = line["type"]
        if kind in ("message_start", "message_end"):
            kind += ":" + line["message"]["role"]
        elif kind == "response":
            kind += ":" + line["command"]
        if kind != "message_update":
            lines.append(kind)
    assert lines == PI16_QUEUED_RUN
    users = [line["message"] for line in client.lines if line["type"] == "message_end"]
    assert [m["content"][0]["text"] for m in users if m["role"] == "user"] == ["go", "s1", "f1"]


async def test_input_an_extension_handles_answers_handled_and_starts_no_run(tau: TauCommand) -> None:
    extension = tau.work / "swallow.py"
    extension.write_text(INPUT_HANDLER)
    tau.server.add(stalled("slow slow slow", seconds=1))
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        assert await rpc.call("prompt", message="handled: idle") == {"disposition": "handled"}
        assert await rpc.call("prompt", message="go") == {"disposition": "started"}
        await rpc.wait_for("message_update")
        assert await rpc.call("steer", message="handled: steer") == {"disposition": "handled"}
        assert await rpc.call("follow_up", message="handled: later") == {"disposition": "handled"}
        await rpc.wait_for("agent_settled")
        assert [line["type"] for line in rpc.lines].count("agent_start") == 1
        assert not any(line["type"] == "queue_update" for line in rpc.lines)


# -- commands --------------------------------------------------------------------------------------


async def test_available_thinking_levels_are_off_for_a_model_without_reasoning(client: RpcClient) -> None:
    assert await client.call("get_available_thinking_levels") == {"levels": ["off"]}


async def test_available_thinking_levels_of_a_reasoning_model_are_pi16s(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        levels = await rpc.call("get_available_thinking_levels")
    assert levels == {"levels": ["off", "minimal", "low", "medium", "high"]}


async def test_get_entries_pages_on_from_an_entry_and_get_tree_nests_them(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    await client.prompt("first")
    everything = await client.call("get_entries")
    entries, leaf = everything["entries"], everything["leafId"]
    assert [e["type"] for e in entries] == [
        "model_change",
        "thinking_level_change",
        *["message"] * 3,
    ]  # system, user, assistant
    assert leaf == entries[-1]["id"]
    await client.prompt("second")
    later = await client.call("get_entries", since=leaf)
    assert [e["message"]["role"] for e in later["entries"]] == ["user", "assistant"]
    assert later["entries"][0]["parentId"] == leaf
    tree = await client.call("get_tree")
    assert tree["leafId"] == later["leafId"]
    [root] = tree["tree"]
    chain = [root]
    while chain[-1]["children"]:
        [child] = chain[-1]["children"]
        chain.append(child)
    assert [node["entry"]["id"] for node in chain] == [e["id"] for e in entries + later["entries"]]
    with pytest.raises(RpcError, match="Entry not found: nope"):
        await client.call("get_entries", since="nope")


async def test_bash_streams_its_output_with_the_command_id_and_can_stay_out_of_context(
    tau: TauCommand, client: RpcClient
) -> None:
    response = await client.send(
        {"id": "sh-1", "type": "bash", "command": "echo secret-output", "excludeFromContext": True}
    )
    assert response["data"]["output"] == "secret-output\n"
    updates = [line for line in client.lines if line["type"] == "bash_execution_update"]
    assert updates and all(u["id"] == "sh-1" for u in updates)
    assert "".join(u["delta"] for u in updates) == "secret-output\n"
    assert client.lines.index(updates[-1]) < client.lines.index(response)
    entries = (await client.call("get_entries"))["entries"]
    assert (
        entries[-1]["message"]["role"] == "bashExecution"
        and entries[-1]["message"]["excludeFromContext"] is True
    )
    tau.server.add(Turn(text="ok"))
    await client.prompt("what did it say?")
    assert "secret-output" not in json.dumps(tau.server.last_request.body["messages"])


async def test_a_session_name_is_announced_before_its_response(client: RpcClient) -> None:
    await client.call("set_session_name", name="  named  ")
    kinds = [line["type"] for line in client.lines]
    assert client.lines[kinds.index("session_info_changed")] == {
        "type": "session_info_changed",
        "name": "named",
    }
    assert kinds.index("session_info_changed") < kinds.index("response")


async def test_entries_an_extension_appends_are_announced_from_session_start_on(tau: TauCommand) -> None:
    extension = tau.work / "marker.py"
    extension.write_text(MARKER)
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        assert await rpc.call("prompt", message="/mark here") == {"disposition": "handled"}
        appended = [line for line in rpc.lines if line["type"] == "entry_appended"]
        assert [(e["entry"]["type"], e["entry"]["customType"], e["entry"]["data"]) for e in appended] == [
            ("custom", "note", {"at": "start"}),
            ("custom", "note", {"at": "here"}),
        ]
        kinds = [line["type"] for line in rpc.lines]
        assert kinds.index("response") > kinds.index("entry_appended")
        ids = [e["id"] for e in (await rpc.call("get_entries"))["entries"]]
        assert [e["entry"]["id"] for e in appended] == ids[-2:]


def test_json_mode_announces_an_entry_appended_at_session_start(tau: TauCommand) -> None:
    extension = tau.work / "marker.py"
    extension.write_text(MARKER)
    tau.server.add(Turn(text="hi"))
    result = tau.run("--mode", "json", *MODEL, "-e", str(extension), "-p", "hello")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    [appended] = [line for line in lines if line["type"] == "entry_appended"]
    assert appended["entry"]["data"] == {"at": "start"}
    assert [line["type"] for line in lines].index("entry_appended") < [line["type"] for line in lines].index(
        "agent_start"
    )


async def test_the_last_assistant_text_skips_a_failed_reply_without_text(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="  the answer \n"), Turn(fault=Fault("status", status=400, body="bad request")))
    await client.prompt("first")
    await client.prompt("second")
    assert await client.call("get_last_assistant_text") == {"text": "the answer"}


async def test_abort_stops_a_manual_compaction(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"), stalled("a summary that never finishes"))
    await client.prompt("x" * 100_000)  # older than keepRecentTokens keeps: there is something to summarise
    await client.prompt("y" * 100_000)
    compact = asyncio.ensure_future(client.send({"id": "c", "type": "compact"}))
    await client.wait_for("compaction_start")
    await client.call("abort")
    response = await compact
    assert response["success"] is False
    [end] = [line for line in client.lines if line["type"] == "compaction_end"]
    assert end["aborted"] is True and "result" not in end


async def test_a_new_sessions_start_entries_come_before_the_new_session_response(tau: TauCommand) -> None:
    extension = tau.work / "marker.py"
    extension.write_text(MARKER)
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("get_state")
        assert await rpc.call("new_session") == {"cancelled": False}
        answer = next(i for i, line in enumerate(rpc.lines) if line.get("command") == "new_session")
        before = rpc.lines[answer - 1]
        assert before["type"] == "entry_appended" and before["entry"]["data"] == {"at": "start"}
        entries = (await rpc.call("get_entries"))["entries"]
    assert before["entry"]["id"] in [e["id"] for e in entries]  # the new session's, not the old one's


def small_window(tau: TauCommand) -> None:
    """A 4000-token window with 1000 reserved: a reply reporting 4100 tokens crosses the threshold."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["contextWindow"] = 4000
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    settings = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 200}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


def test_agent_settled_follows_a_threshold_compaction(tau: TauCommand) -> None:
    small_window(tau)
    tau.server.add(
        Turn(text="first reply " + "x" * 2000, usage=ScriptedUsage(input=3500, output=600)),
        Turn(text="## Goal\\nsummary"),
    )
    result = tau.run("--mode", "json", *MODEL, "-p", "a long task")
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert kinds[-4:] == ["agent_end", "compaction_start", "compaction_end", "agent_settled"]


def test_agent_settled_follows_the_run_an_overflow_compaction_continues(tau: TauCommand) -> None:
    small_window(tau)
    tau.server.add(Turn(text="setup done " + "y" * 2000))
    assert tau.run(*MODEL, "-p", "set things up").returncode == 0
    too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
    tau.server.add(
        Turn(fault=Fault("status", status=400, body=too_long)),
        Turn(text="## Goal\\ncompacted"),
        Turn(text="recovered"),
    )
    result = tau.run("--mode", "json", *MODEL, "-c", "-p", "now the real work")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds.count("agent_settled") == 1 and kinds[-2:] == ["agent_end", "agent_settled"]
    [end] = [line for line in lines if line["type"] == "compaction_end"]
    assert end["reason"] == "overflow" and end["willRetry"] is True
    assert kinds.index("compaction_end") < len(kinds) - 1 - kinds[::-1].index("agent_start")

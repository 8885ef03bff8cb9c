"""Compaction between the turns of one run over RPC (issue #32, pi 1.6's compaction before the
next assistant response): the events a client sees, the entry written, the requests sent."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import ScriptedToolCall, ScriptedUsage, Turn


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


async def test_a_run_past_the_threshold_reports_its_compaction_between_two_turns(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-tiny", "contextWindow": 3000, "maxTokens": 256}
    )
    path.write_text(json.dumps(models))
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}})
    )
    tau.server.add(
        Turn(text="Ready.", usage=ScriptedUsage(input=200)),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo one"})], usage=ScriptedUsage(input=2400)),
        Turn(text="## Goal\nCount the notes."),
        Turn(text="One note.", usage=ScriptedUsage(input=300)),
    )
    command = [sys.executable, "-m", "tau", "--mode", "rpc", "--provider", "local", "--model", "fake-tiny"]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.prompt("Get ready.")
        events = await rpc.prompt("Count the notes.")
        state = await rpc.call("get_state")
        messages = (await rpc.call("get_messages"))["messages"]

    kinds = [e["type"] for e in events if e["type"] not in ("message_update", "message_start")]
    start = kinds.index("compaction_start")
    assert kinds[start - 2 : start + 4] == [
        "message_end",  # the tool result
        "turn_end",
        "compaction_start",
        "compaction_end",
        "turn_start",
        "message_end",
    ]
    assert kinds.count("compaction_start") == 1 and kinds[-2:] == ["agent_end", "agent_settled"]
    [begin] = [e for e in events if e["type"] == "compaction_start"]
    [end] = [e for e in events if e["type"] == "compaction_end"]
    assert begin == {"type": "compaction_start", "reason": "threshold"}
    assert (end["reason"], end["aborted"], end["willRetry"]) == ("threshold", False, False)
    assert end["result"]["summary"] == "## Goal\nCount the notes." and end["result"]["tokensBefore"] > 2000
    assert state["isCompacting"] is False

    records = [json.loads(line) for line in Path(state["sessionFile"]).read_text().splitlines()]
    kinds_written = [r["type"] if r["type"] != "message" else r["message"]["role"] for r in records]
    assert kinds_written[-5:] == ["user", "assistant", "toolResult", "compaction", "assistant"]
    compaction = records[-2]
    assert compaction["fromHook"] is False
    # The request after the compaction: the summary, then the run's own turn, nothing older.
    last = json.dumps(tau.server.requests[-1].body["messages"])
    assert "Count the notes." in last and "Get ready." not in last and "echo one" in last
    assert [m["role"] for m in messages if m["role"] != "system"] == [
        "compactionSummary",
        "user",
        "assistant",
        "toolResult",
        "assistant",
    ]

"""A reply cut off below the model's output limit over RPC (issue #32, pi 1.6's recovery of a
truncated response): the events a client sees, the entries written, what the retried request and
a virtual model's router are given."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import ScriptedUsage, Turn

SUMMARY = "## Goal\nWrite the essay."
READY = Turn(text="Ready to write the essay. " * 8, usage=ScriptedUsage(input=200))


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def cut(text: str = "The essay begins") -> Turn:
    """Cut off at 100 output tokens, below fake-model's limit of 4096."""
    return Turn(text=text, stop_reason="length", usage=ScriptedUsage(input=300, output=100))


def settings(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))


def records(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


async def test_a_cut_reply_leaves_the_context_and_the_turn_is_compacted_and_retried(tau: TauCommand) -> None:
    settings(tau)
    tau.server.add(READY, cut(), Turn(text=SUMMARY), Turn(text="The essay."))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", "--provider", "local", "--model", "fake-model"]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.prompt("Get ready.")
        events = await rpc.prompt("Write.")
        state = await rpc.call("get_state")
        messages = (await rpc.call("get_messages"))["messages"]

    kinds = [e["type"] for e in events if e["type"] not in ("message_update", "message_start")]
    edit = kinds.index("entry_appended")
    assert kinds[edit - 1 : edit + 5] == [
        "agent_end",
        "entry_appended",
        "compaction_start",
        "compaction_end",
        "agent_start",
        "turn_start",
    ]
    [appended] = [e for e in events if e["type"] == "entry_appended"]
    [begin] = [e for e in events if e["type"] == "compaction_start"]
    [end] = [e for e in events if e["type"] == "compaction_end"]
    assert begin == {"type": "compaction_start", "reason": "overflow"}
    assert (end["reason"], end["aborted"], end["willRetry"], end.get("errorMessage")) == (
        "overflow",
        False,
        True,
        None,
    )
    assert kinds.count("agent_end") == 2 and kinds[-1] == "agent_settled"

    written = records(state["sessionFile"])
    by_id = {r.get("id"): r for r in written}
    [context_edit] = [r for r in written if r["type"] == "context_edit"]
    # As pi 1.6 writes it: the cut reply as the target, null as the replacement, nothing else.
    assert sorted(context_edit) == ["id", "parentId", "replacement", "targetId", "timestamp", "type"]
    assert context_edit == appended["entry"]
    assert context_edit["replacement"] is None
    target = by_id[context_edit["targetId"]]["message"]
    assert (target["role"], target["stopReason"], target["content"][0]["text"]) == (
        "assistant",
        "length",
        "The essay begins",
    )
    kinds_written = [r["type"] if r["type"] != "message" else r["message"]["role"] for r in written]
    assert kinds_written[-5:] == ["user", "assistant", "context_edit", "compaction", "assistant"]
    # Neither the summary request nor the retried request carries the cut reply.
    summary_request, retried = (json.dumps(r.body["messages"]) for r in tau.server.requests[2:])
    assert "The essay begins" not in summary_request and "The essay begins" not in retried
    assert "Write." in retried
    assert [m["role"] for m in messages if m["role"] != "system"] == [
        "compactionSummary",
        "assistant",
        "user",
        "assistant",
    ]
    assert messages[-1]["content"][0]["text"] == "The essay."


ROUTER = """
from tau.extensions import ModelRoute, VirtualModelDefinition


def setup(tau):
    def route(request, ctx):
        if request.reason == "direct":
            return ModelRoute(ctx.model_registry.find("local", "fake-model"), "off")
        failed = request.failed.message if request.failed else None
        seen = [request.reason, failed and [failed.stop_reason, failed.content[0].text]]
        return ModelRoute(ctx.model_registry.find("local", "fake-model"), "off", state=[*(request.state or []), seen])

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="recorder", name="Recorder", route=route, context_window=50000,
    ))
"""


def test_the_retry_after_a_cut_reply_is_routed_as_a_retry_told_of_the_cut_reply(tau: TauCommand) -> None:
    settings(tau)
    extension = tau.work / "router.py"
    extension.write_text(ROUTER)
    tau.server.add(READY, cut(), Turn(text=SUMMARY), Turn(text="The essay."))
    routed = ["-e", str(extension), "--model", "router/recorder"]
    assert tau.run(*routed, "-p", "Get ready.").returncode == 0
    result = tau.run("-e", str(extension), "-c", "-p", "Write.")
    assert (result.returncode, result.stdout) == (0, "The essay.\n"), result.stderr
    [session] = tau.session_files()
    states = [r["data"]["state"] for r in records(str(session)) if r["type"] == "custom"]
    assert states[-1] == [["user", None], ["user", None], ["retry", ["length", "The essay begins"]]]

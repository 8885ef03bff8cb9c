"""A virtual model through RPC (issue #32 §5): ``set_model`` selects it, each request is routed
with the reason pi 1.6 gives (``user``, ``continuation``, ``retry``, ``direct``), and only
physical models reach the fake server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Fault, ScriptedToolCall, ScriptedUsage, Turn

# Each request of the agent loop goes to fake-model and adds its reason (and what the router was
# told about the previous and failed requests) to the router state; a direct one goes to
# fake-small, which nothing else uses.
RECORDER = """
from tau.extensions import ModelRoute, VirtualModelDefinition


def setup(tau):
    def route(request, ctx):
        if request.reason == "direct":
            assert request.state is None
            return ModelRoute(ctx.model_registry.find("local", "fake-small"), "off", state=["ignored"])
        seen = {
            "reason": request.reason,
            "level": request.thinking_level,
            "previous": request.previous.model.id if request.previous else None,
            "failed": request.failed.message.error_message if request.failed else None,
        }
        return ModelRoute(ctx.model_registry.find("local", "fake-model"), "off", state=[*(request.state or []), seen])

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="recorder", name="Recorder", route=route, thinking_levels=("off", "high"),
        context_window=50000,
    ))
"""


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def add_small_model(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-small", "contextWindow": 100000, "maxTokens": 4096}
    )
    path.write_text(json.dumps(models))


def entries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


async def test_set_model_selects_the_virtual_model_and_each_request_is_routed_with_its_reason(
    tau: TauCommand,
) -> None:
    add_small_model(tau)
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"retry": {"baseDelayMs": 10}, "compaction": {"keepRecentTokens": 1}})
    )
    extension = tau.work / "recorder.py"
    extension.write_text(RECORDER)
    command = [sys.executable, "-m", "tau", "--mode", "rpc", "--provider", "local", "--model", "fake-model"]
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]),
        Turn(fault=Fault("status", status=503, body="unavailable")),
        Turn(text="through"),
        Turn(text="The summary."),
    )
    async with RpcClient([*command, "-e", str(extension)], cwd=str(tau.work), env=tau.env) as rpc:
        model = await rpc.call("set_model", provider="router", modelId="recorder")
        assert (model["provider"], model["id"], model["api"]) == ("router", "recorder", "pi-virtual")
        await rpc.call("set_thinking_level", level="high")
        state = await rpc.call("get_state")
        assert (state["model"]["id"], state["thinkingLevel"]) == ("recorder", "high")
        # Before a response, the limits the virtual model declares; then the answering model's.
        stats = await rpc.call("get_session_stats")
        assert stats["contextUsage"]["contextWindow"] == 50000

        await rpc.prompt("run it")
        stats = await rpc.call("get_session_stats")
        assert stats["contextUsage"]["contextWindow"] == 100000
        await rpc.call("compact")
        state = await rpc.call("get_state")
        assert state["model"]["id"] == "recorder"
        session_file = state["sessionFile"]

    assert [r.body["model"] for r in tau.server.requests] == ["fake-model"] * 3 + ["fake-small"]
    records = entries(session_file)
    states = [e["data"] for e in records if e["type"] == "custom"]
    assert all((s["provider"], s["modelId"]) == ("router", "recorder") for s in states)
    assert states[-1]["state"] == [
        {"reason": "user", "level": "high", "previous": None, "failed": None},
        {"reason": "continuation", "level": "high", "previous": "fake-model", "failed": None},
        {"reason": "retry", "level": "high", "previous": "fake-model", "failed": "503 unavailable"},
    ]
    assert len(states) == 3  # the direct request stored nothing
    changes = [(e["provider"], e["modelId"]) for e in records if e["type"] == "model_change"]
    assert changes[-1] == ("router", "recorder")
    replies = [
        e["message"] for e in records if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert [(m["model"], m["thinkingLevel"]) for m in replies] == [("fake-model", "off")] * 3


async def test_the_retry_after_an_overflow_compaction_is_routed_as_a_retry(tau: TauCommand) -> None:
    add_small_model(tau)
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    extension = tau.work / "recorder.py"
    extension.write_text(RECORDER)
    too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
    tau.server.add(
        Turn(text="setup done"),
        Turn(fault=Fault("status", status=400, body=too_long)),
        # Only the refused attempt follows the prompt: the cut lands on it and the turn is split,
        # as in pi 1.6, so the history and the turn's opening are summarised in two calls.
        Turn(text="## Goal\ncompacted"),
        Turn(text="## Goal\nthe real work"),
        Turn(text="recovered"),
    )
    routed = ["-e", str(extension), "--model", "router/recorder"]
    assert tau.run(*routed, "-p", "set things up").returncode == 0
    result = tau.run("-e", str(extension), "-c", "-p", "now the real work")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    assert [r.body["model"] for r in tau.server.requests] == [
        "fake-model",
        "fake-model",
        "fake-small",
        "fake-small",
        "fake-model",
    ]
    [session] = tau.session_files()
    states = [e["data"]["state"] for e in entries(str(session)) if e["type"] == "custom"]
    assert [seen["reason"] for seen in states[-1]] == ["user", "user", "retry"]
    assert states[-1][-1]["failed"] == "400 prompt is too long: 5000 tokens > 4000 maximum"


NAVIGATOR = (
    RECORDER
    + """
    @tau.register_command("goto", description="Go to an entry of the session tree")
    async def goto(args, ctx):
        await ctx.navigate_tree(args.strip())
"""
)


async def test_a_prompt_records_the_live_selection_on_a_branch_that_implies_another(tau: TauCommand) -> None:
    extension = tau.work / "navigator.py"
    extension.write_text(NAVIGATOR)
    command = [sys.executable, "-m", "tau", "--mode", "rpc", "--provider", "local", "--model", "fake-model"]
    tau.server.add(Turn(text="one"), Turn(text="two"), Turn(text="three"))
    async with RpcClient([*command, "-e", str(extension)], cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("set_model", provider="router", modelId="recorder")
        await rpc.prompt("first")
        state = await rpc.call("get_state")
        session_file = state["sessionFile"]
        [first_reply] = [
            e["id"]
            for e in entries(session_file)
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]
        await rpc.call("set_model", provider="local", modelId="fake-model")
        await rpc.prompt("second")
        # Back to the first reply: that branch holds router/recorder, the live model is fake-model.
        await rpc.prompt(f"/goto {first_reply}")
        await rpc.prompt("third")

    records = entries(session_file)
    by_id = {e["id"]: e for e in records}
    leaf = records[-1]
    branch = []
    while leaf is not None:
        branch.append(leaf)
        leaf = by_id.get(leaf["parentId"])
    branch.reverse()
    kinds = [
        (e["type"], e.get("modelId") or (e["message"]["role"] if e["type"] == "message" else None))
        for e in branch
    ]
    third = kinds.index(("message", "user"), kinds.index(("message", "assistant")) + 1)
    assert kinds[third - 1] == ("model_change", "fake-model")  # recorded before the prompt
    assert [r.body["model"] for r in tau.server.requests] == ["fake-model"] * 3


# Routes by the latest user message: one asking for the small model goes to fake-tiny (a 3000-token
# window), everything else, compaction summaries included, to fake-model. Logs each reason.
SWITCHER = """
from tau.extensions import ModelRoute, VirtualModelDefinition
from tau.ai.types import UserMessage

reasons = []


def setup(tau):
    def route(request, ctx):
        reasons.append(request.reason)
        users = [m for m in request.messages if isinstance(m, UserMessage)]
        content = users[-1].content if users else ""
        text = content if isinstance(content, str) else " ".join(getattr(b, "text", "") for b in content)
        tiny = request.reason != "direct" and "small model" in text
        model = ctx.model_registry.find("local", "fake-tiny" if tiny else "fake-model")
        return ModelRoute(model, "off", state=list(reasons))

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="switcher", name="Switcher", route=route,
    ))
"""


async def test_a_route_to_a_smaller_window_compacts_before_the_request_is_sent(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-tiny", "contextWindow": 3000, "maxTokens": 256}
    )
    path.write_text(json.dumps(models))
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 1}})
    )
    extension = tau.work / "switcher.py"
    extension.write_text(SWITCHER)
    long_question = "Tell me about the history of the lighthouse. " * 200  # ~2300 tokens
    tau.server.add(
        Turn(text="A long history.", usage=ScriptedUsage(input=2400, output=100)),
        Turn(text="## Goal\nThe lighthouse's history."),
        Turn(text="Short answer."),
    )
    command = [
        sys.executable,
        "-m",
        "tau",
        "--mode",
        "rpc",
        "-e",
        str(extension),
        "--model",
        "router/switcher",
    ]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.prompt(long_question)
        events = await rpc.prompt("Now use the small model: one line.")
        state = await rpc.call("get_state")
        session_file = state["sessionFile"]
        assert state["model"]["id"] == "switcher"  # the selection stays

    kinds = [e["type"] for e in events]
    [start] = [e for e in events if e["type"] == "compaction_start"]
    [end] = [e for e in events if e["type"] == "compaction_end"]
    assert start["reason"] == end["reason"] == "threshold"
    assert end["willRetry"] is False and end["aborted"] is False and end.get("errorMessage") is None
    # Compacted inside the run, before its only request (the one reply) was sent.
    assert kinds.index("agent_start") < kinds.index("compaction_start") < kinds.index("compaction_end")
    assert kinds.index("compaction_end") < kinds.index("message_start", kinds.index("compaction_end"))

    first, summary, routed = tau.server.requests
    assert [first.body["model"], summary.body["model"], routed.body["model"]] == [
        "fake-model",
        "fake-model",
        "fake-tiny",
    ]
    sent = json.dumps(routed.body["messages"])
    assert "The lighthouse's history." in sent and "history of the lighthouse" not in sent
    assert "Now use the small model" in sent

    records = entries(session_file)
    assert [e["type"] for e in records].count("compaction") == 1
    replies = [
        e["message"] for e in records if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert [(m["model"], m["stopReason"]) for m in replies] == [("fake-model", "stop"), ("fake-tiny", "stop")]
    # The route stood: the router was asked once for the request and once for the summary (direct).
    states = [e["data"]["state"] for e in records if e["type"] == "custom"]
    assert states[-1] == ["user", "user"]
    order = [e["type"] for e in records]
    assert order.index("compaction") > max(i for i, kind in enumerate(order) if kind == "custom")

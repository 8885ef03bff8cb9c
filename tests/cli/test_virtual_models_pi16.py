"""Virtual models side by side with pi 1.6 (issue #32 §5): the same router written for each, run
against the fake server, records the same entries; and one session goes back and forth between
them, each reading the other's router state and restoring the virtual selection. pi comes from
``.ci/pi16`` (installed by ``scripts/check``) or ``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from pi16 import pi16_command, run_pi16
from tau_command import TauCommand

from tau.testing.fake_llm import ScriptedToolCall, ScriptedUsage, Turn

PI_ROUTER = """
export default function (pi: any) {
  pi.registerVirtualModel({
    provider: "router",
    id: "auto",
    name: "Auto",
    thinkingLevels: ["off", "low", "medium", "high"],
    route(request: any, ctx: any) {
      const sticky = request.failed ?? request.previous;
      if (request.reason !== "user" && sticky) {
        return { model: sticky.model, thinkingLevel: sticky.thinkingLevel ?? "off" };
      }
      const state = { prompts: (request.state?.prompts ?? 0) + 1, reason: request.reason };
      return { model: ctx.modelRegistry.find("local", "fake-small"), thinkingLevel: request.thinkingLevel, state };
    },
  });
}
"""

TAU_ROUTER = """
from tau.extensions import ModelRoute, VirtualModelDefinition

def setup(tau):
    def route(request, ctx):
        sticky = request.failed or request.previous
        if request.reason != "user" and sticky is not None:
            return ModelRoute(sticky.model, sticky.thinking_level or "off")
        state = {"prompts": ((request.state or {}).get("prompts") or 0) + 1, "reason": request.reason}
        return ModelRoute(ctx.model_registry.find("local", "fake-small"), request.thinking_level, state)

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="auto", name="Auto", route=route,
        thinking_levels=("off", "low", "medium", "high"),
    ))
"""


def add_model(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-small", "contextWindow": 100000, "maxTokens": 4096}
    )
    path.write_text(json.dumps(models))


def shape(session: Path, *, compactions: bool = False) -> list[Any]:
    """Each entry without ids and times: what it is and what it says about models and routing
    (with ``compactions``, where a compaction entry is)."""
    out: list[Any] = []
    for line in session.read_text().splitlines():
        entry = json.loads(line)
        kind = entry["type"]
        if kind == "message":
            message = entry["message"]
            if message["role"] == "assistant":
                out.append(
                    [
                        "assistant",
                        message["provider"],
                        message["api"],
                        message["model"],
                        message["thinkingLevel"],
                    ]
                )
            elif message["role"] != "system":
                out.append([message["role"]])
        elif kind == "model_change":
            out.append([kind, entry["provider"], entry["modelId"]])
        elif kind == "thinking_level_change":
            out.append([kind, entry["thinkingLevel"]])
        elif kind == "custom":
            out.append([kind, entry["customType"], entry["data"], list(entry)[:3]])
        elif kind == "compaction" and compactions:
            out.append([kind])
    return out


def test_tau_records_what_pi16_records_and_each_continues_the_others_routing(
    tau: TauCommand, tmp_path: Path
) -> None:
    pi = pi16_command()
    add_model(tau)
    pi_router = tmp_path / "router.ts"
    pi_router.write_text(textwrap.dedent(PI_ROUTER))
    tau_router = tmp_path / "router.py"
    tau_router.write_text(textwrap.dedent(TAU_ROUTER))
    turns = [Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]), Turn(text="Done.")]

    # The same run in each: a prompt, a tool call and its follow-up.
    tau.server.add(*turns)
    ran = tau.run("-e", str(tau_router), "--model", "router/auto", "-p", "hi")
    assert ran.returncode == 0, ran.stderr
    [tau_session] = tau.session_files()
    pi_dir = tmp_path / "pi"
    tau.server.add(*turns)
    run_pi16(pi, tau, pi_dir, "-e", str(pi_router), "-p", "hi", model=["--model", "router/auto"])
    [pi_session] = sorted((pi_dir / "sessions").rglob("*.jsonl"))
    assert shape(tau_session) == shape(pi_session)
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small"] * 4
    state = {"provider": "router", "modelId": "auto", "state": {"prompts": 1, "reason": "user"}}
    assert ["custom", "pi.virtual-model-state", state, ["type", "customType", "data"]] in shape(tau_session)

    # pi continues tau's session: it restores router/auto and reads tau's router state; then tau
    # continues pi's additions the same way.
    tau.server.add(Turn(text="From pi."), Turn(text="From tau."))
    run_pi16(pi, tau, pi_dir, "-e", str(pi_router), "--session", str(tau_session), "-p", "again", model=[])
    ran = tau.run("-e", str(tau_router), "--session", str(tau_session), "-p", "and again")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "From tau.\n"
    records = shape(tau_session)
    prompts = [r[2]["state"]["prompts"] for r in records if r[0] == "custom"]
    assert prompts == [1, 2, 3]
    assert len([r for r in records if r[0] == "model_change"]) == 1
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small"] * 6


# Routes by the latest user message: one asking for the small model to fake-tiny (a 3000-token
# window), everything else, compaction summaries included, to fake-model; the state lists the
# reasons of the requests that kept it.
PI_SWITCHER = """
export default function (pi: any) {
  pi.registerVirtualModel({
    provider: "router",
    id: "switcher",
    name: "Switcher",
    route(request: any, ctx: any) {
      const users = request.messages.filter((m: any) => m.role === "user");
      const content = users.length ? users[users.length - 1].content : "";
      const text = typeof content === "string" ? content : content.map((b: any) => b.text ?? "").join(" ");
      const tiny = request.reason !== "direct" && text.includes("small model");
      const model = ctx.modelRegistry.find("local", tiny ? "fake-tiny" : "fake-model");
      return { model, thinkingLevel: "off", state: [...(request.state ?? []), request.reason] };
    },
  });
}
"""

TAU_SWITCHER = """
from tau.extensions import ModelRoute, VirtualModelDefinition
from tau.ai.types import UserMessage

def setup(tau):
    def route(request, ctx):
        users = [m for m in request.messages if isinstance(m, UserMessage)]
        content = users[-1].content if users else ""
        text = content if isinstance(content, str) else " ".join(getattr(b, "text", "") for b in content)
        tiny = request.reason != "direct" and "small model" in text
        model = ctx.model_registry.find("local", "fake-tiny" if tiny else "fake-model")
        return ModelRoute(model, "off", state=[*(request.state or []), request.reason])

    tau.register_virtual_model(VirtualModelDefinition(
        provider="router", id="switcher", name="Switcher", route=route,
    ))
"""


def state_of(reasons: list[str]) -> dict[str, Any]:
    return {"provider": "router", "modelId": "switcher", "state": reasons}


def test_a_route_to_a_smaller_window_compacts_first_in_tau_as_in_pi16(
    tau: TauCommand, tmp_path: Path
) -> None:
    pi = pi16_command()
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-tiny", "contextWindow": 3000, "maxTokens": 256}
    )
    path.write_text(json.dumps(models))
    settings = json.dumps({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 1}})
    (tau.agent_dir / "settings.json").write_text(settings)
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "settings.json").write_text(settings)
    pi_router = tmp_path / "switcher.ts"
    pi_router.write_text(textwrap.dedent(PI_SWITCHER))
    tau_router = tmp_path / "switcher.py"
    tau_router.write_text(textwrap.dedent(TAU_SWITCHER))
    long_question = "Tell me about the history of the lighthouse. " * 200  # ~2300 tokens
    turns = [
        Turn(text="A long history.", usage=ScriptedUsage(input=2400, output=100)),
        Turn(text="## Goal\nThe lighthouse's history."),
        Turn(text="Short answer."),
    ]

    tau.server.add(*turns)
    assert tau.run("-e", str(tau_router), "--model", "router/switcher", "-p", long_question).returncode == 0
    ran = tau.run("-e", str(tau_router), "-c", "-p", "Now use the small model: one line.")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "Short answer.\n"
    [tau_session] = tau.session_files()
    tau.server.add(*turns)
    run_pi16(pi, tau, pi_dir, "-e", str(pi_router), "-p", long_question, model=["--model", "router/switcher"])
    run_pi16(
        pi, tau, pi_dir, "-e", str(pi_router), "-c", "-p", "Now use the small model: one line.", model=[]
    )
    [pi_session] = sorted((pi_dir / "sessions").rglob("*.jsonl"))

    assert shape(tau_session, compactions=True) == shape(pi_session, compactions=True)
    records = shape(tau_session, compactions=True)
    assert records.count(["compaction"]) == 1
    # The router state stored before the compaction, and the reply after it from the tiny model.
    assert records[-3:] == [
        ["custom", "pi.virtual-model-state", state_of(["user", "user"]), ["type", "customType", "data"]],
        ["compaction"],
        ["assistant", "local", "openai-completions", "fake-tiny", "off"],
    ]
    models_sent = [r.body["model"] for r in tau.server.requests]
    assert models_sent[:3] == models_sent[3:] == ["fake-model", "fake-model", "fake-tiny"]
    tiny_requests = [
        json.dumps(r.body["messages"]) for r in tau.server.requests if r.body["model"] == "fake-tiny"
    ]
    assert all("history of the lighthouse" not in sent for sent in tiny_requests)

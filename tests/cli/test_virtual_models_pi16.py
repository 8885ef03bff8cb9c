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

from tau.testing.fake_llm import ScriptedToolCall, Turn

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


def shape(session: Path) -> list[Any]:
    """Each entry without ids and times: what it is and what it says about models and routing."""
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

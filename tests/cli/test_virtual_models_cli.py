"""Virtual models through the real `tau` command (issue #32 §5): the example length router
(examples/extensions/length_router.py) picks a physical model per request, the fake server sees
only physical models, and the session file records what pi 1.6 records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tau_command import TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

ROUTER = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "length_router.py"
ROUTED = [
    "-e",
    str(ROUTER),
    "--model",
    "router/auto",
    "--router-small",
    "local/fake-small",
    "--router-large",
    "local/fake-large",
    "--router-limit",
    "40",
]
LONG = "Please explain, at some length, why the sky is blue at noon."


def add_models(tau: TauCommand) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    local = models["providers"]["local"]
    local["models"] += [
        {"id": "fake-small", "contextWindow": 100000, "maxTokens": 4096},
        {"id": "fake-large", "contextWindow": 200000, "maxTokens": 4096},
    ]
    path.write_text(json.dumps(models))


def entries(tau: TauCommand) -> list[dict[str, Any]]:
    [session] = tau.session_files()
    return [json.loads(line) for line in session.read_text().splitlines()]


def test_each_prompt_goes_to_the_model_its_length_picks_and_the_session_records_it(tau: TauCommand) -> None:
    add_models(tau)
    tau.server.add(Turn(text="Short answer."))
    result = tau.run(*ROUTED, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Short answer.\n"
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small"]

    records = entries(tau)
    [change] = [e for e in records if e["type"] == "model_change"]
    assert (change["provider"], change["modelId"]) == ("router", "auto")
    [state] = [e for e in records if e["type"] == "custom"]
    assert state["customType"] == "pi.virtual-model-state"
    assert state["data"] == {"provider": "router", "modelId": "auto", "state": {"small": 1, "large": 0}}
    [reply] = [
        e["message"] for e in records if e["type"] == "message" and e["message"]["role"] == "assistant"
    ]
    assert (reply["provider"], reply["api"], reply["model"]) == ("local", "openai-completions", "fake-small")
    assert reply["thinkingLevel"] == "off"
    # The state is stored before the request goes out, after the prompt it answers.
    order = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in records]
    assert order.index("user") < order.index("custom") < order.index("assistant")

    # Resumed, the virtual selection holds although the responses name a physical model.
    tau.server.add(Turn(text="Long answer."))
    result = tau.run(
        *ROUTED[:2],
        "--router-small",
        "local/fake-small",
        "--router-large",
        "local/fake-large",
        "--router-limit",
        "40",
        "-c",
        "-p",
        LONG,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Long answer.\n"
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small", "fake-large"]
    records = entries(tau)
    assert len([e for e in records if e["type"] == "model_change"]) == 1
    states = [e["data"]["state"] for e in records if e["type"] == "custom"]
    assert states == [{"small": 1, "large": 0}, {"small": 1, "large": 1}]


def test_a_tool_follow_up_stays_on_the_model_of_the_turn(tau: TauCommand) -> None:
    add_models(tau)
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo routed"})]),
        Turn(text="Done."),
    )
    result = tau.run(*ROUTED, "-p", LONG)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\n"
    assert [r.body["model"] for r in tau.server.requests] == ["fake-large", "fake-large"]
    # Only the user's prompt changed the state; the follow-up kept it.
    assert len([e for e in entries(tau) if e["type"] == "custom"]) == 1


def test_a_router_that_fails_ends_the_request_with_one_clear_error(tau: TauCommand) -> None:
    add_models(tau)
    args = [*ROUTED]
    args[args.index("local/fake-small")] = "local/missing"
    result = tau.run(*args, "-p", "hi")
    assert result.returncode == 1
    assert "--router-small: no model local/missing" in result.stderr
    assert tau.server.requests == []


def test_a_route_to_a_virtual_model_is_refused(tau: TauCommand) -> None:
    add_models(tau)
    args = [*ROUTED]
    args[args.index("local/fake-small")] = "router/auto"
    result = tau.run(*args, "-p", "hi")
    assert result.returncode == 1
    assert "Virtual model router/auto routed to router/auto, which is not a physical model." in result.stderr
    assert tau.server.requests == []


def test_the_virtual_model_is_listed_with_the_physical_ones(tau: TauCommand) -> None:
    add_models(tau)
    result = tau.run("-e", str(ROUTER), "--list-models", "auto")
    assert result.returncode == 0, result.stderr
    assert "router" in result.stdout and "auto" in result.stdout


def test_a_task_child_of_a_virtual_selection_is_routed_by_the_parents_router(tau: TauCommand) -> None:
    add_models(tau)
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": LONG}, id="task_1")]),
        Turn(text="The child's answer."),
        Turn(text="All done."),
    )
    result = tau.run(*ROUTED, "--tools", "+task", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    # Parent (short prompt), child (long prompt), parent's follow-up (sticky).
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small", "fake-large", "fake-small"]
    child = next(p for p in tau.session_files() if '"parentSession"' in p.read_text().splitlines()[0])
    records = [json.loads(line) for line in child.read_text().splitlines()]
    [change] = [e for e in records if e["type"] == "model_change"]
    assert (change["provider"], change["modelId"]) == ("router", "auto")
    [state] = [e["data"]["state"] for e in records if e["type"] == "custom"]
    assert state == {"small": 0, "large": 1}  # the child's own branch, its own state

"""Classifier models in the real tau process (issue #32), as pi 1.6: a codemode script lists and
runs TypeSafe's Jev against the fake server (TypeSafe's System One answer) with the session's key;
its usage counts in the codemode result; an extension tool does the same through
``ctx.model_registry.classify()``."""

from __future__ import annotations

import json
import textwrap

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn

pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")

SCRIPT = """// @options: {"timeout_ms": 60000}
const listed = await models.getAvailableOfType("classifier");
const jev = await models.getModelOfType("classifier", "typesafe", "jev-latest");
const result = await models.classify(jev, {
  state: { message: "The build is broken, please fix it today" },
  questions: {
    urgent: { type: "bool", instructions: "Is it urgent?", criteria: { true: "today", false: "later" } },
    topic: { type: "choice", instructions: "Topic?", criteria: { build: "CI", docs: "writing" } },
  },
});
return {
  listed: listed.map((m) => `${m.provider}/${m.id}`),
  type: jev.type,
  stopReason: result.stopReason,
  answers: result.answers,
  tokens: result.usage.totalTokens,
};
"""

EXTENSION = textwrap.dedent(
    """
    from tau.extensions import ToolDefinition

    def setup(tau):
        async def triage(call_id, params, signal, on_update, ctx):
            result = await ctx.model_registry.classify(
                {"provider": "typesafe", "id": "jev-latest"},
                {
                    "state": {"message": params["message"]},
                    "questions": {
                        "urgent": {
                            "type": "bool",
                            "instructions": "Urgent?",
                            "criteria": {"true": "now", "false": "later"},
                        },
                    },
                },
                signal,
            )
            if result.stop_reason != "stop":
                raise RuntimeError(result.error_message)
            probability = result.answers["urgent"].probability
            return {"content": [{"type": "text", "text": f"urgent: {probability}"}]}

        tau.register_tool(ToolDefinition(
            name="triage",
            description="Triage a message",
            parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
            execute=triage,
        ))
    """
).lstrip()


def with_typesafe(tau: TauCommand, *, key: str | None = "ts-key") -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["typesafe"] = {"baseUrl": tau.server.url("/v1")}
    path.write_text(json.dumps(models))
    if key is not None:
        tau.env["TYPESAFE_API_KEY"] = key


def script_output(request: RecordedRequest) -> str:
    tool = [m for m in request.body["messages"] if m["role"] == "tool"][-1]
    return str(tool["content"]).split("Output:\n", 1)[1]


def codemode(code: str) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("codemode", {"code": code})])


def test_a_codemode_script_classifies(tau: TauCommand) -> None:
    with_typesafe(tau)
    tau.server.add(codemode(SCRIPT), Turn(usage=ScriptedUsage(input=120, output=2)), Turn(text="Done."))

    done = tau.run("-p", "--mode", "json", *MODEL, "--tools", "+codemode", "triage")

    assert done.returncode == 0, done.stderr
    _chat, classified, last = tau.server.requests
    assert classified.path == "/v1/systemone"
    assert classified.headers["authorization"] == "Bearer ts-key"
    assert classified.body["model"] == "jev-latest"
    assert classified.body["questions"]["urgent"]["type"] == "noul"
    facts = json.loads(script_output(last))
    assert facts == {
        "listed": ["typesafe/jev-latest"],
        "type": "classifier",
        "stopReason": "stop",
        "answers": {
            "urgent": {"type": "bool", "probability": 0.75},
            "topic": {
                "type": "choice",
                "choice": "build",
                "probabilities": {"build": 0.9, "docs": 0.1},
                "confidence": 0.9,
            },
        },
        "tokens": 122,
    }
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    end = next(e for e in events if e.get("type") == "tool_execution_end" and e["toolName"] == "codemode")
    calls = end["result"]["details"]["calls"]
    assert [(c["name"], c["args"], c["status"]) for c in calls] == [
        ("models.classify", "typesafe/jev-latest", "ok")
    ]
    assert end["result"]["usage"]["totalTokens"] == 122


def test_without_a_key_or_with_a_bad_context_the_script_is_told(tau: TauCommand) -> None:
    with_typesafe(tau, key=None)
    script = (
        'const jev = { provider: "typesafe", id: "jev-latest" };\n'
        "const q = { u: { type: 'bool', instructions: 'u?', criteria: { true: 'y', false: 'n' } } };\n"
        "const r = await models.classify(jev, { state: {}, questions: q });\n"
        "text(r.stopReason + ': ' + r.errorMessage);\n"
        "try { await models.classify(jev, { state: 'x', questions: q }); } catch (e) { text(e.message); }\n"
        "try { await models.classify({ provider: 'local', id: 'fake-model' }, {}); } catch (e) { text(e.message); }"
    )
    tau.server.add(codemode(script), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "--tools", "+codemode", "triage")

    assert done.returncode == 0, done.stderr
    assert len(tau.server.requests) == 2  # no classification request
    output = script_output(tau.server.requests[-1])
    assert 'error: No API key for provider "typesafe"' in output
    assert "models.classify() context.state must be a JSON object. Expected context: { state:" in output
    assert '"local/fake-model" is a chat model, not a classifier model.' in output


def test_an_extension_classifies_through_the_model_registry(tau: TauCommand) -> None:
    with_typesafe(tau)
    extension = tau.work / "triage.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("triage", {"message": "fire!"})]),
        Turn(classifier_answers={"urgent": {"type": "noul", "noul": 0.98}}),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "-e", str(extension), "--tools", "triage", "triage it")

    assert done.returncode == 0, done.stderr
    assert tau.server.requests[1].body["state"] == {"message": "fire!"}
    assert "urgent: 0.98" in json.dumps(tau.server.requests[-1].body["messages"])

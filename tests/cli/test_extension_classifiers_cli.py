"""An extension's own classifiers (pi's ``registerProvider(..., {classifiers})``) in the real tau
process: the example ``keyword_classifier.py`` registers ``keywords/matcher`` and the function that
speaks its api; a codemode script lists and runs it (``models.classify``), and another extension's
tool runs it through ``ctx.model_registry.classify``. No request leaves the process."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn

pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "keyword_classifier.py"

SCRIPT = """// @options: {"timeout_ms": 60000}
const listed = await models.getAvailableOfType("classifier", "keywords");
const matcher = await models.getModelOfType("classifier", "keywords", "matcher");
const result = await models.classify(matcher, {
  state: { message: "The build is broken on CI now" },
  questions: {
    topic: { type: "choice", instructions: "Topic?", criteria: { build: "build CI broken", docs: "docs writing" } },
    urgent: { type: "bool", instructions: "Urgent?", criteria: { true: "broken now", false: "someday" } },
  },
});
const odd = await models.classify(matcher, {
  state: {},
  questions: { s: { type: "score", instructions: "How much?", criteria: ["a", "b"] } },
});
return {
  listed: listed.map((m) => `${m.provider}/${m.id}/${m.api}`),
  stopReason: result.stopReason,
  answers: result.answers,
  odd: `${odd.stopReason}: ${odd.errorMessage}`,
};
"""

TOOL = textwrap.dedent(
    """
    from tau.extensions import ToolDefinition

    def setup(tau):
        async def triage(call_id, params, signal, on_update, ctx):
            result = await ctx.model_registry.classify(
                {"provider": "keywords", "id": "matcher"},
                {
                    "state": {"message": params["message"]},
                    "questions": {
                        "topic": {
                            "type": "choice",
                            "instructions": "Topic?",
                            "criteria": {"build": "build broken", "docs": "docs typo"},
                        },
                    },
                },
                signal,
            )
            if result.stop_reason != "stop":
                raise RuntimeError(result.error_message)
            return {"content": [{"type": "text", "text": f"topic: {result.answers['topic'].choice}"}]}

        tau.register_tool(ToolDefinition(
            name="triage",
            description="Triage a message",
            parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
            execute=triage,
        ))
    """
).lstrip()


def tool_output(request: RecordedRequest) -> str:
    return str([m for m in request.body["messages"] if m["role"] == "tool"][-1]["content"])


def test_a_codemode_script_runs_the_extensions_classifier(tau: TauCommand) -> None:
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("codemode", {"code": SCRIPT})]), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(EXAMPLE), "--tools", "+codemode", "triage")

    assert done.returncode == 0, done.stderr
    assert len(tau.server.requests) == 2  # the chat requests only
    facts = json.loads(tool_output(tau.server.requests[-1]).split("Output:\n", 1)[1])
    assert facts == {
        "listed": ["keywords/matcher/keyword-match"],
        "stopReason": "stop",
        "answers": {
            "topic": {
                "type": "choice",
                "choice": "build",
                "probabilities": {"build": 0.8, "docs": 0.2},
                "confidence": 0.8,
            },
            "urgent": {"type": "bool", "probability": 0.75},
        },
        "odd": "error: matcher answers choice and bool questions, not 'score'",
    }


def test_an_extension_tool_classifies_through_the_model_registry(tau: TauCommand) -> None:
    tool = tau.work / "triage.py"
    tool.write_text(TOOL, encoding="utf-8")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("triage", {"message": "the build is broken"})]), Turn(text="Done.")
    )

    done = tau.run("-p", *MODEL, "-e", str(EXAMPLE), "-e", str(tool), "--tools", "triage", "triage it")

    assert done.returncode == 0, done.stderr
    assert "topic: build" in tool_output(tau.server.requests[-1])

"""A grammar-constrained extension tool in the real ``tau`` process (issue #32): on a model whose
compat has ``supportsOpenAIGrammarTools`` it goes out as an OpenAI custom tool, the model's raw
input reaches the tool as its one string argument, and the call goes back as a custom call; the
session file keeps the tool's ``constrainedSampling`` in pi 1.6's shape."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

LARK = 'start: "*** Begin Patch" /(.|\\n)*/'
PATCH = '*** Begin Patch\n"quoted" \\ tab\t\n*** End Patch'

EXTENSION = textwrap.dedent(
    f"""
    from tau.ai import GrammarSampling
    from tau.extensions import ToolDefinition

    def setup(tau):
        def apply_patch(call_id, params, signal, on_update, ctx):
            return "got " + repr(params)

        tau.register_tool(ToolDefinition(
            name="apply_patch",
            description="Apply a patch",
            parameters={{"type": "object", "properties": {{"patch": {{"type": "string"}}}}, "required": ["patch"]}},
            execute=apply_patch,
            constrained_sampling=GrammarSampling({{"openai_lark": {LARK!r}}}),
        ))
    """
).lstrip()


def with_grammar_tools(tau: TauCommand, on: bool) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    model = models["providers"]["local"]["models"][0]
    model["compat"] = {"supportsOpenAIGrammarTools": on}
    path.write_text(json.dumps(models))


def test_a_grammar_tool_is_a_custom_tool_and_gets_the_raw_input(tau: TauCommand, tmp_path: Path) -> None:
    extension = tmp_path / "patcher.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    with_grammar_tools(tau, True)
    call = ScriptedToolCall("apply_patch", id="call_p", custom_input=PATCH)
    tau.server.add(Turn(tool_calls=[call], chunk_size=4), Turn(text="Patched."))

    done = tau.run("-p", *MODEL, "-e", str(extension), "--tools", "apply_patch", "patch it")

    assert done.returncode == 0, done.stderr
    assert "Patched." in done.stdout
    first, second = tau.server.requests
    custom = [t for t in first.body["tools"] if t["type"] == "custom"]
    assert custom == [
        {
            "type": "custom",
            "custom": {
                "name": "apply_patch",
                "description": "Apply a patch",
                "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": LARK}},
            },
        }
    ]
    assistant, result = second.body["messages"][-2:]
    assert assistant["tool_calls"] == [
        {"id": "call_p", "type": "custom", "custom": {"name": "apply_patch", "input": PATCH}}
    ]
    assert result == {"role": "tool", "content": "got " + repr({"patch": PATCH}), "tool_call_id": "call_p"}
    # The session keeps the call's arguments and the tool's declaration as pi 1.6 writes them.
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    text = json.dumps(entries)
    assert json.dumps({"patch": PATCH})[1:-1] in text
    assert json.dumps({"type": "grammar", "variants": {"openai_lark": LARK}}) in text


def test_without_the_compat_the_grammar_tool_is_a_function_tool(tau: TauCommand, tmp_path: Path) -> None:
    extension = tmp_path / "patcher.py"
    extension.write_text(EXTENSION, encoding="utf-8")
    with_grammar_tools(tau, False)
    call = ScriptedToolCall("apply_patch", {"patch": PATCH}, id="call_p")
    tau.server.add(Turn(tool_calls=[call]), Turn(text="Patched."))

    done = tau.run("-p", *MODEL, "-e", str(extension), "--tools", "apply_patch", "patch it")

    assert done.returncode == 0, done.stderr
    first, second = tau.server.requests
    assert [t["type"] for t in first.body["tools"]] == ["function"]
    assert second.body["messages"][-2]["tool_calls"][0]["type"] == "function"
    assert second.body["messages"][-1]["content"] == "got " + repr({"patch": PATCH})


def test_codemode_scripts_are_raw_text_on_a_model_with_grammar_tools(tau: TauCommand) -> None:
    pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")
    with_grammar_tools(tau, True)
    (tau.work / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    script = "const notes = await tools.read({ path: \"notes.txt\" });\nreturn notes.split('\\n')[1];"
    call = ScriptedToolCall("codemode", id="call_c", custom_input=script)
    tau.server.add(Turn(tool_calls=[call], chunk_size=9), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "--tools", "read,codemode", "script it")

    assert done.returncode == 0, done.stderr
    first, second = tau.server.requests
    codemode = next(t for t in first.body["tools"] if t.get("custom", {}).get("name") == "codemode")
    assert codemode["custom"]["format"]["type"] == "grammar"
    assert codemode["custom"]["format"]["grammar"]["syntax"] == "lark"
    assert second.body["messages"][-2]["tool_calls"][0]["custom"] == {"name": "codemode", "input": script}
    assert second.body["messages"][-1]["content"].endswith("Output:\n\nbeta")

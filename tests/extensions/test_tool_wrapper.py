"""Extension tools as agent tools: a fresh ``ctx`` per call, and the return values they may give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tau.agent.tool import AgentToolResult
from tau.ai.abort import AbortController
from tau.ai.types import TextContent
from tau.extensions import ExtensionRunner, ExtensionSource, ToolDefinition, load_extensions
from tau.extensions.testing import RecordingHost


async def runner_with_tool(
    project: Path, runners: list[ExtensionRunner], tool: ToolDefinition
) -> ExtensionRunner:
    runner = await load_extensions(
        [ExtensionSource.inline("tools", lambda tau: tau.register_tool(tool))], cwd=str(project)
    )
    runners.append(runner)
    runner.bind(RecordingHost(str(project)))
    return runner


async def test_execute_receives_a_fresh_context_as_fifth_argument(project, runners) -> None:
    seen: list[Any] = []

    async def execute(call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any) -> Any:
        seen.append((call_id, params, ctx.signal is signal, ctx.cwd))
        return {"content": [{"type": "text", "text": "done"}], "details": {"n": 1}}

    tool = ToolDefinition(
        name="todo",
        label="Todo",
        description="Keep a todo list",
        parameters={"type": "object", "properties": {"item": {"type": "string"}}},
        execute=execute,
        prompt_snippet="Track multi-step work as a todo list",
        prompt_guidelines=["Use todo to plan work with more than three steps"],
        execution_mode="sequential",
    )
    runner = await runner_with_tool(project, runners, tool)
    (agent_tool,) = runner.tools
    assert (agent_tool.name, agent_tool.label, agent_tool.execution_mode) == ("todo", "Todo", "sequential")
    assert agent_tool.prompt_snippet == "Track multi-step work as a todo list"
    assert agent_tool.prompt_guidelines == ["Use todo to plan work with more than three steps"]
    assert runner.tools[0] is agent_tool  # wrappers are stable

    controller = AbortController()
    result = await agent_tool.execute("call-1", {"item": "x"}, controller.signal, None)
    assert result == AgentToolResult([TextContent("done")], {"n": 1})
    assert seen == [("call-1", {"item": "x"}, True, str(project))]


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ("plain text", AgentToolResult([TextContent("plain text")])),
        (
            AgentToolResult([TextContent("as is")], terminate=True),
            AgentToolResult([TextContent("as is")], terminate=True),
        ),
        ({"content": "short", "terminate": True}, AgentToolResult([TextContent("short")], None, True)),
    ],
)
async def test_tools_may_return_text_results_or_dicts(project, runners, returned: Any, expected: Any) -> None:
    tool = ToolDefinition(
        name="t", description="d", parameters={"type": "object"}, execute=lambda *a: returned
    )
    runner = await runner_with_tool(project, runners, tool)
    assert await runner.tools[0].execute("c", {}, None, None) == expected


async def test_a_malformed_return_value_fails_the_call_naming_tool_and_extension(project, runners) -> None:
    tool = ToolDefinition(name="t", description="d", parameters={"type": "object"}, execute=lambda *a: 42)
    runner = await runner_with_tool(project, runners, tool)
    with pytest.raises(TypeError, match="tool 't' of extension 'tools' returned int"):
        await runner.tools[0].execute("c", {}, None, None)


async def test_parameters_may_be_a_pydantic_style_model(project, runners) -> None:
    class Params:
        @staticmethod
        def model_json_schema() -> dict[str, Any]:
            return {"type": "object", "properties": {"q": {"type": "string"}}}

    tool = ToolDefinition(name="search", description="d", parameters=Params, execute=lambda *a: "ok")
    runner = await runner_with_tool(project, runners, tool)
    assert runner.tools[0].parameters == {"type": "object", "properties": {"q": {"type": "string"}}}


async def test_tools_of_a_disposed_runner_refuse_to_run(project, runners) -> None:
    from tau.extensions import StaleContextError

    tool = ToolDefinition(name="t", description="d", parameters={"type": "object"}, execute=lambda *a: "ok")
    runner = await runner_with_tool(project, runners, tool)
    agent_tool = runner.tools[0]
    runner.dispose()
    with pytest.raises(StaleContextError):
        await agent_tool.execute("c", {}, None, None)

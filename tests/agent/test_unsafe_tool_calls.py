"""Tool calls the loop must not run as sent: a repeated id, a reply cut off by the output limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.agent import Agent
from tau.ai import Model, TextContent, ToolResultMessage
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn
from tau.tools import SpillDirectory, create_coding_tools

BASE_PATHS = {"openai-completions": "/v1", "anthropic-messages": ""}


def _results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


def _text(result: ToolResultMessage) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.mark.parametrize("api", list(BASE_PATHS))
async def test_two_calls_with_one_id_both_run_under_distinct_ids(tmp_path: Path, api: str) -> None:
    calls = [
        ScriptedToolCall("bash", {"command": "echo first-call"}, id="call_same"),
        ScriptedToolCall("bash", {"command": "echo second-call"}, id="call_same"),
    ]
    with FakeLLMServer() as server, SpillDirectory() as spill:
        server.add(Turn(tool_calls=calls), Turn(text="done"))
        model = Model(id="m", api=api, provider="fake", base_url=server.url(BASE_PATHS[api]))
        agent = Agent(model=model, tools=create_coding_tools(str(tmp_path), spill=spill), api_key="k")
        await agent.prompt("run both")
        second_request = json.dumps(server.requests[1].body)

    assert agent.state.error_message is None, agent.state.error_message
    results = _results(agent)
    assert [r.tool_call_id for r in results] == ["call_same", "call_same_2"]
    assert [_text(r).strip() for r in results] == ["first-call", "second-call"]
    assistant = agent.state.messages[1]
    assert [c.id for c in assistant.tool_calls()] == ["call_same", "call_same_2"]  # type: ignore[union-attr]
    assert "first-call" in second_request and "second-call" in second_request
    assert "call_same_2" in second_request


async def test_a_call_cut_off_by_the_output_limit_is_answered_with_an_error(tmp_path: Path) -> None:
    cut = ScriptedToolCall("write", id="call_cut", raw_arguments='{"path": "out.txt", "content": "half of th')
    with FakeLLMServer() as server, SpillDirectory() as spill:
        server.add(Turn(tool_calls=[cut], stop_reason="length"), Turn(text="I will retry."))
        model = Model(id="m", api="openai-completions", provider="fake", base_url=server.url("/v1"))
        agent = Agent(model=model, tools=create_coding_tools(str(tmp_path), spill=spill), api_key="k")
        await agent.prompt("write it")

    assert not (tmp_path / "out.txt").exists()
    [result] = _results(agent)
    assert result.is_error and result.tool_call_id == "call_cut"
    assert "cut off by the output token limit" in _text(result)
    assert agent.state.messages[-1].text() == "I will retry."  # type: ignore[union-attr]


async def test_no_call_of_a_cut_off_reply_runs_even_when_its_arguments_parse(tmp_path: Path) -> None:
    calls = [
        ScriptedToolCall("write", {"path": "a.txt", "content": "complete"}, id="call_a"),
        ScriptedToolCall("write", id="call_b", raw_arguments='{"path": "b.txt", "content": "cut'),
    ]
    with FakeLLMServer() as server, SpillDirectory() as spill:
        server.add(Turn(tool_calls=calls, stop_reason="length"), Turn(text="ok"))
        model = Model(id="m", api="openai-completions", provider="fake", base_url=server.url("/v1"))
        agent = Agent(model=model, tools=create_coding_tools(str(tmp_path), spill=spill), api_key="k")
        await agent.prompt("write both")

    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert [(r.tool_call_id, r.is_error) for r in _results(agent)] == [("call_a", True), ("call_b", True)]

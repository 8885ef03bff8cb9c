"""The coding tools in a full agent loop, over each wire protocol against the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.agent import Agent
from tau.ai import Model, ToolResultMessage
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn
from tau.tools import SpillDirectory, create_coding_tools

BASE_PATHS = {
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "anthropic-messages": "",
    "google-generative-ai": "/v1beta",
}


@pytest.mark.parametrize("api", list(BASE_PATHS))
async def test_read_and_bash_results_reach_the_model_on_every_api(tmp_path: Path, api: str) -> None:
    (tmp_path / "notes.txt").write_text("the answer is 42\n")
    with FakeLLMServer() as server, SpillDirectory() as spill:
        server.add(
            Turn(
                tool_calls=[
                    ScriptedToolCall("read", {"path": "notes.txt"}, id="call_read"),
                    ScriptedToolCall("bash", {"command": "echo from-bash && exit 3"}, id="call_bash"),
                ]
            ),
            Turn(text="The notes say 42."),
        )
        model = Model(id="m", api=api, provider="fake", base_url=server.url(BASE_PATHS[api]))
        agent = Agent(model=model, tools=create_coding_tools(str(tmp_path), spill=spill), api_key="k")
        await agent.prompt("What do the notes say?")
        second_request = str(server.requests[1].body)

    assert agent.state.error_message is None, agent.state.error_message
    results = [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_name, r.is_error) for r in results] == [("read", False), ("bash", True)]
    assert "the answer is 42" in second_request
    assert "from-bash" in second_request
    assert agent.state.messages[-1].text() == "The notes say 42."  # type: ignore[union-attr]

"""Prefix stability (overview §5 item 7): every request of a session extends the previous one."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tau.runtime.sdk import create_agent_session
from tau.runtime.services import create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, text_turn, tool_turn

TURNS = 20


async def test_twenty_tool_turns_each_extend_the_previous_request_byte_for_byte(
    project: str, agent_dir: str
) -> None:
    with FakeLLMServer() as server:
        server.add(*[tool_turn("bash", {"command": f"echo step {i}"}, id=f"call_{i}") for i in range(TURNS)])
        server.add(text_turn("All steps done."))
        provider = {
            "baseUrl": server.url("/v1"),
            "api": "openai-completions",
            "apiKey": "sk-test",
            "headers": {"X-Trace": "prefix-test"},
            "models": [{"id": "fake-model"}],
        }
        Path(agent_dir, "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
        services = create_agent_session_services(cwd=project, agent_dir=agent_dir)
        model = services.model_registry.find("fake", "fake-model")
        assert model is not None
        session = create_agent_session(
            services=services,
            session_manager=SessionManager.create(project, agent_dir=agent_dir),
            model=model,
            tools=["bash"],
        ).session
        await session.prompt("Run the steps one by one.")
        requests = list(server.requests)
        await session.dispose()

    assert session.get_last_assistant_text() == "All steps done."
    assert len(requests) == TURNS + 1
    for previous, current in itertools.pairwise(requests):
        before = json.dumps(previous.body["messages"], ensure_ascii=False, separators=(",", ":"))
        after = json.dumps(current.body["messages"], ensure_ascii=False, separators=(",", ":"))
        assert after.startswith(before[:-1]) and len(after) > len(before)
        assert current.body["tools"] == previous.body["tools"]
    last = requests[-1]
    assert last.body["messages"][-1]["content"].startswith("step 19")
    assert last.headers.get("authorization") == "Bearer sk-test"
    assert last.headers.get("x-trace") == "prefix-test"

"""The ``task`` tool (issue #35): a child agent with a fresh context, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tau.ai.types import ToolResultMessage
from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn, text_turn, tool_turn


def _session(server: FakeLLMServer, project: str, agent_dir: str, tools: list[str]) -> AgentSession:
    provider = {
        "baseUrl": server.url("/v1"),
        "api": "openai-completions",
        "apiKey": "sk-test",
        "models": [{"id": "fake-model"}],
    }
    Path(agent_dir, "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
    services = create_agent_session_services(cwd=project, agent_dir=agent_dir)
    model = services.model_registry.find("fake", "fake-model")
    assert model is not None
    return create_agent_session(
        services=services,
        session_manager=SessionManager.create(project, agent_dir=agent_dir),
        model=model,
        tools=tools,
    ).session


def _tool_results(session: AgentSession) -> list[ToolResultMessage]:
    return [m for m in session.messages if isinstance(m, ToolResultMessage)]


def _text(result: ToolResultMessage) -> str:
    return "".join(block.text for block in result.content if block.type == "text")


def _write_agent(agent_dir: str, name: str, body: str, **fields: str) -> None:
    folder = Path(agent_dir, "agents")
    folder.mkdir(exist_ok=True)
    front = "\n".join(f"{k}: {v}" for k, v in fields.items())
    (folder / f"{name}.md").write_text(f"---\nname: {name}\n{front}\n---\n{body}\n")


async def test_child_answer_comes_back_as_the_tool_result(project: str, agent_dir: str) -> None:
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Count the files."}, id="call_1"))
        server.add(text_turn("There are 3 files."))
        server.add(text_turn("The child says 3."))
        session = _session(server, project, agent_dir, ["read", "bash", "task"])
        await session.prompt("Delegate the count.")
        requests = list(server.requests)
        await session.dispose()
    [result] = _tool_results(session)
    assert not result.is_error
    assert _text(result) == "There are 3 files."
    assert session.get_last_assistant_text() == "The child says 3."
    child_request = requests[1].body
    assert child_request["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Count the files."}],
    }
    assert result.details["usage"]["totalTokens"] > 0
    assert result.details["turns"] == 1


async def test_child_transcript_is_a_session_file_naming_its_parent(project: str, agent_dir: str) -> None:
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Look around."}), text_turn("Nothing here."), text_turn("ok"))
        session = _session(server, project, agent_dir, ["read", "task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    child_file = Path(result.details["sessionFile"])
    header = json.loads(child_file.read_text().splitlines()[0])
    assert header["type"] == "session"
    assert header["parentSession"] == session.session_file
    resumed = SessionManager.open(str(child_file))
    texts = [json.dumps(e.to_json()) for e in resumed.get_branch()]
    assert any("Nothing here." in t for t in texts)


async def test_child_first_request_keeps_the_parents_prompt_and_tools(project: str, agent_dir: str) -> None:
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Sub-task."}), text_turn("child done"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["read", "bash", "task"])
        await session.prompt("Delegate.")
        requests = list(server.requests)
        await session.dispose()
    parent, child = requests[0].body, requests[1].body
    assert child["messages"][0] == parent["messages"][0]  # the system prompt, byte for byte
    assert child["tools"] == parent["tools"]


async def test_agent_definition_gives_instructions_and_tools(project: str, agent_dir: str) -> None:
    _write_agent(
        agent_dir, "scout", "You are a scout. Report briefly.", description="Fast recon", tools="read, ls"
    )
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Map the repo.", "agent": "scout"}))
        server.add(text_turn("mapped"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["read", "bash", "task"])
        await session.prompt("Delegate to the scout.")
        requests = list(server.requests)
        await session.dispose()
    [result] = _tool_results(session)
    assert not result.is_error, _text(result)
    assert result.details["agent"] == "scout"
    child = requests[1].body
    instructions = child["messages"][-1]["content"][0]["text"]
    assert instructions.startswith("You are a scout. Report briefly.")
    assert instructions.endswith("Map the repo.")
    # The parent's tools stay declared first (the cached prefix); the change is a notice after it.
    parent_tools = requests[0].body["tools"]
    assert child["tools"][: len(parent_tools)] == parent_tools
    assert child["messages"][0] == requests[0].body["messages"][0]
    notice = child["messages"][-1]["content"][-1]["text"]
    assert "- read:" in notice and "- ls:" in notice and "- bash:" not in notice
    assert "scout: Fast recon" in json.dumps(parent_tools)


async def test_unknown_agent_is_a_tool_error_naming_the_defined_ones(project: str, agent_dir: str) -> None:
    _write_agent(agent_dir, "scout", "Scout.", description="Recon")
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "x", "agent": "nobody"}), text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    assert _text(result) == "task: unknown agent 'nobody'; defined agents: scout"


async def test_two_tasks_in_one_reply_both_run(project: str, agent_dir: str) -> None:
    calls = [
        ScriptedToolCall(name="task", arguments={"prompt": "first"}, id="a"),
        ScriptedToolCall(name="task", arguments={"prompt": "second"}, id="b"),
    ]
    with FakeLLMServer() as server:
        server.add(Turn(tool_calls=calls), text_turn("answer one"), text_turn("answer two"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate twice.")
        await session.dispose()
    results = _tool_results(session)
    assert sorted(_text(r) for r in results) == ["answer one", "answer two"]
    assert len({r.details["sessionFile"] for r in results}) == 2


async def test_failing_child_is_a_tool_error_with_its_transcript(project: str, agent_dir: str) -> None:
    from tau.testing.fake_llm import Fault

    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "x"}))
        server.add(Turn(fault=Fault(kind="status", status=400, body='{"error": {"message": "bad request"}}')))
        server.add(text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    assert _text(result).startswith("task: the child failed:")
    assert "transcript:" in _text(result)


async def test_delegation_deeper_than_the_limit_is_refused(project: str, agent_dir: str) -> None:
    turns: list[Any] = [tool_turn("task", {"prompt": f"level {i}"}, id=f"c{i}") for i in range(4)]
    with FakeLLMServer() as server:
        server.add(*turns)
        server.add(*[text_turn(f"done {i}") for i in range(4)])
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate deeply.")
        requests = list(server.requests)
        await session.dispose()
    deepest = requests[4].body["messages"][-1]
    assert deepest["role"] == "tool"
    assert "only 3 levels deep" in deepest["content"]


async def test_aborting_the_parent_aborts_the_child(project: str, agent_dir: str) -> None:
    import asyncio
    import time

    from tau.testing.fake_llm import Fault

    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Work slowly."}))
        server.add(Turn(text="never finished", fault=Fault(kind="stall", after_events=1, seconds=30)))
        session = _session(server, project, agent_dir, ["task"])
        run = asyncio.create_task(session.prompt("Delegate."))
        while len(server.requests) < 2:
            await asyncio.sleep(0.02)
        started = time.monotonic()
        await session.abort()
        await asyncio.wait_for(run, 10)
        elapsed = time.monotonic() - started
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    assert "aborted" in _text(result).lower()
    assert elapsed < 5


async def test_child_cannot_call_a_tool_its_agent_does_not_have(project: str, agent_dir: str) -> None:
    _write_agent(agent_dir, "reader", "Only read.", description="Reads", tools="read")
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Try bash.", "agent": "reader"}))
        server.add(tool_turn("bash", {"command": "touch escaped"}), text_turn("could not"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["read", "bash", "task"])
        await session.prompt("Delegate.")
        requests = list(server.requests)
        await session.dispose()
    refused = requests[2].body["messages"][-1]
    assert refused["role"] == "tool" and "bash" in refused["content"]
    assert not Path(project, "escaped").exists()


async def test_html_export_shows_the_childs_transcript_under_the_call(project: str, agent_dir: str) -> None:
    _write_agent(agent_dir, "scout", "Look only.", description="Recon", tools="bash")
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Inspect the tree.", "agent": "scout"}))
        server.add(
            tool_turn("bash", {"command": "echo child-was-here"}),
            text_turn("Child summary."),
            text_turn("ok"),
        )
        session = _session(server, project, agent_dir, ["bash", "task"])
        await session.prompt("Delegate.")
        page = Path(session.export_to_html(str(Path(project, "out.html")))).read_text()
        await session.dispose()
    assert "sub-agent scout transcript" in page
    assert "Inspect the tree." in page and "echo child-was-here" in page and "Child summary." in page


async def test_a_long_answer_is_cut_for_the_parent_and_kept_whole_in_the_transcript(
    project: str, agent_dir: str
) -> None:
    long_answer = "\n".join(f"line {i} " + "x" * 40 for i in range(3000))
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Dump."}), text_turn(long_answer), text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    text = _text(result)
    assert text.startswith("line 0 ") and "line 2999" not in text
    assert "[The child's answer was cut at" in text and result.details["truncated"] is True
    assert "line 2999" in Path(result.details["sessionFile"]).read_text()


async def test_childs_tool_calls_are_events_under_the_task_call(project: str, agent_dir: str) -> None:
    from tau.agent.events import ToolExecutionEnd, ToolExecutionStart

    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Say hi."}, id="t1"))
        server.add(tool_turn("bash", {"command": "echo hi-child"}, id="b1"))
        server.add(text_turn("said hi"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["bash", "task"])
        seen: list[Any] = []
        session.subscribe(seen.append)
        await session.prompt("Delegate.")
        await session.dispose()
    starts = [(e.tool_call_id, e.parent_tool_call_id) for e in seen if isinstance(e, ToolExecutionStart)]
    assert starts == [("t1", None), ("t1/b1", "t1")]
    ends = [e for e in seen if isinstance(e, ToolExecutionEnd)]
    assert [(e.tool_call_id, e.parent_tool_call_id) for e in ends] == [("t1/b1", "t1"), ("t1", None)]
    assert "hi-child" in "".join(c.text for c in ends[0].result.content if c.type == "text")
    # the transcript holds the task call's result only; the child's call is in the child's file
    assert [r.tool_call_id for r in _tool_results(session)] == ["t1"]


async def test_a_grandchilds_calls_nest_under_the_childs_task_call(project: str, agent_dir: str) -> None:
    from tau.agent.events import ToolExecutionStart

    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Delegate again."}, id="t1"))
        server.add(tool_turn("task", {"prompt": "Run ls."}, id="t2"))
        server.add(tool_turn("ls", {}, id="l1"))
        server.add(text_turn("listed"), text_turn("child done"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["ls", "task"])
        seen: list[Any] = []
        session.subscribe(seen.append)
        await session.prompt("Delegate.")
        await session.dispose()
    starts = [(e.tool_call_id, e.parent_tool_call_id) for e in seen if isinstance(e, ToolExecutionStart)]
    assert starts == [("t1", None), ("t1/t2", "t1"), ("t1/t2/l1", "t1/t2")]


async def test_a_child_past_its_timeout_is_stopped_with_one_tool_error(project: str, agent_dir: str) -> None:
    import time

    from tau.testing.fake_llm import Fault

    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Work slowly.", "timeout": 0.5}))
        server.add(Turn(text="never finished", fault=Fault(kind="stall", after_events=1, seconds=30)))
        server.add(text_turn("The child ran out of time."))
        session = _session(server, project, agent_dir, ["task"])
        started = time.monotonic()
        await session.prompt("Delegate.")
        elapsed = time.monotonic() - started
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    child_file = _text(result).rsplit(" ", 1)[-1]
    assert (
        _text(result)
        == f"task: the child was stopped after 0.5 s (its time limit); its work so far is in {child_file}"
    )
    assert elapsed < 5
    assert session.get_last_assistant_text() == "The child ran out of time."
    resumed = SessionManager.open(child_file)  # readable, and it has the child's prompt
    assert any("Work slowly." in json.dumps(e.to_json()) for e in resumed.get_branch())


async def test_the_timeout_setting_applies_when_the_call_gives_none(project: str, agent_dir: str) -> None:
    from tau.testing.fake_llm import Fault

    Path(agent_dir, "settings.json").write_text(json.dumps({"task": {"timeoutSeconds": 0.3}}))
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Work slowly."}))
        server.add(Turn(text="never finished", fault=Fault(kind="stall", after_events=1, seconds=30)))
        server.add(text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    assert _text(result).startswith("task: the child was stopped after 0.3 s")


async def test_a_bad_timeout_is_a_tool_error(project: str, agent_dir: str) -> None:
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "x", "timeout": -1}), text_turn("ok"))
        session = _session(server, project, agent_dir, ["task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    assert result.is_error
    assert _text(result) == "task: timeout must be a number of seconds above 0"


async def test_fewer_tools_than_the_parents_are_told_as_removals_not_a_new_prompt(
    project: str, agent_dir: str
) -> None:
    _write_agent(agent_dir, "scout", "Only look.", description="Recon", tools="read, ls")
    with FakeLLMServer() as server:
        server.add(tool_turn("task", {"prompt": "Map the repo.", "agent": "scout"}))
        server.add(tool_turn("ls", {}), text_turn("mapped"), text_turn("ok"))
        session = _session(server, project, agent_dir, ["read", "bash", "ls", "task"])
        await session.prompt("Delegate to the scout.")
        requests = list(server.requests)
        await session.dispose()
    [result] = _tool_results(session)
    assert not result.is_error, _text(result)
    parent, child, child_again = requests[0].body, requests[1].body, requests[2].body
    assert child["messages"][0] == parent["messages"][0]  # the parent's prompt, byte for byte
    assert child["tools"] == parent["tools"]  # a notice model keeps the list and refuses removed ones
    notice = child["messages"][-1]["content"][-1]["text"]
    assert "Updated system prompt section" not in notice
    assert "Tools no longer available (a call to one of them is refused): bash, task" in notice
    assert (
        child_again["messages"][: len(child["messages"])] == child["messages"]
    )  # the child's own prefix holds
    # The transcript records the child's own tools, so a resumed child has read and ls only.
    resumed = SessionManager.open(result.details["sessionFile"])
    recorded = resumed.branch_system_message()
    assert recorded is not None
    assert [t["name"] for t in recorded.tools_added or []] == ["read", "ls"]


async def test_a_timed_out_childs_command_is_stopped_with_it(project: str, agent_dir: str) -> None:
    import os
    import time

    pid_file = Path(project, "sleeper.pid")
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    with FakeLLMServer() as server:
        server.add(
            tool_turn("task", {"prompt": "Wait.", "timeout": 1}), tool_turn("bash", {"command": command})
        )
        server.add(text_turn("ok"))
        session = _session(server, project, agent_dir, ["bash", "task"])
        await session.prompt("Delegate.")
        await session.dispose()
    [result] = _tool_results(session)
    assert _text(result).startswith("task: the child was stopped after 1 s")
    sleeper = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(sleeper, 0)
        except ProcessLookupError:
            break
        try:
            if Path(f"/proc/{sleeper}/stat").read_text().split(") ", 1)[1][0] == "Z":
                break  # dead, waiting for its parent to read it
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the timed-out child's command is still running")

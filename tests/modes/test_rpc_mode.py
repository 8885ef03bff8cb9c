"""RPC mode through a real subprocess driven by ``RpcClient``, against the fake LLM server (spec 70
§5 and its test cases 16–28)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient, RpcError
from tau.testing.fake_llm import Fault, ScriptedToolCall, ScriptedUsage, Turn

ASK_EXTENSION = """
from tau.agent.tool import text_result
from tau.extensions import ToolDefinition


def setup(tau):
    async def ask(tool_call_id, params, signal, on_update, ctx):
        confirmed = await ctx.ui.confirm("Proceed?", "Run the step?", timeout=params.get("timeout"))
        return text_result(f"confirmed={confirmed}")

    tau.register_tool(
        ToolDefinition(name="ask", label="Ask", description="Ask the user", parameters={"type": "object"}, execute=ask)
    )
"""


def rpc_command(*extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tau",
        "--mode",
        "rpc",
        "--provider",
        "local",
        "--model",
        "fake-model",
        *extra,
    ]


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


@pytest.fixture
async def client(tau: TauCommand) -> AsyncIterator[RpcClient]:
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        yield rpc


def entries(path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def tool_turn(command: str = "echo hi") -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("bash", {"command": command})])


def stalled(text: str, seconds: float) -> Turn:
    return Turn(text=text, chunk_size=2, fault=Fault("stall", after_events=2, seconds=seconds))


# -- framing and responses -------------------------------------------------------------------------


async def test_get_state_echoes_the_id_and_reports_the_session(client: RpcClient) -> None:
    response = await client.send({"id": "1", "type": "get_state"})
    assert response["id"] == "1" and response["success"] is True
    assert response["data"]["sessionId"] and response["data"]["thinkingLevel"]
    assert response["data"]["model"]["id"] == "fake-model"


async def test_an_invalid_line_is_answered_as_a_parse_error(client: RpcClient) -> None:
    await client.write_line("{not json")
    event = await client.next_event()
    assert event is not None
    assert event["command"] == "parse" and event["success"] is False
    assert event["error"].startswith("Failed to parse command")
    assert (await client.send({"type": "get_state"}))["success"]  # still serving


async def test_an_unknown_type_is_an_error_naming_it(client: RpcClient) -> None:
    response = await client.send({"type": "fly_to_moon"})
    assert response["success"] is False and response["command"] == "fly_to_moon"
    assert "fly_to_moon" in response["error"]


async def test_u2028_round_trips_crlf_is_accepted_and_a_last_line_without_newline_runs(
    client: RpcClient,
) -> None:
    name = "a\u2028b\u2029c"
    await client.write_line(
        json.dumps({"id": "n", "type": "set_session_name", "name": name}, ensure_ascii=False), end="\r\n"
    )
    await client.write_line(json.dumps({"id": "s", "type": "get_state"}), end="")
    assert await client.close() == 0
    by_id = {line.get("id"): line for line in client.lines if line.get("type") == "response"}
    assert by_id["n"]["success"] is True
    assert by_id["s"]["data"]["sessionName"] == name
    assert client.lines[-1]["id"] == "s"


# -- prompting -------------------------------------------------------------------------------------


async def test_a_prompt_runs_tool_turns_and_replies(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(tool_turn("echo one"), tool_turn("echo two"), Turn(text="All done.", chunk_size=3))
    events = await client.prompt("run two commands")
    kinds = [e["type"] for e in events]
    assert kinds.count("tool_execution_end") == 2 and kinds[-2:] == ["agent_end", "agent_settled"]
    outputs = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
    assert outputs == ["one\n", "two\n"]
    deltas = [e for e in events if e["type"] == "message_update"]
    assert all("partial" not in e["assistantMessageEvent"] and "message" not in e for e in deltas)
    text = "".join(
        e["assistantMessageEvent"].get("delta", "")
        for e in deltas
        if e["assistantMessageEvent"]["type"] == "text_delta"
    )
    assert text == "All done."
    assert await client.call("get_last_assistant_text") == {"text": "All done."}
    assert all("id" not in e for e in events)


async def test_a_prompt_while_streaming_needs_a_streaming_behavior(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(stalled("slow reply", 1.0), Turn(text="after the steer"))
    await client.call("prompt", message="start")
    await client.wait_for("message_start")
    with pytest.raises(RpcError, match="Agent is already processing"):
        await client.call("prompt", message="again")
    await client.call("prompt", message="change course", streamingBehavior="steer")
    events = await client.wait_for("agent_end")
    queue_updates = [e for e in events if e["type"] == "queue_update"]
    assert queue_updates[0]["steering"] == ["change course"]
    assert await client.call("get_last_assistant_text") == {"text": "after the steer"}


async def test_each_prompt_gets_one_response_around_agent_start(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    await client.prompt("first", id="p1")
    await client.prompt("second", id="p2")
    responses = [line for line in client.lines if line.get("type") == "response"]
    assert [r["id"] for r in responses] == ["p1", "p2"]
    kinds = [line.get("id") or line["type"] for line in client.lines]
    assert kinds.index("p1") < kinds.index("agent_end")  # answered while the run goes on


async def test_bash_returns_output_and_is_recorded_for_the_model(client: RpcClient) -> None:
    data = await client.call("bash", command="echo hello; exit 3")
    assert data["output"] == "hello\n" and data["exitCode"] == 3 and data["cancelled"] is False
    messages = (await client.call("get_messages"))["messages"]
    assert messages[-1]["role"] == "bashExecution" and messages[-1]["command"] == "echo hello; exit 3"


async def test_a_session_name_must_not_be_blank_and_is_recorded(client: RpcClient) -> None:
    with pytest.raises(RpcError, match="Session name cannot be empty"):
        await client.call("set_session_name", name="  ")
    await client.call("set_session_name", name="refactor")
    state = await client.call("get_state")
    assert state["sessionName"] == "refactor"
    event = await client.next_event()
    assert event == {"type": "session_info_changed", "name": "refactor"}


async def test_compact_returns_the_summary_and_emits_its_events(tau: TauCommand, client: RpcClient) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 200}}))
    await client.close()
    async with RpcClient(rpc_command(), cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(
            Turn(text="first reply " + "x" * 2000, usage=ScriptedUsage(input=500, output=600)),
            Turn(text="second reply " + "y" * 2000, usage=ScriptedUsage(input=1200, output=600)),
            *[Turn(text="## Goal\nthe summary")] * 2,  # the history, and a split turn's prefix
        )
        await rpc.prompt("first task")
        await rpc.prompt("second task")
        data = await rpc.call("compact")
        assert "the summary" in data["summary"]
        assert data["firstKeptEntryId"] and data["tokensBefore"] > 0
        events = [line for line in rpc.lines if line["type"].startswith("compaction_")]
        assert events[0] == {"type": "compaction_start", "reason": "manual"}
        assert events[-1]["type"] == "compaction_end" and events[-1]["aborted"] is False
        state = await rpc.call("get_state")
        assert any(e["type"] == "compaction" for e in entries(state["sessionFile"]))


async def test_unknown_models_and_non_reasoning_thinking_cycles(client: RpcClient) -> None:
    with pytest.raises(RpcError, match="Model not found: local/nope"):
        await client.call("set_model", provider="local", modelId="nope")
    assert await client.call("cycle_thinking_level") is None
    model = await client.call("set_model", provider="local", modelId="fake-model")
    assert model["id"] == "fake-model"


async def test_export_html_writes_the_page_once_the_model_has_answered(
    tau: TauCommand, client: RpcClient
) -> None:
    with pytest.raises(RpcError, match="Nothing to export yet"):
        await client.call("export_html")
    tau.server.add(Turn(text="Hello <b>there</b>"))
    await client.prompt("hi")
    named = await client.call("export_html", outputPath="page.html")
    assert named == {"path": str(tau.work / "page.html")}
    assert "Hello &lt;b&gt;there&lt;/b&gt;" in (tau.work / "page.html").read_text()
    state = await client.call("get_state")
    default = await client.call("export_html")
    assert default["path"] == str(tau.work / f"tau-session-{Path(state['sessionFile']).stem}.html")
    assert Path(default["path"]).exists()


# -- extension UI ----------------------------------------------------------------------------------


async def test_an_extension_confirm_is_asked_of_the_client_and_times_out_to_false(tau: TauCommand) -> None:
    extension = tau.work / "ask.py"
    extension.write_text(ASK_EXTENSION)
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(
            Turn(tool_calls=[ScriptedToolCall("ask", {})]),
            Turn(tool_calls=[ScriptedToolCall("ask", {"timeout": 0.2})]),
            Turn(text="done"),
        )
        await rpc.call("prompt", message="ask me twice")
        first = (await rpc.wait_for("extension_ui_request"))[-1]
        assert first["method"] == "confirm" and first["title"] == "Proceed?" and "timeout" not in first
        await rpc.respond_ui(first["id"], confirmed=True)
        events = await rpc.wait_for("agent_end")
        second = next(e for e in events if e["type"] == "extension_ui_request")
        assert second["timeout"] == 200
        results = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
        assert results == ["confirmed=True", "confirmed=False"]


COMMAND_EXTENSION = """
def setup(tau):
    @tau.register_command("hello", description="Say hello")
    async def hello(args, ctx):
        pass
"""


async def test_get_commands_lists_extension_commands_first(tau: TauCommand) -> None:
    extension = tau.work / "hello.py"
    extension.write_text(COMMAND_EXTENSION)
    prompts = tau.work / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review the code\n---\nReview $@")
    async with RpcClient(rpc_command("-a", "-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        commands = (await rpc.call("get_commands"))["commands"]
    first, *rest = commands
    assert first == {
        "name": "hello",
        "description": "Say hello",
        "source": "extension",
        "sourceInfo": {"path": str(extension), "source": "cli", "scope": "temporary", "origin": "top-level"},
    }
    # pi 1.6 lists its built-in llama and mcp commands with the extension commands, before the templates.
    assert [(c["name"], c["source"]) for c in rest] == [
        ("llama", "extension"),
        ("mcp", "extension"),
        ("review", "prompt"),
    ]
    assert rest[2]["sourceInfo"] == {
        "path": str(prompts / "review.md"),
        "source": "auto",
        "scope": "project",
        "origin": "top-level",
        "baseDir": str(tau.work / ".tau"),
    }


async def test_get_commands_places_a_pi_folders_extension_and_template_in_the_project(
    tau: TauCommand,
) -> None:
    pi = tau.work / ".pi"
    (pi / "extensions").mkdir(parents=True)
    (pi / "extensions" / "hello.py").write_text(COMMAND_EXTENSION)
    (pi / "prompts").mkdir()
    (pi / "prompts" / "review.md").write_text("Review $@")
    async with RpcClient(rpc_command("-a"), cwd=str(tau.work), env=tau.env) as rpc:
        commands = {c["name"]: c["sourceInfo"] for c in (await rpc.call("get_commands"))["commands"]}
    for name, path in (("hello", pi / "extensions" / "hello.py"), ("review", pi / "prompts" / "review.md")):
        assert commands[name] == {
            "path": str(path),
            "source": "auto",
            "scope": "project",
            "origin": "top-level",
            "baseDir": str(pi),  # pi 1.6 names the folder a discovered resource was found in
        }


SHUTDOWN_EXTENSION = """
def setup(tau):
    @tau.register_command("quit", description="Stop tau")
    async def quit(args, ctx):
        ctx.shutdown()

    @tau.on("session_shutdown")
    def goodbye(event, ctx):
        with open("shutdown.txt", "w") as out:
            out.write(event.reason)
"""


async def test_an_extension_shutdown_exits_after_the_command_response(tau: TauCommand) -> None:
    extension = tau.work / "quit.py"
    extension.write_text(SHUTDOWN_EXTENSION)
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("get_state")
        assert await rpc.call("prompt", message="/quit") == {"disposition": "handled"}
        assert await asyncio.wait_for(rpc.process.wait(), 10) == 0
    assert (tau.work / "shutdown.txt").read_text() == "quit"
    assert not tau.server.requests


# -- sessions --------------------------------------------------------------------------------------


async def test_fork_returns_the_text_and_switches_file_and_clone_keeps_messages(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    await client.prompt("first question")
    await client.prompt("second question")
    before = await client.call("get_state")
    forks = (await client.call("get_fork_messages"))["messages"]
    assert [f["text"] for f in forks] == ["first question", "second question"]

    data = await client.call("fork", entryId=forks[1]["entryId"])
    assert data == {"text": "second question", "cancelled": False}
    forked = await client.call("get_state")
    # The recorded system message, the first question and its answer, as pi 1.6 counts them.
    assert forked["sessionFile"] != before["sessionFile"] and forked["messageCount"] == 3

    assert await client.call("clone") == {"cancelled": False}
    cloned = await client.call("get_state")
    assert cloned["messageCount"] == forked["messageCount"]
    assert cloned["sessionId"] != forked["sessionId"]

    assert await client.call("new_session") == {"cancelled": False}
    assert (await client.call("get_state"))["messageCount"] == 0
    tau.server.add(Turn(text="fresh"))
    await client.prompt("in the new session")  # events follow the replacement session
    assert await client.call("get_last_assistant_text") == {"text": "fresh"}


async def test_switch_session_resumes_another_file(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(Turn(text="remember me"))
    await client.prompt("hello")
    first = (await client.call("get_state"))["sessionFile"]
    await client.call("new_session")
    assert await client.call("switch_session", sessionPath=first) == {"cancelled": False}
    assert await client.call("get_last_assistant_text") == {"text": "remember me"}


async def test_session_stats_count_the_conversation(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(tool_turn(), Turn(text="ok"))
    await client.prompt("go")
    stats = await client.call("get_session_stats")
    assert (stats["userMessages"], stats["assistantMessages"], stats["toolCalls"], stats["toolResults"]) == (
        1,
        2,
        1,
        1,
    )
    # the recorded system message counts too, as in pi 1.6
    assert stats["tokens"]["input"] == 20 and stats["totalMessages"] == 5


# -- ending ----------------------------------------------------------------------------------------


async def test_end_of_input_lets_a_running_prompt_finish_then_exits_0(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(tool_turn("echo step"), stalled("finished after the input ended", 0.5))
    await client.call("prompt", message="work")
    state = await client.call("get_state")
    assert await client.close() == 0
    assert client.lines[-1]["type"] == "agent_settled"
    lines = entries(state["sessionFile"])
    roles = [
        e["message"]["role"] for e in lines if e["type"] == "message" and e["message"]["role"] != "system"
    ]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert lines[-1]["message"]["stopReason"] == "stop"
    assert lines[-1]["message"]["content"][0]["text"] == "finished after the input ended"


async def test_end_of_input_when_idle_exits_0_with_a_consistent_session(
    tau: TauCommand, client: RpcClient
) -> None:
    tau.server.add(Turn(text="hi"))
    await client.prompt("hello")
    state = await client.call("get_state")
    assert await client.close() == 0
    lines = entries(state["sessionFile"])
    assert lines[0]["type"] == "session"
    ids = {e["id"] for e in lines[1:]}
    assert all(e["parentId"] is None or e["parentId"] in ids for e in lines[1:])


async def test_sigterm_aborts_the_run_cleanly_and_exits_143(tau: TauCommand, client: RpcClient) -> None:
    tau.server.add(stalled("never finished", 10))
    await client.call("prompt", message="long job")
    await client.wait_for("message_update")
    state = await client.call("get_state")
    client.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(client.process.wait(), 10) == 143
    last = entries(state["sessionFile"])[-1]
    assert last["message"]["role"] == "assistant" and last["message"]["stopReason"] == "aborted"


COMPONENT_EXTENSION = """
from tau.agent.tool import text_result
from tau.extensions import ToolDefinition


def setup(tau):
    built = []

    async def show(tool_call_id, params, signal, on_update, ctx):
        answer = await ctx.ui.custom(lambda *a: built.append("custom"), overlay=True)
        ctx.ui.set_header(lambda *a: built.append("header"))
        ctx.ui.set_footer(lambda *a: built.append("footer"))
        ctx.ui.add_autocomplete_provider(lambda current: built.append("autocomplete"))
        return text_result(f"custom={answer} built={built}")

    tau.register_tool(
        ToolDefinition(name="show", label="Show", description="Show a component", parameters={"type": "object"},
                       execute=show)
    )
"""


async def test_custom_components_answer_none_over_rpc_and_their_factories_never_run(tau: TauCommand) -> None:
    extension = tau.work / "show.py"
    extension.write_text(COMPONENT_EXTENSION)
    async with RpcClient(rpc_command("-e", str(extension)), cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(Turn(tool_calls=[ScriptedToolCall("show", {})]), Turn(text="done"))
        await rpc.call("prompt", message="show it")
        events = await rpc.wait_for("agent_end")
        results = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
        assert results == ["custom=None built=[]"]
        assert not any(e["type"] == "extension_ui_request" for e in events)


async def test_export_html_draws_tools_as_the_extensions_tool_renderers_do(tau: TauCommand) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "extensions"
    (tau.work / "notes.txt").write_text("the notes\n")
    command = rpc_command("-e", str(examples / "tool_titles.py"))
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(
            Turn(tool_calls=[ScriptedToolCall("read", {"path": str(tau.work / "notes.txt")})]),
            Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]),
            Turn(text="Read."),
        )
        await rpc.prompt("read the notes")
        await rpc.call("export_html", outputPath="page.html")
    page = (tau.work / "page.html").read_text()
    drawn = page.split('<pre class="extension-render">', 1)[1].split("</pre>", 1)[0]
    assert "read notes.txt" in drawn
    assert page.count('class="extension-render"') == 1  # bash keeps the generic layout
    assert "$ echo hi" in page


async def test_a_sub_agents_tool_calls_are_events_naming_the_task_call(tau: TauCommand) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("task", {"prompt": "Echo."}, id="task_1")]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo from-child"}, id="b1")]),
        Turn(text="child said it"),
        Turn(text="Done."),
    )
    async with RpcClient(rpc_command("--tools", "+task"), cwd=str(tau.work), env=tau.env) as rpc:
        events = await rpc.prompt("delegate")
    calls = [
        (e["type"], e["toolCallId"], e.get("parentToolCallId"))
        for e in events
        if e["type"] in ("tool_execution_start", "tool_execution_end")
    ]
    assert calls == [
        ("tool_execution_start", "task_1", None),
        ("tool_execution_start", "task_1/b1", "task_1"),
        ("tool_execution_end", "task_1/b1", "task_1"),
        ("tool_execution_end", "task_1", None),
    ]

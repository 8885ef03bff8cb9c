"""``tau --mode acp``: tool calls as the editor sees them, and the editor's files, terminals and MCP
servers as the session's."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from acp import (
    text_block,
)
from acp.schema import (
    AgentPlanUpdate,
    AvailableCommandsUpdate,
    EnvVariable,
    HttpMcpServer,
    McpServerStdio,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)
from acp_client import RecordingClient, TerminalClient, initialize, spawn_tau
from tau_command import TauCommand

from tau.ai.types import TextContent
from tau.testing.fake_llm import ScriptedToolCall, Turn, text_turn, tool_turn
from tau.tools.bash import create_bash_tool

pytestmark = pytest.mark.timeout(30)


STAMP_EXTENSION = """
from pathlib import Path


def setup(tau):
    @tau.register_command("stamp", description="Stamp the project")
    async def stamp(args, ctx):
        Path(ctx.cwd, "stamp.txt").write_text(args)
"""


async def test_read_and_edit_go_through_the_clients_file_system_and_commands_are_offered(
    tau: TauCommand,
) -> None:
    path = str(tau.work / "unsaved.py")
    files = {path: "# config\nx = 1\ny = 2\n"}  # an editor buffer that was never saved to disk
    tau.server.add(
        tool_turn("read", {"path": "unsaved.py", "offset": 2}, id="call-read"),
        tool_turn("edit", {"path": "unsaved.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
        text_turn("Bumped."),
    )
    (tau.agent_dir / "prompts").mkdir()
    (tau.agent_dir / "prompts" / "review.md").write_text(
        "---\ndescription: Review the diff\n---\nReview it.\n"
    )
    (tau.agent_dir / "skills" / "deploy").mkdir(parents=True)
    (tau.agent_dir / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship it\n---\nSteps.\n"
    )
    extension = tau.work / "stamp.py"
    extension.write_text(STAMP_EXTENSION)
    client = RecordingClient(files=files)
    async with spawn_tau(tau, client, "-e", str(extension)) as (conn, _):
        await initialize(conn, fs=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        assert (
            await conn.prompt(session_id=session_id, prompt=[text_block("Bump x")])
        ).stop_reason == "end_turn"
        [commands] = client.of(AvailableCommandsUpdate)
        assert [(c.name, c.description) for c in commands.available_commands] == [
            ("stamp", "Stamp the project"),
            ("review", "Review the diff"),
            ("skill:deploy", "Ship it"),
        ]
        await conn.prompt(session_id=session_id, prompt=[text_block("/stamp v2")])  # an offered command runs
    assert (tau.work / "stamp.txt").read_text() == "v2"
    assert files[path] == "# config\nx = 2\ny = 2\n"
    assert not os.path.exists(path)
    read_start = next(u for u in client.of(ToolCallStart) if u.tool_call_id == "call-read")
    assert (read_start.locations[0].path, read_start.locations[0].line) == (path, 2)
    read_result = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-read" and u.status)
    assert read_result.status == "completed" and "x = 1" in read_result.content[0].content.text


@pytest.mark.parametrize("in_editor", [False, True])
async def test_a_writes_diff_has_the_text_it_replaced_and_the_file_lands_where_the_files_are(
    tau: TauCommand, in_editor: bool
) -> None:
    old, new = str(tau.work / "old.txt"), str(tau.work / "new.txt")
    files = {old: "before\n"} if in_editor else None
    if not in_editor:
        Path(old).write_text("before\n")
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("write", {"path": "old.txt", "content": "after\n"}, id="call-old"),
                ScriptedToolCall("write", {"path": "new.txt", "content": "fresh\n"}, id="call-new"),
            ]
        ),
        text_turn("Written."),
    )
    client = RecordingClient(files=files)
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn, fs=in_editor)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("Write")])
    starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
    assert starts["call-old"].kind == "edit" and starts["call-old"].locations[0].path == old
    finals = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status}
    diffs = {call: finals[call].content[0] for call in ("call-old", "call-new")}
    assert (diffs["call-old"].path, diffs["call-old"].old_text, diffs["call-old"].new_text) == (
        old,
        "before\n",
        "after\n",
    )
    assert (diffs["call-new"].path, diffs["call-new"].old_text) == (new, None)
    if in_editor:
        assert files == {old: "after\n", new: "fresh\n"} and not os.path.exists(new)
    else:
        assert (Path(old).read_text(), Path(new).read_text()) == ("after\n", "fresh\n")


@pytest.mark.parametrize(
    ("options", "offered"), [(["--no-builtin-tools"], []), (["--tools", "read,bash"], ["read", "bash"])]
)
async def test_the_editors_tools_are_selected_by_the_tool_options_as_taus_own_are(
    tau: TauCommand, options: list[str], offered: list[str]
) -> None:
    tau.server.add(text_turn("Fine."))
    client = RecordingClient(files={})
    async with spawn_tau(tau, client, *options) as (conn, _):
        await initialize(conn, fs=True, terminal=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("Hi")])
    tools = tau.server.last_request.body.get("tools", [])
    assert [t["function"]["name"] for t in tools] == offered


async def _local_bash(command: str, cwd: Path) -> str:
    """What tau's own bash tool tells the model (its spill file's name left out)."""
    os.environ["RUN_BY"] = "editor"
    try:
        result = await create_bash_tool(str(cwd)).execute("local", {"command": command}, None, None)
    finally:
        del os.environ["RUN_BY"]
    assert result.is_error, "the command should fail"
    [block] = result.content
    assert isinstance(block, TextContent)
    return re.sub(r" Full output: \S+\]", "]", block.text)


async def test_bash_runs_in_the_editors_terminal_truncated_as_tau_truncates_and_an_abort_kills_it(
    tau: TauCommand,
) -> None:
    command = "seq 1 3000; echo by $RUN_BY; exit 3"
    tau.server.add(
        tool_turn("bash", {"command": command}, id="call-seq"),
        text_turn("Counted."),
        tool_turn("bash", {"command": "sleep 30"}, id="call-sleep"),
        text_turn("never sent"),
    )
    client = TerminalClient()
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn, terminal=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Count")])
        assert answer.stop_reason == "end_turn"
        [seen] = [
            re.sub(r" Full output: \S+\]", "]", m["content"])
            for m in tau.server.last_request.body["messages"]
            if m["role"] == "tool"
        ]
        assert seen == await _local_bash(command, tau.work)  # cut as tau's own bash cuts it
        assert "\nby editor\n" in seen and "Command exited with code 3" in seen
        final = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-seq" and u.status)
        assert final.status == "failed"
        assert final.content[0].type == "terminal" and final.content[0].terminal_id == "term-0"
        assert "Command exited with code 3" in final.content[1].content.text

        sleeping = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Wait")]))
        while len(client.processes) < 2:
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(sleeping, 10)).stop_reason == "cancelled"
    assert client.processes["term-1"].returncode == -9
    command, args, cwd, limit = client.requests[0][1]
    assert (command, args[0], cwd) == ("bash", "-c", str(tau.work)) and limit > 50 * 1024
    assert [r for r in client.requests if r[0] in ("kill", "release")] == [
        ("release", "term-0"),
        ("kill", "term-1"),
        ("release", "term-1"),
    ]


async def test_a_todo_tool_updates_the_plan_and_each_prompt_reports_its_usage(tau: TauCommand) -> None:
    models_json = tau.agent_dir / "models.json"
    models = json.loads(models_json.read_text())
    # Dollars per million tokens: the scripted 10 input and 5 output tokens cost $1 each per call.
    models["providers"]["local"]["models"][0]["cost"] = {
        "input": 1e5,
        "output": 2e5,
        "cacheRead": 0,
        "cacheWrite": 0,
    }
    models_json.write_text(json.dumps(models))
    todo = Path(__file__).parents[3] / "examples" / "extensions" / "custom_tool.py"
    tau.server.add(
        tool_turn("todo", {"action": "add", "text": "Write the tests"}),
        tool_turn("todo", {"action": "done", "index": 1}),
        text_turn("Planned and done."),
    )
    client = RecordingClient()
    async with spawn_tau(tau, client, "-e", str(todo)) as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Plan it")])
    plans = [[(e.content, e.status, e.priority) for e in u.entries] for u in client.of(AgentPlanUpdate)]
    assert plans == [[("Write the tests", "pending", "medium")], [("Write the tests", "completed", "medium")]]
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.total_tokens) == (30, 15, 45)
    [usage] = client.of(UsageUpdate)
    assert (usage.used, usage.size) == (15, 100000)
    assert usage.cost.currency == "USD" and usage.cost.amount == pytest.approx(6.0)


MCP_SERVER = """
import os
import sys
try:
    from mcp.server.fastmcp import FastMCP
except ImportError:  # mcp 2.x renamed FastMCP
    from mcp.server.mcpserver import MCPServer as FastMCP

server = FastMCP("notes")


@server.tool()
def shout(text: str) -> str:
    \"\"\"Say the text loudly.\"\"\"
    return text.upper() + os.environ.get("SUFFIX", "")


if len(sys.argv) > 1:
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
else:
    server.run()
"""


async def test_the_mcp_servers_of_session_new_give_that_session_their_tools(tau: TauCommand) -> None:
    script = tau.work / "notes_server.py"
    script.write_text(MCP_SERVER)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    web = subprocess.Popen([sys.executable, str(script), str(port)], stderr=subprocess.DEVNULL)
    tau.server.add(
        tool_turn("tool_search", {"query": "shout loudly"}),
        Turn(
            tool_calls=[
                ScriptedToolCall("mcp__Editor_Notes__shout", {"text": "hello"}, id="call-stdio"),
                ScriptedToolCall("mcp__web__shout", {"text": "web"}, id="call-http"),
            ]
        ),
        text_turn("Shouted."),
    )
    stdio = McpServerStdio(
        name="Editor Notes",
        command=sys.executable,
        args=[str(script)],
        env=[EnvVariable(name="SUFFIX", value="!")],
    )
    http = HttpMcpServer(type="http", name="web", url=f"http://127.0.0.1:{port}/mcp", headers=[])
    client = RecordingClient()
    try:
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:  # the HTTP server is starting
            await asyncio.sleep(0.05)
        async with spawn_tau(tau, client) as (conn, _):
            capabilities = (await initialize(conn)).agent_capabilities.mcp_capabilities
            assert (capabilities.http, capabilities.sse) == (True, False)
            session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[stdio, http])).session_id
            answer = await conn.prompt(session_id=session_id, prompt=[text_block("Shout hello")])
            assert answer.stop_reason == "end_turn"
    finally:
        web.terminate()
        web.wait(10)
    finals = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status}
    assert (
        finals["call-stdio"].status == "completed"
        and finals["call-stdio"].content[0].content.text == "HELLO!"
    )
    assert finals["call-http"].status == "completed" and finals["call-http"].content[0].content.text == "WEB"
    assert not (tau.agent_dir / "mcp.json").exists()  # the editor's servers are the session's, not saved


async def test_bash_in_the_editors_terminal_gets_the_sessions_variables(tau: TauCommand) -> None:
    command = "echo model=$TAU_MODEL/$PI_MODEL level=$PI_REASONING_LEVEL session=$TAU_SESSION_ID"
    tau.server.add(tool_turn("bash", {"command": command}), text_turn("Done."))
    client = TerminalClient()
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn, terminal=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        assert (
            await conn.prompt(session_id=session_id, prompt=[text_block("Show")])
        ).stop_reason == "end_turn"
    [seen] = [m["content"] for m in tau.server.last_request.body["messages"] if m["role"] == "tool"]
    assert seen == f"model=fake-model/fake-model level=off session={session_id}\n"


async def test_a_sub_agents_tool_calls_are_calls_of_their_own_naming_the_task_call(tau: TauCommand) -> None:
    tau.server.add(
        tool_turn("task", {"prompt": "Read the notes."}, id="task-1"),
        tool_turn("read", {"path": "notes.txt"}, id="read-1"),
        text_turn("Nothing much."),
        text_turn("The child looked."),
    )
    (tau.work / "notes.txt").write_text("child-read-this\n")
    client = RecordingClient()
    async with spawn_tau(tau, client, "--tools", "+task") as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Delegate")])
    assert answer.stop_reason == "end_turn"
    starts = [
        (u.tool_call_id, u.title, (u.field_meta or {}).get("parentToolCallId"))
        for u in client.of(ToolCallStart)
    ]
    assert [(call, parent) for call, _, parent in starts] == [("task-1", None), ("task-1/read-1", "task-1")]
    finished = [u for u in client.of(ToolCallProgress) if u.tool_call_id == "task-1/read-1" and u.status]
    assert [u.status for u in finished] == ["completed"]
    assert "child-read-this" in str(finished[0].content)
    assert finished[0].field_meta == {"parentToolCallId": "task-1"}

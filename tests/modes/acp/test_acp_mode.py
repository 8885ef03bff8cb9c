"""``tau --mode acp`` driven by the ACP SDK's client side against the fake LLM server: the whole flow,
prompts, and the process (its input and output, what it imports)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)
from acp_client import RawAcp, RecordingClient, initialize, spawn_tau
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn, text_turn, tool_turn

pytestmark = pytest.mark.timeout(30)


async def test_full_flow_new_prompt_with_tools_and_diff_cancel_then_load_in_a_new_process(
    tau: TauCommand,
) -> None:
    target = tau.work / "notes.txt"
    target.write_text("alpha\nbeta\n")
    tau.server.add(
        Turn(
            thinking="Let me look.",
            tool_calls=[ScriptedToolCall("read", {"path": "notes.txt"}, id="call-read")],
        ),
        tool_turn(
            "edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}, id="call-edit"
        ),
        text_turn("Changed beta to gamma."),
        # The second prompt stalls mid-stream until it is cancelled.
        Turn(
            text="This reply never ends " * 20,
            chunk_size=4,
            fault=Fault("stall", after_events=12, seconds=20),
        ),
    )
    client = RecordingClient()
    async with spawn_tau(tau, client) as (conn, process):
        init = await initialize(conn)
        assert init.protocol_version == PROTOCOL_VERSION
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.image is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        new = await conn.new_session(cwd=str(tau.work), mcp_servers=[])
        session_id = new.session_id
        assert {o.id for o in new.config_options} >= {"model", "thinking"}

        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Rename beta")])
        assert answer.stop_reason == "end_turn"
        assert client.message_text() == "Changed beta to gamma."
        assert "".join(u.content.text for u in client.of(AgentThoughtChunk)) == "Let me look."
        starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
        assert starts["call-read"].kind == "read" and starts["call-read"].title == "Read notes.txt"
        assert starts["call-read"].locations[0].path == str(target)
        assert starts["call-edit"].kind == "edit"
        assert {u.status for u in starts.values()} == {"in_progress"}
        finals = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status is not None}
        assert finals["call-read"].status == "completed"
        diff = finals["call-edit"].content[0]
        assert diff.type == "diff" and (diff.path, diff.old_text, diff.new_text) == (
            str(target),
            "beta",
            "gamma",
        )
        assert finals["call-edit"].locations[0].line == 2
        assert target.read_text() == "alpha\ngamma\n"

        streaming = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Go on")]))
        while "This" not in client.message_text():
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(streaming, 10)).stop_reason == "cancelled"
    assert process.returncode == 0

    files = tau.session_files()
    assert len(files) == 1
    assert json.loads(files[0].read_text().splitlines()[0])["id"] == session_id

    tau.server.add(text_turn("Still here."))
    replay = RecordingClient()
    async with spawn_tau(tau, replay) as (conn, process):
        await initialize(conn)
        listed = await conn.list_sessions(cwd=str(tau.work))
        assert [s.session_id for s in listed.sessions] == [session_id]
        await conn.load_session(cwd=str(tau.work), session_id=session_id, mcp_servers=[])
        assert [u.content.text for u in replay.of(UserMessageChunk)] == ["Rename beta", "Go on"]
        assert "Changed beta to gamma." in replay.message_text()
        assert {u.tool_call_id for u in replay.of(ToolCallStart)} == {"call-read", "call-edit"}
        assert "".join(u.content.text for u in replay.of(AgentThoughtChunk)) == "Let me look."
        replayed = {u.tool_call_id: u for u in replay.of(ToolCallProgress) if u.status}
        assert replayed["call-edit"].status == "completed" and replayed["call-edit"].content[0] == diff
        assert replay.of(UsageUpdate)[-1].size == 100000  # the context so far, after the history
        before = len(replay.updates)
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Still there?")])
        assert answer.stop_reason == "end_turn"
        assert "Still here." in "".join(
            u.update.content.text for u in replay.updates[before:] if isinstance(u.update, AgentMessageChunk)
        )
    # The model saw the whole conversation, the cancelled reply included.
    sent = json.dumps(tau.server.last_request.body)
    assert "Rename beta" in sent and "Still there?" in sent
    assert len(tau.session_files()) == 1

    # The editor's session continues in a terminal.
    tau.server.add(text_turn("From the terminal."))
    continued = tau.run("-c", "-p", "And now?", *MODEL)
    assert continued.returncode == 0 and "From the terminal." in continued.stdout
    assert "Still there?" in json.dumps(tau.server.last_request.body)
    assert len(tau.session_files()) == 1


async def test_a_client_asking_for_another_protocol_version_is_answered_with_taus(tau: TauCommand) -> None:
    async with spawn_tau(tau, RecordingClient()) as (conn, _):
        for asked in (PROTOCOL_VERSION + 1, 0):
            assert (await conn.initialize(protocol_version=asked)).protocol_version == PROTOCOL_VERSION


async def test_prompt_blocks_reach_the_model_as_text_files_and_images(tau: TauCommand) -> None:
    models_json = tau.agent_dir / "models.json"
    models = json.loads(models_json.read_text())
    models["providers"]["local"]["models"][0]["input"] = ["text", "image"]
    models_json.write_text(json.dumps(models))
    tau.server.add(text_turn("Seen."))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    linked = tau.work / "linked file.py"
    client = RecordingClient()
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        blocks = [
            text_block("Compare these"),
            resource_link_block("linked file.py", linked.as_uri()),
            resource_block(embedded_text_resource("file:///tmp/buffer.py", "print('unsaved')")),
            image_block(pixel, "image/png"),
        ]
        assert (await conn.prompt(session_id=session_id, prompt=blocks)).stop_reason == "end_turn"
    sent = json.dumps(tau.server.last_request.body)
    assert "Compare these" in sent
    assert json.dumps(f"@{linked}")[1:-1] in sent
    assert json.dumps("<file name=\"/tmp/buffer.py\">\nprint('unsaved')\n</file>")[1:-1] in sent
    assert pixel in sent


async def test_a_failed_model_request_answers_the_prompt_with_an_error_naming_it(tau: TauCommand) -> None:
    tau.server.add(
        Turn(fault=Fault("status", status=400, body={"error": {"message": "bad request: no such model"}}))
    )
    client = RecordingClient()
    async with spawn_tau(tau, client) as (conn, process):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as failure:
            await conn.prompt(session_id=session_id, prompt=[text_block("Hi")])
        assert "no such model" in json.dumps(failure.value.data)
    assert process.returncode == 0


def test_end_of_input_during_a_prompt_exits_cleanly_with_the_session_file_whole(tau: TauCommand) -> None:
    tau.server.add(Turn(text="slow " * 50, chunk_size=5, fault=Fault("stall", after_events=5, seconds=20)))
    raw = RawAcp(tau)
    assert raw.call("initialize", {"protocolVersion": PROTOCOL_VERSION})["result"]["protocolVersion"] == 1
    session_id = raw.call("session/new", {"cwd": str(tau.work), "mcpServers": []})["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "Go"}]}
    raw.send({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": prompt})
    while raw.read().get("params", {}).get("update", {}).get("sessionUpdate") != "agent_message_chunk":
        pass  # the reply is streaming
    assert raw.process.stdin is not None and raw.process.stdout is not None and raw.process.stderr is not None
    raw.process.stdin.close()
    raw.process.stdout.close()  # the editor is gone: no one reads the rest
    assert raw.process.wait(timeout=10) == 0
    assert "Traceback" not in raw.process.stderr.read()
    assert raw.wire.problems == []
    [session_file] = tau.session_files()
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    assert entries[0]["id"] == session_id
    assert any(e.get("message", {}).get("role") == "user" for e in entries)


LOUD_EXTENSION = """
import os
import sys

print("printed at load")


def setup(tau):
    @tau.on("tool_call")
    async def loud(event, ctx):
        sys.stdout.write("written in a hook\\n")
        os.system("echo echoed by a child")
"""


def test_only_protocol_messages_reach_stdout_whatever_an_extension_prints(tau: TauCommand) -> None:
    extension = tau.work / "loud.py"
    extension.write_text(LOUD_EXTENSION)
    tau.server.add(tool_turn("bash", {"command": "echo listed"}), text_turn("Listed."))
    raw = RawAcp(tau, "-e", str(extension))
    raw.call("initialize", {"protocolVersion": PROTOCOL_VERSION})
    session_id = raw.call("session/new", {"cwd": str(tau.work), "mcpServers": []})["result"]["sessionId"]
    prompt = [{"type": "text", "text": "List"}]
    assert (
        raw.call("session/prompt", {"sessionId": session_id, "prompt": prompt})["result"]["stopReason"]
        == "end_turn"
    )
    stderr = raw.close()
    for text in ("written in a hook", "echoed by a child"):
        assert text in stderr
    assert stderr.count("printed at load") == 1  # start-up's extensions are the first session's


def test_the_protocol_can_go_to_a_regular_file(tau: TauCommand) -> None:
    requests = tau.work / "requests.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        + "\n"
    )
    log = tau.work / "acp.log"
    with requests.open() as stdin, log.open("w") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "tau", "--mode", "acp", *MODEL],
            cwd=tau.work,
            env=tau.env,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(log.read_text())["result"]["protocolVersion"] == 1


def test_print_mode_does_not_import_the_acp_sdk(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"))
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", "-p", "hi", *MODEL],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "tau.modes.acp" not in imported and "acp" not in imported


def test_the_mode_needs_neither_the_sdk_nor_pydantic(tau: TauCommand) -> None:
    hide = "import sys; sys.modules['acp'] = sys.modules['pydantic'] = None; from tau.cli import main; main()"
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    result = subprocess.run(
        [sys.executable, "-c", hide, "--mode", "acp", *MODEL],
        cwd=tau.work,
        env=tau.env,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"]["agentInfo"]["name"] == "tau"


async def test_a_session_started_with_tau_p_is_listed_loaded_and_continued_in_the_editor(
    tau: TauCommand,
) -> None:
    tau.server.add(text_turn("Hello from the terminal."), text_turn("And from the editor."))
    assert tau.run("-p", "Begin here", *MODEL).returncode == 0
    [session_file] = tau.session_files()
    session_id = json.loads(session_file.read_text().splitlines()[0])["id"]
    client = RecordingClient()
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn)
        [listed] = (await conn.list_sessions()).sessions  # every project's sessions
        assert (listed.session_id, listed.cwd, listed.title) == (session_id, str(tau.work), "Begin here")
        await conn.load_session(cwd=str(tau.work), session_id=session_id, mcp_servers=[])
        assert [u.content.text for u in client.of(UserMessageChunk)] == ["Begin here"]
        assert client.message_text() == "Hello from the terminal."
        await conn.prompt(session_id=session_id, prompt=[text_block("Go on")])
    assert "Begin here" in json.dumps(tau.server.last_request.body)
    assert tau.session_files() == [session_file]
    assert "Go on" in session_file.read_text()


def test_a_session_that_does_not_exist_and_a_cwd_that_is_no_folder_are_refused_saying_so(
    tau: TauCommand,
) -> None:
    raw = RawAcp(tau)
    raw.call("initialize", {"protocolVersion": PROTOCOL_VERSION})
    load = {"cwd": str(tau.work), "sessionId": "no-such-session", "mcpServers": []}
    missing = raw.call("session/load", load)["error"]
    assert (missing["code"], missing["data"]) == (-32002, {"uri": "no-such-session"})
    relative = raw.call("session/new", {"cwd": "work", "mcpServers": []})["error"]
    assert relative["code"] == -32602 and "absolute folder" in relative["data"]["message"]
    raw.close()
    assert tau.session_files() == []


def test_an_sse_mcp_server_is_left_out_with_a_warning_and_the_session_opens(tau: TauCommand) -> None:
    raw = RawAcp(tau)
    raw.call("initialize", {"protocolVersion": PROTOCOL_VERSION})
    sse = {"type": "sse", "name": "old server", "url": "http://127.0.0.1:9/sse", "headers": []}
    assert "sessionId" in raw.call("session/new", {"cwd": str(tau.work), "mcpServers": [sse]})["result"]
    assert "MCP server old server: SSE is not supported, left out" in raw.close()

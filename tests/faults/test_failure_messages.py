"""Failures that say what failed, through the real ``tau``: an MCP server that exits at start, a tool
list with one malformed tool, a write whose parent folder is a file, tool arguments sent as a JSON
array, and steering and follow-up messages still queued when an RPC client starts a new session."""

from __future__ import annotations

import json
import sys
import textwrap

from fault_campaign import Campaign
from tau_command import MODEL

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn

DIES_AT_START = textwrap.dedent(
    """
    import sys
    print("connecting to the database", file=sys.stderr)
    print("fatal: missing DB_URL", file=sys.stderr)
    sys.exit(3)
    """
)

# Plain JSON-RPC on stdio: a tools/list with one good tool, one whose inputSchema is no object and
# one without a name.
ONE_BAD_TOOL = textwrap.dedent(
    """
    import json, sys
    tools = [
        {"name": "good", "description": "Works.", "inputSchema": {"type": "object"}},
        {"name": "broken", "description": "Bad schema.", "inputSchema": 5},
        {"description": "No name.", "inputSchema": {"type": "object"}},
    ]
    results = {
        "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "mixed", "version": "1"}},
        "tools/list": {"tools": tools},
        "tools/call": {"content": [{"type": "text", "text": "good ran"}]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") in results and "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}
            print(json.dumps(answer), flush=True)
    """
)


def configure_server(campaign: Campaign, name: str, text: str) -> None:
    script = campaign.tau.work.parent / f"{name}.py"
    script.write_text(text, encoding="utf-8")
    entry = {"command": sys.executable, "args": [str(script)], "exposure": "direct"}
    (campaign.tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {name: entry}}))


def tool_results(campaign: Campaign) -> list[str]:
    messages = campaign.tau.server.requests[-1].body["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def test_an_mcp_server_that_exits_at_start_is_reported_with_its_exit_status_and_last_stderr_line(
    campaign: Campaign,
) -> None:
    configure_server(campaign, "db", DIES_AT_START)
    campaign.tau.server.add(Turn(text="Answered anyway."))

    done = campaign.tau.run("-p", *MODEL, "hi")
    listed = campaign.tau.run("mcp", "list")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Answered anyway."
    assert (
        "tau: warning: MCP server 'db' failed: exited with status 3: fatal: missing DB_URL\n" in done.stderr
    )
    assert listed.returncode == 1
    assert listed.stdout.splitlines()[2:] == [
        "  exited with status 3: fatal: missing DB_URL",
        "  connecting to the database",
    ]


def test_a_malformed_tool_is_left_out_with_a_warning_and_the_servers_other_tools_work(
    campaign: Campaign,
) -> None:
    configure_server(campaign, "mixed", ONE_BAD_TOOL)
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__mixed__good", {})]), Turn(text="Used it.")
    )

    done = campaign.tau.run("-p", *MODEL, "use the good tool")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Used it."
    offered = [tool["function"]["name"] for tool in campaign.tau.server.requests[0].body["tools"]]
    assert [name for name in offered if name.startswith("mcp__")] == ["mcp__mixed__good"]
    assert tool_results(campaign) == ["good ran"]
    warnings = [line for line in done.stderr.splitlines() if "left out" in line]
    assert warnings == [
        "tau: warning: MCP server 'mixed': tool 'broken' left out: inputSchema: Input should be a valid dictionary",
        "tau: warning: MCP server 'mixed': tool number 3 left out: name: Field required",
    ]


def test_a_write_under_a_file_names_the_file_that_stands_where_a_directory_is_needed(
    campaign: Campaign,
) -> None:
    (campaign.tau.work / "notes").write_text("a file, not a folder\n")
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("write", {"path": "notes/today.md", "content": "x"})]),
        Turn(tool_calls=[ScriptedToolCall("write", {"path": "notes/2026/today.md", "content": "x"})]),
        Turn(text="Could not."),
    )

    done = campaign.tau.run("-p", *MODEL, "write the notes")

    assert done.returncode == 0, done.stderr
    blocking = campaign.tau.work / "notes"
    assert tool_results(campaign) == [
        f"Could not write notes/today.md: {blocking} is a file, not a directory (a directory is needed there)",
        f"Could not write notes/2026/today.md: {blocking} is a file, not a directory (a directory is needed there)",
    ]
    assert blocking.read_text() == "a file, not a folder\n"


def test_tool_arguments_sent_as_a_json_array_are_answered_with_what_is_wrong_and_nothing_runs(
    campaign: Campaign,
) -> None:
    (campaign.tau.work / "a.txt").write_text("old\n")
    edit = json.dumps([{"path": "a.txt", "edits": [{"oldText": "old", "newText": "new"}]}])
    campaign.tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("edit", raw_arguments=edit)]),
        Turn(tool_calls=[ScriptedToolCall("bash", raw_arguments='"ls"')]),
        Turn(text="I see."),
    )

    done = campaign.tau.run("-p", *MODEL, "edit it")

    assert done.returncode == 0, done.stderr
    assert tool_results(campaign) == [
        'Invalid arguments for tool "edit": the arguments are an array, but they must be one JSON object '
        f"whose keys are the tool's parameters\n\nReceived arguments:\n{edit}",
        'Invalid arguments for tool "bash": the arguments are a string, but they must be one JSON object '
        'whose keys are the tool\'s parameters\n\nReceived arguments:\n"ls"',
    ]
    assert (campaign.tau.work / "a.txt").read_text() == "old\n"
    saved = [json.loads(line) for line in campaign.tau.session_files()[0].read_text().splitlines()]
    calls = [
        block
        for entry in saved
        if entry.get("type") == "message" and entry["message"]["role"] == "assistant"
        for block in entry["message"]["content"]
        if block["type"] == "toolCall"
    ]
    assert [(call["arguments"], call["argumentsError"][:24]) for call in calls] == [
        ({}, "the arguments are an arr"),
        ({}, "the arguments are a stri"),
    ]


async def test_a_new_rpc_session_answers_with_the_queued_messages_it_dropped(campaign: Campaign) -> None:
    tau = campaign.tau
    tau.server.add(Turn(text="slow reply", chunk_size=2, fault=Fault("stall", after_events=2, seconds=30)))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as client:
        await client.call("prompt", message="start")
        await client.wait_for("message_start")
        await client.call("steer", message="change course")
        await client.call("follow_up", message="then run the tests")
        await client.call("follow_up", message="and commit")

        answer = await client.call("new_session")
        state = await client.call("get_state")
        again = await client.call("new_session")

    assert answer == {
        "cancelled": False,
        "dropped": {"steering": ["change course"], "followUp": ["then run the tests", "and commit"]},
    }
    assert state["pendingMessageCount"] == 0 and state["messageCount"] == 0
    assert again == {"cancelled": False}

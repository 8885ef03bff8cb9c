"""MCP servers that extensions register (``tau.register_mcp_server``), in the real ``tau`` process:
a real stdio server (plain JSON-RPC), against the fake LLM server."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

# Answers its handshake, lists one tool and answers its calls with the name it was started with.
PING_SERVER = textwrap.dedent(
    """
    import json, sys
    own = sys.argv[1]
    tool = {"name": "ping", "description": "Answer pong.", "inputSchema": {"type": "object"}}
    results = {
        "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": own, "version": "1"}},
        "tools/list": {"tools": [tool]},
        "tools/call": {"content": [{"type": "text", "text": "pong from " + own}]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") in results and "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}
            print(json.dumps(answer), flush=True)
    """
)


def tool_names(request: object) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]  # type: ignore[attr-defined]


def tool_results(request: object) -> list[str]:
    messages = request.body["messages"]  # type: ignore[attr-defined]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


@pytest.fixture
def server_script(tmp_path: Path) -> str:
    path = tmp_path / "ping_server.py"
    path.write_text(PING_SERVER, encoding="utf-8")
    return str(path)


def _extension(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "registers.py"
    path.write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    return path


def test_a_server_registered_in_setup_starts_with_the_session_without_any_mcp_json(
    tau: TauCommand, tmp_path: Path, server_script: str
) -> None:
    extension = _extension(
        tmp_path,
        f"""
        import sys
        def setup(tau):
            tau.register_mcp_server(
                "docs", {{"command": sys.executable, "args": [{server_script!r}, "docs"], "exposure": "direct"}}
            )
        """,
    )
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__docs__ping", {})]), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(extension), "ping the docs")

    assert done.returncode == 0, done.stderr
    assert not (tau.agent_dir / "mcp.json").exists()
    first, second = tau.server.requests
    assert "mcp__docs__ping" in tool_names(first)
    assert tool_results(second) == ["pong from docs"]


def test_a_server_registered_later_connects_at_once_and_unregistering_makes_its_tools_unreachable(
    tau: TauCommand, tmp_path: Path, server_script: str
) -> None:
    seen = tmp_path / "changes.jsonl"
    extension = _extension(
        tmp_path,
        f"""
        import asyncio, json, sys
        from tau.extensions import ToolDefinition

        def setup(tau):
            @tau.on("mcp_servers_change")
            def record(event, ctx):
                with open({str(seen)!r}, "a") as out:
                    out.write(json.dumps([s.name for s in event.servers]) + "\\n")

            async def connect(call_id, params, signal, on_update, ctx):
                tau.register_mcp_server(
                    "late", {{"command": sys.executable, "args": [{server_script!r}, "late"], "exposure": "direct"}}
                )
                for _ in range(400):
                    if "mcp__late__ping" in tau.get_active_tools():
                        return "connected"
                    await asyncio.sleep(0.05)
                return "not connected"

            def disconnect(call_id, params, signal, on_update, ctx):
                tau.unregister_mcp_server("late")
                return "gone: " + ",".join(s.name for s in tau.get_mcp_servers())

            empty = {{"type": "object", "properties": {{}}}}
            tau.register_tool(ToolDefinition(name="connect", description="c", parameters=empty, execute=connect))
            tau.register_tool(
                ToolDefinition(name="disconnect", description="d", parameters=empty, execute=disconnect)
            )
        """,
    )
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("connect", {})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__late__ping", {})]),
        Turn(tool_calls=[ScriptedToolCall("disconnect", {})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__late__ping", {})]),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "-e", str(extension), "connect, ping, disconnect, ping")

    assert done.returncode == 0, done.stderr
    connected, pong, gone, refused = tool_results(tau.server.requests[-1])
    assert connected == "connected", done.stderr
    assert (connected, pong, gone) == ("connected", "pong from late", "gone: ")
    assert "pong" not in refused
    assert [json.loads(line) for line in seen.read_text().splitlines()] == [["late"], []]


def test_names_of_another_extension_and_bad_configs_are_refused_where_they_are_registered(
    tau: TauCommand, tmp_path: Path, server_script: str
) -> None:
    report = tmp_path / "report.json"
    first = tmp_path / "first.py"
    first.write_text(
        f"import sys\ndef setup(tau):\n    tau.register_mcp_server('shared', {{'command': sys.executable, "
        f"'args': [{server_script!r}, 'shared']}})\n",
        encoding="utf-8",
    )
    second = _extension(
        tmp_path,
        f"""
        import json
        def setup(tau):
            problems = []
            for name, config in [("shared", {{"command": "x"}}), ("bad name", {{"command": "x"}}),
                                 ("nothing", {{"exposure": "direct"}}), ("typed", {{"url": "ftp://x"}})]:
                try:
                    tau.register_mcp_server(name, config)
                except ValueError as error:
                    problems.append(str(error))
            servers = [(s.name, s.extension_path.endswith("first.py")) for s in tau.get_mcp_servers()]
            with open({str(report)!r}, "w") as out:
                json.dump({{"problems": problems, "servers": servers}}, out)
        """,
    )
    tau.server.add(Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(first), "-e", str(second), "hi")

    assert done.returncode == 0, done.stderr
    seen = json.loads(report.read_text())
    assert seen["servers"] == [["shared", True]]
    shared, bad_name, nothing, typed = seen["problems"]
    assert "already registered by the extension at" in shared and shared.endswith("first.py")
    assert "names may contain only letters" in bad_name
    assert nothing.startswith('server "nothing":')
    assert "url must be an http:// or https:// URL" in typed


def test_with_the_mcp_support_switched_off_a_registered_server_is_reported_and_not_started(
    tau: TauCommand, tmp_path: Path, server_script: str
) -> None:
    marker = tmp_path / "started"
    starter = tmp_path / "starter.py"
    starter.write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    extension = _extension(
        tmp_path,
        f"""
        import sys
        def setup(tau):
            tau.register_mcp_server("docs", {{"command": sys.executable, "args": [{str(starter)!r}]}})
        """,
    )
    tau.server.add(Turn(text="Done."))

    done = tau.run("-p", *MODEL, "--no-mcp", "-e", str(extension), "hi")

    assert done.returncode == 0, done.stderr
    assert "MCP server 'docs' is registered but nothing connects it" in done.stderr
    assert not marker.exists()
    assert sys.executable  # the server command would have been this interpreter

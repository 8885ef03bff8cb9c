"""MCP servers in the real ``tau`` process: real servers written here on the ``mcp`` SDK's server side
(stdio, and one Streamable HTTP server shared by the module), against the fake LLM server."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

SERVER_HEAD = """
import os, sys, time
import anyio
from mcp.server.mcpserver import Context, MCPServer
"""

CALC = SERVER_HEAD + textwrap.dedent(
    """
    server = MCPServer("calc", instructions="Adds numbers.")

    @server.tool()
    async def add(a: int, b: int, ctx: Context) -> int:
        \"\"\"Add two numbers.\"\"\"
        await ctx.info(f"adding {a} and {b}")
        return a + b

    @server.tool()
    def crash() -> str:
        \"\"\"End the server in the middle of the call.\"\"\"
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        \"\"\"Never answer (asleep in the event loop, so the server still stops when its stdin closes).\"\"\"
        await anyio.sleep(600)
        return "late"

    @server.resource("memo://note")
    def note() -> str:
        return "the note's text"

    @server.resource("memo://{name}")
    def memo(name: str) -> str:
        return f"the memo called {name}"

    if __name__ == "__main__":
        if len(sys.argv) > 1:
            server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
        else:
            server.run()
    """
)

PLANTER = SERVER_HEAD + textwrap.dedent(
    """
    server = MCPServer("planter")

    @server.tool()
    def plant(path: str) -> str:
        \"\"\"Write a file.\"\"\"
        try:
            with open(path, "w") as file:
                file.write("planted")
        except OSError as error:
            return f"refused: {error.strerror}"
        return "planted"

    if __name__ == "__main__":
        server.run()
    """
)

BIG = SERVER_HEAD + textwrap.dedent(
    """
    server = MCPServer("big")

    def make(number: int):
        def tool(text: str) -> str:
            return f"tool {number} did {text}"
        return tool

    for number in range(200):
        topic = "frobnicate the widget" if number == 137 else f"handle record kind {number}"
        server.add_tool(make(number), name=f"tool_{number}", description=f"Tool {number}: {topic}.")

    if __name__ == "__main__":
        server.run()
    """
)

GROWING = SERVER_HEAD + textwrap.dedent(
    """
    from mcp.server.mcpserver import Context

    server = MCPServer("growing")

    def fresh() -> str:
        \"\"\"A tool that appears later.\"\"\"
        return "fresh result"

    @server.tool()
    async def grow(ctx: Context) -> str:
        \"\"\"Offer one more tool and withdraw this one.\"\"\"
        server.add_tool(fresh, name="fresh")
        server.remove_tool("grow")
        await ctx.session.send_tool_list_changed()
        return "grown"

    if __name__ == "__main__":
        server.run()
    """
)

STUCK = "import sys\nsys.stdin.read()  # reads every request, answers none\n"

# Plain JSON-RPC on stdio (no SDK to import, so it answers its handshake at once even on a busy
# machine): it offers one tool and never answers a call of it.
SLOW = textwrap.dedent(
    """
    import json, sys
    tool = {"name": "hang", "description": "Never answers.", "inputSchema": {"type": "object"}}
    results = {
        "initialize": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                       "serverInfo": {"name": "slow", "version": "1"}},
        "tools/list": {"tools": [tool]},
    }
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") in results and "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]}
            print(json.dumps(answer), flush=True)
    """
)

# Plain JSON-RPC on stdio, started as ``paired.py <own name> <partner's name> <folder>``: it marks its
# start in the folder and answers its handshake only once its partner has started too (exiting after
# 10 s alone), so two of them connect only when they are started together, not one after the other.
PAIRED = textwrap.dedent(
    """
    import json, os, sys, time
    own, partner, folder = sys.argv[1:4]
    open(os.path.join(folder, own + ".started"), "w").close()
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(folder, partner + ".started")):
        if time.monotonic() > deadline:
            sys.exit(f"{partner} was not started while {own} waited")
        time.sleep(0.02)
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

FLAKY = textwrap.dedent(
    """
    import json, sys
    import uvicorn
    sys.argv, port, plan = sys.argv[:1], int(sys.argv[1]), json.loads(sys.argv[2])
    sys.path.insert(0, sys.argv[0].rsplit("/", 1)[0])
    from calc import server

    app = server.streamable_http_app()

    async def flaky(scope, receive, send):
        \"\"\"The first POSTs of a method in ``plan`` get the planned error status instead.\"\"\"
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        messages, more = [], True
        while more:
            message = await receive()
            messages.append(message)
            more = message.get("more_body", False)
        body = b"".join(m.get("body", b"") for m in messages)
        method = json.loads(body or b"{}").get("method")
        if plan.get(method):
            status = plan[method].pop(0)
            await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
            return await send({"type": "http.response.body", "body": b"planned failure"})

        async def replay():
            return messages.pop(0) if messages else await receive()

        await app(scope, replay, send)

    uvicorn.run(flaky, host="127.0.0.1", port=port, log_level="error")
    """
)


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("mcp-servers")
    paths = {}
    servers = {
        "calc": CALC,
        "big": BIG,
        "stuck": STUCK,
        "growing": GROWING,
        "flaky": FLAKY,
        "slow": SLOW,
        "paired": PAIRED,
        "planter": PLANTER,
    }
    for name, text in servers.items():
        path = folder / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        paths[name] = str(path)
    return paths


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_url(scripts: dict[str, str]) -> Iterator[str]:
    yield from _http_server([scripts["calc"]])


def _http_server(argv: list[str]) -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, argv[0], str(port), *argv[1:]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def stdio(script: str, **fields: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [script], **fields}


def configure(tau: TauCommand, servers: dict[str, Any], path: Path | None = None) -> None:
    target = path or tau.agent_dir / "mcp.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def tool_names(request: Any) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def tool_results(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def test_a_direct_mcp_tool_is_called_a_server_that_crashes_mid_call_is_restarted_and_resources_are_read(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(tau, {"calc": stdio(scripts["calc"], exposure="direct")})
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__calc__add", {"a": 2, "b": 3})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__calc__crash", {})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__calc__add", {"a": 4, "b": 3})]),
        Turn(tool_calls=[ScriptedToolCall("list_mcp_resources", {})]),
        Turn(tool_calls=[ScriptedToolCall("read_mcp_resource", {"server": "calc", "uri": "memo://note"})]),
        Turn(text="Recovered."),
    )

    done = tau.run("-p", *MODEL, "add, crash, add, read the note")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Recovered."
    first, last = tau.server.requests[0], tau.server.requests[-1]
    assert {"mcp__calc__add", "mcp__calc__crash", "mcp__calc__hang"} <= set(tool_names(first))
    assert {"list_mcp_resources", "read_mcp_resource"} <= set(tool_names(first))
    added, crashed, added_again, listed, note = tool_results(last)
    assert [(r["server"], r["uri"]) for r in json.loads(listed)["resources"]] == [("calc", "memo://note")]
    assert note == "the note's text"
    log = (tau.agent_dir / "mcp.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in log] == [
        "[calc] info -: adding 2 and 3",
        "[calc] info -: adding 4 and 3",
    ]
    assert added == "5"
    # The server's exit status, then the last line of its stderr (here a warning of the SDK's).
    assert crashed.startswith("MCP server 'calc' failed during 'crash' (exited with status 3")
    assert crashed.endswith("); it is restarted on the next call")
    assert added_again == "7"


def test_a_changed_tool_list_adds_the_new_tools_and_withdrawn_ones_become_unreachable(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(tau, {"growing": stdio(scripts["growing"], exposure="direct")})
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__growing__grow", {})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__growing__fresh", {})]),
        Turn(text="Grown."),
    )

    done = tau.run("-p", *MODEL, "grow")

    assert done.returncode == 0, done.stderr
    first, second, third = tau.server.requests
    assert "mcp__growing__grow" in tool_names(first) and "mcp__growing__fresh" not in tool_names(first)
    # The new tool is added at the end; the withdrawn one stays declared, so the cached prefix holds
    # (issue #31), and a notice after the tool result says it is gone (a call to it is refused).
    assert tool_names(second) == [*tool_names(first), "mcp__growing__fresh"]
    notice = second.body["messages"][-1]["content"][-1]["text"]
    assert "Tools now available: mcp__growing__fresh" in notice
    assert "Tools no longer available (a call to one of them is refused): mcp__growing__grow" in notice
    assert tool_results(third) == ["grown", "fresh result"]


def test_hanging_servers_fail_at_their_timeout_tau_still_answers_and_failures_are_reported(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(
        tau,
        {
            "slow": stdio(scripts["slow"], exposure="direct", timeout=1),
            "stuck": stdio(scripts["stuck"], exposure="direct", timeout=1),
            "gone": {"command": "/nonexistent/mcp-server", "exposure": "direct"},
            "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        },
    )
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("mcp__slow__hang", {})]), Turn(text="It hung."))

    started = time.monotonic()
    done = tau.run("-p", *MODEL, "call hang")
    elapsed = time.monotonic() - started

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It hung."
    assert tool_results(tau.server.requests[-1]) == ["MCP server 'slow' did not answer 'hang' within 1 s"]
    # A server that cannot start and a bad entry are reported once each; the others work.
    assert done.stderr.count("MCP server 'gone' failed: ") == 1 and "/nonexistent/mcp-server" in done.stderr
    assert done.stderr.count("MCP config error: ") == 1 and 'server "old": the SSE transport' in done.stderr
    # The stuck server is waited for only up to its timeout, then reported.
    assert elapsed < 10
    assert "MCP server 'stuck' failed: did not answer within 1 s" in done.stderr


def test_servers_start_together_in_the_background_and_the_first_prompt_waits_only_for_direct_ones(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    marks = tau.work / "marks"
    marks.mkdir()
    sluggish = tau.work / "sluggish.py"  # starts, marks it, then never answers its handshake
    sluggish.write_text(f"open({str(marks / 'sluggish.started')!r}, 'w').close()\n" + STUCK)
    configure(
        tau,
        {
            "left": stdio(
                scripts["paired"], args=[scripts["paired"], "left", "right", str(marks)], exposure="direct"
            ),
            "right": stdio(
                scripts["paired"], args=[scripts["paired"], "right", "left", str(marks)], exposure="direct"
            ),
            "sluggish": stdio(str(sluggish), exposure="deferred"),
        },
    )
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__left__ping", {}), ScriptedToolCall("mcp__right__ping", {})]),
        Turn(text="Both answered."),
    )

    started = time.monotonic()
    done = tau.run("-p", *MODEL, "ping both")
    elapsed = time.monotonic() - started

    assert done.returncode == 0, done.stderr
    # Each of the pair waits for the other before answering: they were started together.
    assert {"mcp__left__ping", "mcp__right__ping"} <= set(tool_names(tau.server.requests[0]))
    assert tool_results(tau.server.requests[-1]) == ["pong from left", "pong from right"]
    # The deferred server was started too, but nothing waited for its handshake (the first prompt
    # would have waited 10 s for it, and its 60 s timeout would have held the run).
    assert (marks / "sluggish.started").exists()
    assert elapsed < 9, elapsed
    assert "sluggish" not in done.stderr


def test_two_hundred_deferred_tools_stay_out_of_the_prompt_until_tool_search_loads_one(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(tau, {"big": stdio(scripts["big"], exposure="deferred")})
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("tool_search", {"query": "frobnicate widget"})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__big__tool_137", {"text": "it"})]),
        Turn(text="Frobnicated."),
        Turn(text="Still here."),
        Turn(text="Resumed."),
    )

    done = tau.run("-p", *MODEL, "frobnicate the widget", "and now?")
    resumed = tau.run("-p", *MODEL, "-c", "again")

    assert done.returncode == 0, done.stderr
    assert resumed.returncode == 0, resumed.stderr
    first, second, third, _, after_resume = tau.server.requests
    # The branch keeps the tool it loaded: a resumed session declares it again.
    assert "mcp__big__tool_137" in tool_names(after_resume)
    assert tool_names(first) == ["read", "bash", "edit", "write", "tool_search"]
    assert len(json.dumps(first.body["tools"])) < 6000
    assert "Loaded" in tool_results(second)[0] and "mcp__big__tool_137" in tool_results(second)[0]
    assert "mcp__big__tool_137" in tool_names(second)
    assert not any(
        name.startswith("mcp__big__tool_1") and name != "mcp__big__tool_137" for name in tool_names(second)
    )
    assert tool_results(third)[-1] == "tool 137 did it"
    # The prompt prefix does not change when the server connects or a tool is loaded.
    assert first.body["messages"][0] == second.body["messages"][0] == third.body["messages"][0]
    assert "Use tool_search to find and load the tools of these MCP servers: big" in str(
        first.body["messages"][0]
    )


def test_hidden_tools_and_servers_are_unreachable_and_resource_templates_are_listed_and_read(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(
        tau,
        {
            "calc": stdio(scripts["calc"], exposure="hidden", toolExposure={"add": "direct"}),
            "notes": stdio(
                scripts["calc"], exposure="direct", toolExposure={"c*": "hidden", "hang": "hidden"}
            ),
        },
    )
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__notes__hang", {})]),
        Turn(tool_calls=[ScriptedToolCall("list_mcp_resource_templates", {})]),
        Turn(tool_calls=[ScriptedToolCall("read_mcp_resource", {"server": "notes", "uri": "memo://plan"})]),
        Turn(tool_calls=[ScriptedToolCall("read_mcp_resource", {"server": "calc", "uri": "memo://note"})]),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "look around")

    assert done.returncode == 0, done.stderr
    declared = set(tool_names(tau.server.requests[0]))
    assert {"mcp__calc__add", "mcp__notes__add"} <= declared
    assert not {"mcp__calc__crash", "mcp__calc__hang", "mcp__notes__crash", "mcp__notes__hang"} & declared
    hidden, templates, memo, refused = tool_results(tau.server.requests[-1])
    assert hidden == "Tool mcp__notes__hang not found", hidden
    # The hidden server stays out of the resource tools: only notes' template is listed.
    assert json.loads(templates) == {
        "resourceTemplates": [
            {
                "server": "notes",
                "name": "memo",
                "uriTemplate": "memo://{name}",
                "description": "",
                "mimeType": "text/plain",
            }
        ]
    }
    assert memo == "the memo called plan"
    assert refused == "no enabled MCP server named 'calc'"


def test_an_http_server_works_a_call_it_never_answers_fails_at_its_timeout_and_mcp_list_reports_every_server(
    tau: TauCommand, scripts: dict[str, str], http_url: str
) -> None:
    configure(
        tau,
        {
            "remote": {"url": http_url, "exposure": "direct", "timeout": 2},
            "local": stdio(scripts["calc"]),
        },
    )
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__remote__add", {"a": 20, "b": 22})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__remote__hang", {})]),  # asleep in the SDK server
        Turn(tool_calls=[ScriptedToolCall("mcp__remote__add", {"a": 1, "b": 1})]),
        Turn(text="42."),
    )

    done = tau.run("-p", *MODEL, "add remotely")
    listed = tau.run("mcp", "list", "--json")

    assert done.returncode == 0, done.stderr
    assert tool_results(tau.server.requests[-1]) == [
        "42",
        "MCP server 'remote' did not answer 'hang' within 2 s",
        "2",  # the server still answers after the call that hung
    ]
    assert listed.returncode == 0, listed.stderr
    report = {s["name"]: s for s in json.loads(listed.stdout)["servers"]}
    assert report["remote"]["state"] == report["local"]["state"] == "connected"
    assert report["remote"]["tools"] == ["add", "crash", "hang"]
    assert report["local"]["exposure"] == "codemode" and report["local"]["resources"] is True


def test_http_connects_through_transient_statuses_and_retries_reads_and_forgotten_sessions_but_not_calls(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    plan = {"initialize": [503, 429], "tools/call": [503, 404], "resources/read": [502]}
    url = next(server := _http_server([scripts["flaky"], json.dumps(plan)]))
    configure(tau, {"flaky": {"url": url, "exposure": "direct"}})
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__flaky__add", {"a": 2, "b": 3})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__flaky__add", {"a": 4, "b": 3})]),
        Turn(tool_calls=[ScriptedToolCall("read_mcp_resource", {"server": "flaky", "uri": "memo://note"})]),
        Turn(text="Done."),
    )
    try:
        done = tau.run("-p", *MODEL, "add twice, read the note")
    finally:
        server.close()

    assert done.returncode == 0, done.stderr
    refused, added, note = tool_results(tau.server.requests[-1])
    assert refused == "MCP server 'flaky' refused 'add': Server returned an error response (HTTP 503)"
    assert added == "7"  # the 404 (session forgotten) was sent again on a new session
    assert note == "the note's text"  # a read is tried again after a 502


def test_print_mode_without_direct_tools_starts_no_server_the_model_never_searches(tau: TauCommand) -> None:
    marker = tau.work / "started"
    script = tau.work / "marker_server.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    configure(tau, {"lazy": stdio(str(script), exposure="deferred")})
    # A reply slow enough (1.6 s) for a server started at session start to have run.
    tau.server.add(Turn(text="No tools needed.", chunk_size=1, frames_per_second=10))

    done = tau.run("-p", *MODEL, "hi")

    assert done.returncode == 0, done.stderr
    assert tool_names(tau.server.requests[0]) == ["read", "bash", "edit", "write", "tool_search"]
    assert not marker.exists()


def test_mcp_add_writes_the_entry_list_fails_for_a_broken_server_and_remove_takes_it_out(
    tau: TauCommand,
) -> None:
    config = tau.agent_dir / "mcp.json"
    added = tau.run(
        "mcp", "add", "gone", "--env", "KEY=value", "--exposure", "direct", "--", "/nonexistent/server", "-x"
    )
    written = json.loads(config.read_text())
    listed = tau.run("mcp", "list")
    removed = tau.run("mcp", "remove", "gone")
    bad = tau.run("mcp", "add", "bad name", "--", "x")

    assert added.returncode == 0, added.stderr
    entry = {"command": "/nonexistent/server", "args": ["-x"], "env": {"KEY": "value"}, "exposure": "direct"}
    assert written == {"mcpServers": {"gone": entry}}
    assert listed.returncode == 1
    assert listed.stdout.startswith("gone: failed (direct, global)")
    assert removed.returncode == 0
    assert json.loads(config.read_text()) == {"mcpServers": {}}
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "letters, digits" in bad.stderr


def test_mcp_add_local_writes_an_http_entry_to_the_project_file(tau: TauCommand) -> None:
    added = tau.run(
        "mcp", "add", "docs", "-l", "--url", "https://docs.example/mcp", "--bearer-token-env-var", "DOCS_TOKEN",
        "--header", "X-Team=core", "--oauth-callback-port", "8765", "--description", "Product docs",
    )  # fmt: skip

    assert added.returncode == 0, added.stderr
    assert json.loads((tau.work / ".tau" / "mcp.json").read_text()) == {
        "mcpServers": {
            "docs": {
                "url": "https://docs.example/mcp",
                "headers": {"X-Team": "core", "Authorization": "Bearer ${DOCS_TOKEN}"},
                "oauth": {"callbackPort": 8765},
                "description": "Product docs",
            }
        }
    }
    assert not (tau.agent_dir / "mcp.json").exists()


def test_slash_mcp_shows_status_reconnects_and_saves_a_disable_and_an_enable_to_the_defining_file(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(tau, {"calc": stdio(scripts["calc"], exposure="direct")})

    done = tau.run("-p", *MODEL, "/mcp reconnect calc", "/mcp", "/mcp disable calc", "/mcp enable nope")
    disabled = json.loads((tau.agent_dir / "mcp.json").read_text())["mcpServers"]["calc"]
    enabled = tau.run("-p", *MODEL, "/mcp enable calc", "/mcp")

    assert done.returncode == 0, done.stderr
    # Without a UI the answers are printed; in -p mode stdout is kept for the reply, so on stderr.
    lines = done.stderr.splitlines()
    assert lines[0] == "MCP server 'calc' reconnected (3 tools)"
    assert lines[1] == "calc: connected, 3 tools (direct, global)"
    assert "MCP server 'calc' disabled" in lines
    assert "no MCP server named 'nope' (see /mcp)" in lines
    assert disabled["enabled"] is False
    assert enabled.returncode == 0, enabled.stderr
    assert enabled.stderr.splitlines()[:2] == [
        "MCP server 'calc' enabled",
        "calc: connected, 3 tools (direct, global)",
    ]
    saved = json.loads((tau.agent_dir / "mcp.json").read_text())["mcpServers"]["calc"]
    assert "enabled" not in saved  # the default is left out, as pi writes it
    assert tau.server.requests == []


def test_no_mcp_a_builtin_mcp_switch_and_untrusted_projects_leave_servers_out(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    # Deferred servers are named in the system prompt from mcp.json alone, so which servers a run
    # takes is seen without starting any.
    configure(tau, {"calc": stdio(scripts["calc"], exposure="deferred")})
    configure(tau, {"proj": stdio(scripts["calc"], exposure="deferred")}, tau.work / ".tau" / "mcp.json")
    tau.server.add(Turn(text="a"), Turn(text="b"), Turn(text="c"), Turn(text="d"))
    settings = tau.agent_dir / "settings.json"

    without = tau.run("-p", *MODEL, "--no-mcp", "hi")
    untrusted = tau.run("-p", *MODEL, "--no-approve", "hi")
    trusted = tau.run("-p", *MODEL, "--approve", "hi")
    settings.write_text(json.dumps({"extensions": ["-builtin:mcp"]}))
    switched_off = tau.run("-p", *MODEL, "--approve", "hi")

    assert without.returncode == untrusted.returncode == trusted.returncode == switched_off.returncode == 0
    servers = []
    for request in tau.server.requests:
        prompt = str(request.body["messages"][0]["content"])
        line = next((x for x in prompt.splitlines() if "tools of these MCP servers:" in x), "")
        servers.append(sorted(re.findall(r"\b(calc|proj)\b", line)))
        assert ("tool_search" in tool_names(request)) == bool(line)
    assert servers == [[], ["calc"], ["calc", "proj"], []]
    assert switched_off.stderr == ""


def test_pi_16_builtin_names_switch_codemode_tool_search_and_mcp(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    """pi 1.6's built-in extensions by name: ``-builtin:<name>`` in the settings switches one off,
    ``-ne`` all of them, ``-e builtin:<name>`` one back on."""
    configure(tau, {"calc": stdio(scripts["calc"], exposure="codemode")})
    settings = tau.agent_dir / "settings.json"
    tau.server.add(*(Turn(text=str(n)) for n in range(6)))

    default = tau.run("-p", *MODEL, "hi")
    settings.write_text(json.dumps({"extensions": ["-builtin:codemode"]}))
    no_codemode = tau.run("-p", *MODEL, "hi")
    settings.write_text(json.dumps({"extensions": ["-builtin:codemode", "-builtin:tool-search"]}))
    neither = tau.run("-p", *MODEL, "hi")
    settings.write_text(json.dumps({"extensions": ["-builtin:llama.cpp"]}))  # off already: no line
    no_extensions = tau.run("-p", *MODEL, "-ne", "hi")
    only_mcp = tau.run("-p", *MODEL, "-ne", "-e", "builtin:mcp", "-e", "builtin:codemode", "hi")
    settings.write_text(json.dumps({"extensions": ["-builtin:mcp"]}))
    back_on = tau.run("-p", *MODEL, "-e", "builtin:mcp", "hi")

    runs = [default, no_codemode, neither, no_extensions, only_mcp, back_on]
    assert [run.returncode for run in runs] == [0] * 6, [run.stderr for run in runs]
    mcp_tools = [[n for n in tool_names(r) if n in ("codemode", "tool_search")] for r in tau.server.requests]
    assert mcp_tools == [["codemode"], ["tool_search"], [], [], ["codemode"], ["codemode"]]
    assert "MCP tools are only reachable from the codemode or tool_search tool" in neither.stderr
    assert no_extensions.stderr == only_mcp.stderr == back_on.stderr == ""


def test_a_builtin_tau_lacks_is_one_line(tau: TauCommand) -> None:
    asked = tau.run("-p", *MODEL, "-e", "builtin:nope", "hi")
    assert asked.returncode == 1
    assert asked.stderr.splitlines() == [
        "tau: error: -e builtin:nope: no built-in extension 'nope'; "
        "tau's are mcp, codemode, tool-search and llama.cpp"
    ]
    (tau.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["+builtin:nope"]}))
    tau.server.add(Turn(text="ran"))
    configured = tau.run("-p", *MODEL, "hi")
    assert configured.returncode == 0, configured.stderr
    assert configured.stdout == "ran\n"
    assert configured.stderr.splitlines() == [
        "tau: warning: \"extensions\" entry '+builtin:nope': no built-in extension 'nope'; "
        "tau's are mcp, codemode, tool-search and llama.cpp"
    ]
    assert tau.server.requests  # it ran


def test_tools_allowlist_keeps_mcp_tools_undeclared_unless_an_entry_names_them_and_exclusions_apply(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    configure(tau, {"calc": stdio(scripts["calc"], exposure="direct")})
    tau.server.add(Turn(text="a"), Turn(text="b"))

    plain = tau.run("-p", *MODEL, "--tools", "read", "hi")
    named = tau.run("-p", *MODEL, "--tools", "read,mcp__calc__*", "--exclude-tools", "mcp__calc__c*", "hi")

    assert plain.returncode == named.returncode == 0
    first, second = (tool_names(r) for r in tau.server.requests)
    assert first == ["read"]
    assert second == ["read", "mcp__calc__add", "mcp__calc__hang"]
    assert "no tool named" not in named.stderr  # MCP names are not known yet when tau checks the list


def test_without_the_mcp_sdk_one_line_names_the_extra_and_tau_still_answers(
    tau: TauCommand, scripts: dict[str, str]
) -> None:
    blocker = tau.work / "no-sdk" / "mcp"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError(\"No module named 'mcp'\")\n")
    tau.env["PYTHONPATH"] = str(blocker.parent)
    configure(tau, {"calc": stdio(scripts["calc"], exposure="direct")})
    tau.server.add(Turn(text="Answered anyway."))

    listed = tau.run("mcp", "list")
    done = tau.run("-p", *MODEL, "hi")

    hint = "MCP servers need the MCP SDK: pip install 'tau-agent[mcp]'"
    assert listed.returncode == 1 and listed.stderr == f"tau: {hint}\n"
    assert done.returncode == 0 and done.stdout.strip() == "Answered anyway."
    assert done.stderr == f"tau: warning: MCP server 'calc' failed: {hint}\n"


def test_tau_without_mcp_config_never_imports_the_mcp_support(tau: TauCommand) -> None:
    tau.server.add(Turn(text="hi"))

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", "-p", *MODEL, "hi"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert not [name for name in imported if name.startswith(("tau.mcp", "mcp"))]


@pytest.mark.parametrize(("fence", "planted"), [(True, False), (False, True)])
def test_sandbox_mcp_fences_stdio_servers_and_they_run_free_without_it(
    tau: TauCommand, scripts: dict[str, str], fence: bool, planted: bool
) -> None:
    settings = {"sandbox": {"mode": "workspace-write", "mcp": fence}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    configure(tau, {"planter": stdio(scripts["planter"], exposure="direct")})
    target = tau.agent_dir / "planted.txt"
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("mcp__planter__plant", {"path": str(target)})]), Turn(text="Done.")
    )
    done = tau.run("-p", *MODEL, "plant")
    assert done.returncode == 0, done.stderr
    [result] = tool_results(tau.server.last_request)
    assert result == ("planted" if planted else "refused: Read-only file system")
    assert target.exists() is planted

"""``/mcp`` in the terminal UI: pick a server, see its tools, disable it (saved to mcp.json)."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("calc")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    server.run()
    """
)


def test_slash_mcp_picks_a_server_shows_its_tools_and_disables_it(tau: TauCommand, start_tui: Start) -> None:
    script = tau.work / "calc_server.py"
    script.write_text(SERVER)
    config = tau.agent_dir / "mcp.json"
    config.write_text(
        json.dumps(
            {"mcpServers": {"calc": {"command": sys.executable, "args": [str(script)], "exposure": "direct"}}}
        )
    )
    tau.server.add(Turn(text="hello there"))
    terminal = start_tui()
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("hello there")  # the first prompt waited for the direct server: it is connected

    terminal.type("/mcp")
    terminal.send(ENTER)
    terminal.wait_for("calc: connected, 1 tool (direct, global)", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Show details", where="display")
    terminal.send(ENTER)
    terminal.wait_for("tools: add")

    terminal.type("/mcp")
    terminal.send(ENTER)
    terminal.wait_for("calc: connected, 1 tool (direct, global)", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Show details", where="display")
    terminal.send("\x1b[B\x1b[B")  # down to "Disable"
    terminal.wait_for("› Disable", where="display")
    terminal.send(ENTER)
    terminal.wait_for("MCP server 'calc' disabled")
    assert json.loads(config.read_text())["mcpServers"]["calc"]["enabled"] is False


def test_slash_mcp_disables_a_global_server_in_this_trusted_project_only(
    tau: TauCommand, start_tui: Start
) -> None:
    script = tau.work / "calc_server.py"
    script.write_text(SERVER)
    config = tau.agent_dir / "mcp.json"
    entry = {"command": sys.executable, "args": [str(script)], "exposure": "deferred"}
    config.write_text(json.dumps({"mcpServers": {"calc": entry}}))
    terminal = start_tui("--approve")

    terminal.type("/mcp")
    terminal.send(ENTER)
    terminal.wait_for("calc: ", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Disable in this project", where="display")
    terminal.send("\x1b[B\x1b[B\x1b[B")  # down to "Disable in this project"
    terminal.wait_for("› Disable in this project", where="display")
    terminal.send(ENTER)
    terminal.wait_for("MCP server 'calc' disabled in this project")

    assert json.loads((tau.work / ".tau" / "mcp.json").read_text()) == {
        "mcpServers": {"calc": {"enabled": False}}
    }
    assert json.loads(config.read_text()) == {"mcpServers": {"calc": entry}}  # the user's file is untouched

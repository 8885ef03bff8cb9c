"""examples/extensions/mcp_bridge.py against a real MCP server (the mcp SDK's FastMCP) over stdio."""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

import pytest

from tau.ai.types import TextContent
from tau.extensions import (
    ExtensionRunner,
    ExtensionSource,
    SessionShutdownEvent,
    SessionStartEvent,
    load_extensions,
)
from tau.extensions.testing import RecordingHost

pytest.importorskip("mcp")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "mcp_bridge.py"

SERVER = textwrap.dedent(
    """
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:  # mcp 2.x renamed FastMCP
        from mcp.server.mcpserver import MCPServer as FastMCP

    server = FastMCP("calc")


    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b


    if __name__ == "__main__":
        server.run()
    """
)


async def load_bridge(cwd: Path, runners: list[ExtensionRunner]) -> ExtensionRunner:
    runner = await load_extensions([ExtensionSource("file", "mcp_bridge", str(EXAMPLE))], cwd=str(cwd))
    runners.append(runner)
    assert runner.diagnostics == []
    runner.bind(RecordingHost(str(cwd)))
    return runner


@pytest.fixture
def server_command(tmp_path: Path) -> str:
    script = tmp_path / "calc_server.py"
    script.write_text(SERVER, encoding="utf-8")
    return shlex.join([sys.executable, str(script)])


@pytest.mark.timeout(60)
async def test_mcp_tools_become_tau_tools(
    project: Path, runners: list[ExtensionRunner], server_command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAU_MCP_SERVER", raising=False)
    runner = await load_bridge(project, runners)
    assert runner.apply_flag_values({"mcp-server": server_command}) == []
    assert runner.tools == []

    await runner.emit(SessionStartEvent("startup"))
    try:
        (add,) = runner.tools
        assert add.name == "mcp_calc_add"
        assert "Add two numbers" in add.description
        schema = add.parameters
        assert schema["type"] == "object"
        assert set(schema["properties"]) == {"a", "b"}
        assert schema["properties"]["a"]["type"] == "integer"
        assert sorted(schema["required"]) == ["a", "b"]

        result = await add.execute("c1", {"a": 2, "b": 40}, None, None)
        assert result.content == [TextContent("42")]
    finally:
        await runner.emit(SessionShutdownEvent("quit"))
    assert runner.errors == []
    assert runner.supervisor.pending == 0  # the server and its client are gone
    with pytest.raises(RuntimeError, match="not running"):
        await add.execute("c2", {"a": 1, "b": 1}, None, None)


async def test_mcp_bridge_reads_the_command_from_the_environment(
    project: Path, runners: list[ExtensionRunner], server_command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_MCP_SERVER", server_command)
    runner = await load_bridge(project, runners)
    await runner.emit(SessionStartEvent("startup"))
    try:
        assert [tool.name for tool in runner.tools] == ["mcp_calc_add"]
    finally:
        await runner.emit(SessionShutdownEvent("quit"))
    assert runner.errors == []


async def test_mcp_bridge_reports_a_server_that_will_not_start(
    project: Path, runners: list[ExtensionRunner], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_MCP_SERVER", shlex.join([sys.executable, "-c", "raise SystemExit(3)"]))
    runner = await load_bridge(project, runners)
    await runner.emit(SessionStartEvent("startup"))
    assert runner.tools == []
    (error,) = runner.errors
    assert "did not start" in str(error)
    assert runner.supervisor.pending == 0
    await runner.emit(SessionShutdownEvent("quit"))


async def test_mcp_bridge_does_nothing_without_a_server(
    project: Path, runners: list[ExtensionRunner], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAU_MCP_SERVER", raising=False)
    runner = await load_bridge(project, runners)
    await runner.emit(SessionStartEvent("startup"))
    assert runner.tools == []
    await runner.emit(SessionShutdownEvent("quit"))
    assert runner.errors == []

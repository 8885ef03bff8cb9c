"""The SDK's sandbox: built-in replacements (an editor's terminal and files in ACP) stay fenced."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.agent.tool import AgentTool
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import create_agent_session_services
from tau.tools import ToolError, create_bash_tool, create_write_tool


def _tool(tools: list[AgentTool], name: str) -> AgentTool:
    return next(tool for tool in tools if tool.name == name)


async def test_replaced_bash_and_write_cannot_leave_the_fence(tmp_path: Path) -> None:
    work, agent, outside = tmp_path / "work", tmp_path / "agent", tmp_path / "outside.txt"
    work.mkdir()
    agent.mkdir()
    services = create_agent_session_services(cwd=str(work), agent_dir=agent, sandbox_mode="workspace-write")
    assert services.sandbox.problem is None
    # Unfenced stand-ins for what an editor lends (its terminal, its file system).
    lent = [create_bash_tool(str(work)), create_write_tool(str(work))]
    session = create_agent_session(services=services, builtin_replacements=lent).session
    tools = session.get_all_tools()
    with pytest.raises(ToolError, match="Read-only file system"):
        await _tool(tools, "bash").execute("1", {"command": f"echo x > {outside}"}, None, None)
    with pytest.raises(ToolError, match="Refused by the sandbox"):
        await _tool(tools, "write").execute("2", {"path": str(outside), "content": "x"}, None, None)
    assert not outside.exists()
    # Turned off, the lent tools do the work again.
    session.set_sandbox("off")
    await _tool(tools, "bash").execute("3", {"command": f"echo x > {outside}"}, None, None)
    assert outside.read_text() == "x\n"
    await session.dispose()

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
    refused = await _tool(tools, "bash").execute("1", {"command": f"echo x > {outside}"}, None, None)
    assert refused.is_error and "Read-only file system" in str(refused.content)  # a failed result, as pi 1.6
    with pytest.raises(ToolError, match="Refused by the sandbox"):
        await _tool(tools, "write").execute("2", {"path": str(outside), "content": "x"}, None, None)
    assert not outside.exists()
    # Turned off, the lent tools do the work again.
    session.set_sandbox("off")
    await _tool(tools, "bash").execute("3", {"command": f"echo x > {outside}"}, None, None)
    assert outside.read_text() == "x\n"
    await session.dispose()


async def test_bash_declares_escalate_while_the_session_fences_however_it_got_there(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    services = create_agent_session_services(cwd=str(work), agent_dir=agent, sandbox_mode="off")
    session = create_agent_session(services=services).session

    def declared() -> set[str]:
        return set(_tool(session.agent.state.tools, "bash").parameters["properties"])

    assert declared() == {"command", "timeout"}
    session.set_sandbox("read-only")
    assert declared() == {"command", "timeout", "escalate"}
    assert (
        _tool(session.get_all_tools(), "bash").parameters
        is _tool(session.agent.state.tools, "bash").parameters
    )
    session.set_sandbox("workspace-write")
    assert declared() == {"command", "timeout", "escalate"}
    session.set_sandbox("off")
    assert declared() == {"command", "timeout"}
    await session.dispose()


async def test_a_bash_tool_of_the_sdk_keeps_its_own_declaration_through_mode_changes(tmp_path: Path) -> None:
    work, agent = tmp_path / "work", tmp_path / "agent"
    work.mkdir()
    agent.mkdir()
    services = create_agent_session_services(cwd=str(work), agent_dir=agent, sandbox_mode="off")
    own = create_bash_tool(str(work))
    session = create_agent_session(services=services, custom_tools=[own]).session
    session.set_sandbox("workspace-write")
    assert _tool(session.agent.state.tools, "bash") is own
    await session.dispose()


_LATE_START = """
import json, sys, time
from tau.runtime.services import create_agent_session_services

started = time.monotonic()
services = create_agent_session_services(
    cwd=sys.argv[1], agent_dir=sys.argv[2], sandbox_mode="workspace-write", await_sandbox=False
)
built = time.monotonic() - started
errors = [d.message for d in services.diagnostics if d.type == "error"]
problem = services.sandbox.problem
print(json.dumps({"built": built, "errors": errors, "fenced": services.sandbox.fenced, "problem": problem}))
"""


def test_services_need_not_wait_for_the_fence_to_go_up(tmp_path: Path) -> None:
    # A bubblewrap that takes a second to fail: services built without waiting for it report no
    # error, and the sandbox's problem, read afterwards, waits and says why.
    import json
    import os
    import subprocess
    import sys

    work, agent, fake = tmp_path / "work", tmp_path / "agent", tmp_path / "bin"
    for folder in (work, agent, fake):
        folder.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\nsleep 1\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-c", _LATE_START, str(work), str(agent)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    said = json.loads(done.stdout)
    assert said["errors"] == [] and said["built"] < 1
    assert said["fenced"] is True
    assert "user namespaces" in said["problem"] and "No permissions" in said["problem"]

"""What the bash tool's commands learn of the session from their environment, over the real `tau`
process: pi 1.6's ``PI_*`` session variables, their ``TAU_*`` twins and the process markers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import ScriptedToolCall, Turn

SHOW_ENV = "env | grep -E '^(TAU|PI|AI)_' | sort"
NAMES = ("SESSION_ID", "SESSION_FILE", "PROVIDER", "MODEL", "REASONING_LEVEL")


def bash_turn(command: str = SHOW_ENV) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall(name="bash", arguments={"command": command})])


def command_env(request: Any) -> dict[str, str]:
    """The variables the last bash command printed (``NAME=value`` lines of its tool result)."""
    *_, result = [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]
    return dict(line.split("=", 1) for line in result.splitlines() if "=" in line)


def test_a_bash_command_gets_the_sessions_pi_variables_and_their_tau_twins(tau: TauCommand) -> None:
    tau.server.add(bash_turn(), Turn(text="done"))
    result = tau.run(*MODEL, "-p", "show the environment")
    assert result.returncode == 0, result.stderr
    env = command_env(tau.server.last_request)
    [session_file] = tau.session_files()
    header = json.loads(session_file.read_text().splitlines()[0])
    expected = {
        "SESSION_ID": header["id"],
        "SESSION_FILE": str(session_file),
        "PROVIDER": "local",
        "MODEL": "fake-model",
        "REASONING_LEVEL": "off",
    }
    for name, value in expected.items():
        assert env[f"PI_{name}"] == value, name
        assert env[f"TAU_{name}"] == value, name
    assert (env["AI_AGENT"], env["PI_CODING_AGENT"], env["TAU_CODING_AGENT"]) == ("tau", "true", "true")


def test_values_a_parent_agent_left_are_removed_when_the_session_has_none(tau: TauCommand) -> None:
    stale = {f"{prefix}{name}": "stale" for prefix in ("PI_", "TAU_") for name in NAMES}
    tau.env.update(stale)
    tau.server.add(bash_turn(), Turn(text="done"))
    result = tau.run(*MODEL, "--no-session", "-p", "show the environment")
    assert result.returncode == 0, result.stderr
    env = command_env(tau.server.last_request)
    assert "PI_SESSION_FILE" not in env and "TAU_SESSION_FILE" not in env  # in memory: no file
    assert all(env.get(name) != "stale" for name in stale)
    assert env["PI_MODEL"] == env["TAU_MODEL"] == "fake-model"


def test_the_system_prompt_says_the_variables_are_there_only_when_bash_is(tau: TauCommand) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    first = str(tau.server.last_request.body["messages"][0]["content"])
    assert "TAU_MODEL" in first and "PI_* twins" in first
    assert tau.run(*MODEL, "--tools", "read", "-p", "hi").returncode == 0
    assert "TAU_MODEL" not in str(tau.server.last_request.body["messages"][0]["content"])


def add_reasoning_model(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    local = models["providers"]["local"]
    local["models"].append({**local["models"][0], "id": "thinker", "reasoning": True})
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


async def test_a_model_and_level_change_reaches_the_next_command(tau: TauCommand, tmp_path: Path) -> None:
    add_reasoning_model(tau)
    tau.server.add(bash_turn(), Turn(text="first"), bash_turn(), Turn(text="second"))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", "--no-session", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.prompt("one")
        before = command_env(tau.server.last_request)
        await rpc.call("set_model", provider="local", modelId="thinker")
        await rpc.call("set_thinking_level", level="high")
        await rpc.prompt("two")
        after = command_env(tau.server.last_request)
    assert (before["PI_MODEL"], before["PI_REASONING_LEVEL"]) == ("fake-model", "off")
    assert (after["PI_MODEL"], after["TAU_MODEL"]) == ("thinker", "thinker")
    assert (after["PI_REASONING_LEVEL"], after["TAU_REASONING_LEVEL"]) == ("high", "high")
    assert after["PI_SESSION_ID"] == before["PI_SESSION_ID"]

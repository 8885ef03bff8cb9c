"""Built-in commands over RPC as pi 1.6 answers them (run side by side against the fake server):
``/llama`` and ``/mcp`` are always there, ``get_commands`` lists them, and an unknown ``/command``
goes to the model."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn

PI16_LLAMA_COMMAND = {
    "name": "llama",
    "description": "Manage llama.cpp router models",
    "source": "extension",
    "sourceInfo": {
        "path": "builtin:llama.cpp",
        "source": "builtin",
        "scope": "temporary",
        "origin": "top-level",
    },
}
PI16_MCP_COMMAND = {
    "name": "mcp",
    "description": "MCP servers: status, reconnect, enable, disable",
    "source": "extension",
    "sourceInfo": {"path": "builtin:mcp", "source": "builtin", "scope": "temporary", "origin": "top-level"},
}


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def rpc(tau: TauCommand) -> RpcClient:
    return RpcClient([sys.executable, "-m", "tau", "--mode", "rpc", *MODEL], cwd=str(tau.work), env=tau.env)


async def test_mcp_without_servers_says_so_and_sends_nothing_to_the_model(tau: TauCommand) -> None:
    async with rpc(tau) as client:
        response = await client.send({"type": "prompt", "message": "/mcp"})
        assert response["data"] == {"disposition": "handled"}
        [notice] = [line for line in client.lines if line["type"] == "extension_ui_request"]
        assert notice["method"] == "notify" and notice["notifyType"] == "info"
        assert notice["message"] == (
            f"No MCP servers configured. Add them to {tau.agent_dir / 'mcp.json'} or .tau/mcp.json."
        )
        assert (await client.call("get_messages"))["messages"] == []
    assert tau.server.requests == []


async def test_get_commands_lists_mcp_without_servers_as_pi16_lists_its_builtin(tau: TauCommand) -> None:
    async with rpc(tau) as client:
        assert (await client.call("get_commands"))["commands"] == [PI16_LLAMA_COMMAND, PI16_MCP_COMMAND]


async def test_get_commands_lists_the_mcp_extensions_command_once_with_servers_configured(
    tau: TauCommand,
) -> None:
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": {}}))
    async with rpc(tau) as client:
        assert (await client.call("get_commands"))["commands"] == [PI16_LLAMA_COMMAND, PI16_MCP_COMMAND]
        await client.send({"type": "prompt", "message": "/mcp"})
        [notice] = [line for line in client.lines if line["type"] == "extension_ui_request"]
        assert notice["message"] == "No MCP servers configured."  # the extension's own answer
    assert tau.server.requests == []


async def test_llama_outside_the_terminal_ui_says_so_and_sends_nothing_as_pi16s(tau: TauCommand) -> None:
    async with rpc(tau) as client:
        response = await client.send({"type": "prompt", "message": "/llama"})
        assert response["data"] == {"disposition": "handled"}
        [notice] = [line for line in client.lines if line["type"] == "extension_ui_request"]
        assert (notice["method"], notice["notifyType"]) == ("notify", "warning")
        assert notice["message"] == "/llama is available in interactive mode"
        assert (await client.call("get_messages"))["messages"] == []
    assert tau.server.requests == []


def test_print_mode_answers_llama_on_stderr_and_sends_nothing(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "-p", "/llama")
    assert (result.returncode, result.stdout) == (0, "")  # pi 1.6 -p /llama: exit 0, nothing out
    assert result.stderr == "tau: /llama is available in interactive mode\n"
    assert tau.server.requests == []


async def test_an_unknown_slash_command_goes_to_the_model_as_in_pi16(tau: TauCommand) -> None:
    tau.server.add(Turn(text="no such command here"))
    async with rpc(tau) as client:
        await client.prompt("/frobnicate now")
    [request] = tau.server.requests
    assert "/frobnicate now" in json.dumps(request.body["messages"])


def test_print_mode_answers_mcp_without_servers_on_stderr_and_sends_nothing(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "-p", "/mcp")
    assert (result.returncode, result.stdout) == (0, "")  # pi 1.6 -p /mcp: exit 0, nothing out
    assert result.stderr == (
        f"tau: No MCP servers configured. Add them to {tau.agent_dir / 'mcp.json'} or .tau/mcp.json.\n"
    )
    assert tau.server.requests == []

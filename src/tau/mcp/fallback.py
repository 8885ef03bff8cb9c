"""``/mcp`` where no MCP server is configured: the command is always there, as in pi 1.6.

The MCP extension loads only when an ``mcp.json`` exists (it is not worth its start-up time
otherwise), so the modes answer ``/mcp`` themselves when no extension registered it.
"""

from __future__ import annotations

import os
from collections.abc import Collection

from tau.context.project_dirs import PROJECT_DIR_NAME

__all__ = [
    "MCP_COMMAND",
    "MCP_DESCRIPTION",
    "MCP_SOURCE_PATH",
    "answered_by_mode",
    "invokes_mcp",
    "no_servers_message",
]

MCP_COMMAND = "mcp"
MCP_DESCRIPTION = "MCP servers: status, reconnect, enable, disable"
MCP_SOURCE_PATH = "builtin:mcp"


def invokes_mcp(text: str) -> bool:
    """Whether ``text`` is ``/mcp`` (with or without arguments)."""
    return text == "/mcp" or text.startswith("/mcp ")


def answered_by_mode(text: str, extension_commands: Collection[str]) -> bool:
    """Whether ``text`` is ``/mcp`` while no extension registered it: the mode answers it with
    ``no_servers_message`` instead of sending it to the model."""
    return invokes_mcp(text) and MCP_COMMAND not in extension_commands


def no_servers_message(agent_dir: str) -> str:
    """What ``/mcp`` says when there are no servers, and where to add them."""
    user_file = os.path.join(agent_dir, "mcp.json")
    return f"No MCP servers configured. Add them to {user_file} or {PROJECT_DIR_NAME}/mcp.json."

"""The ``mcpServers`` of ``session/new`` / ``session/load`` as tau's mcp.json entries.

tau's built-in MCP support runs them for that session like servers of an mcp.json (their tools
reached through ``tool_search``, as mcp.json's default exposure has it). stdio and Streamable HTTP
servers are taken; tau's MCP client has no SSE transport, so initialize does not offer ``sse`` and
an SSE server a client sends anyway is left out with a line on stderr.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from tau.modes.acp.jsonrpc import JsonRpcError

__all__ = ["MCP_CAPABILITIES", "mcp_json_entries"]

MCP_CAPABILITIES = {"http": True, "sse": False}


def _pairs(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise JsonRpcError.invalid_params(f"an MCP server's {what} is a list of name/value pairs")
    pairs: dict[str, str] = {}
    for pair in value:
        if not (
            isinstance(pair, dict)
            and isinstance(pair.get("name"), str)
            and isinstance(pair.get("value"), str)
        ):
            raise JsonRpcError.invalid_params(f"an MCP server's {what} is a list of name/value pairs")
        pairs[pair["name"]] = pair["value"]
    return pairs


def mcp_json_entries(servers: Any) -> dict[str, dict[str, Any]]:
    """The servers by name (made an mcp.json name: letters, digits, ``_`` and ``-``)."""
    if servers is None:
        return {}
    if not isinstance(servers, list):
        raise JsonRpcError.invalid_params("mcpServers is a list")
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        if not isinstance(server, dict) or not isinstance(server.get("name"), str):
            raise JsonRpcError.invalid_params("each of mcpServers needs a name")
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", server["name"]).strip("-") or "server"
        kind = server.get("type")
        if kind == "sse":
            print(
                f"tau: warning: MCP server {server['name']}: SSE is not supported, left out", file=sys.stderr
            )
            continue
        if kind == "http":
            entry: dict[str, Any] = {"type": "http", "url": server.get("url")}
            entry["headers"] = _pairs(server.get("headers"), "headers")
        elif kind is None or kind == "stdio":
            entry = {"command": server.get("command"), "args": server.get("args") or []}
            entry["env"] = _pairs(server.get("env"), "env")
        else:
            print(
                f"tau: warning: MCP server {server['name']}: type {kind!r} is not supported, left out",
                file=sys.stderr,
            )
            continue
        entries[name] = entry
    return entries

"""``/mcp``: the servers' state, and reconnecting, enabling or disabling one.

``/mcp`` alone shows the status (in the TUI, a picker: choose a server, then what to do with it);
``/mcp reconnect|enable|disable|login|logout <server>`` does it at once (``login``: OAuth through the
browser, as ``tau mcp login``). Enabling and disabling are saved to the
``mcp.json`` that defines the server (its project override, when there is one); in a trusted folder
the picker also offers to enable or disable a global server in this project only (a new override).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.mcp.extension import McpServers

__all__ = ["register_mcp_command"]

_ACTIONS = ("reconnect", "enable", "disable", "login", "logout")


def register_mcp_command(tau: ExtensionAPI, servers: McpServers) -> None:
    async def mcp(args: str, ctx: Any) -> None:
        servers.start_all()  # the status of servers not started yet would say nothing
        words = args.split()
        if not words:
            if ctx.has_ui and servers.connections:
                await _pick(servers, ctx)
            else:
                _show(ctx, "\n".join(servers.status_lines()))
            return
        if len(words) != 2 or words[0] not in _ACTIONS:
            _show(ctx, "usage: /mcp [reconnect|enable|disable|login|logout <server>]", error=True)
            return
        await _act(servers, ctx, words[0], words[1])

    def complete(prefix: str) -> list[str]:
        words = prefix.split(" ")
        if len(words) <= 1:
            return [a for a in _ACTIONS if a.startswith(words[0])]
        return [f"{words[0]} {n}" for n in servers.connections if n.startswith(words[1])]

    from tau.mcp.fallback import MCP_COMMAND, MCP_DESCRIPTION

    tau.register_command(MCP_COMMAND, mcp, description=MCP_DESCRIPTION, complete=complete)


async def _act(servers: McpServers, ctx: Any, action: str, name: str) -> None:
    if name not in servers.connections:
        _show(ctx, f"no MCP server named {name!r} (see /mcp)", error=True)
        return
    if action in ("login", "logout"):
        await _sign(servers, ctx, name, login=action == "login")
        return
    if action == "reconnect":
        connection = await servers.reconnect(name)
        if connection.state == "connected":
            _show(ctx, f"MCP server {name!r} reconnected ({len(connection.tools)} tools)")
        else:
            _show(
                ctx,
                f"MCP server {name!r} is {connection.state}: {connection.error or ''}".rstrip(": "),
                error=True,
            )
        return
    in_project = action.endswith(" in this project")
    verb = action.removesuffix(" in this project")
    try:
        await servers.set_enabled(name, verb == "enable", in_project=in_project)
    except (OSError, ValueError) as exc:
        _show(ctx, f"could not save the change: {exc}", error=True)
        return
    _show(ctx, f"MCP server {name!r} {verb}d" + (" in this project" if in_project else ""))


async def _sign(servers: McpServers, ctx: Any, name: str, *, login: bool) -> None:
    """Sign in through the browser (then reconnect), or delete the stored sign-in."""
    from tau.mcp.oauth_signin import sign_in
    from tau.mcp.oauth_store import storage_for

    config = servers.connections[name].config
    if config.transport != "http":
        _show(ctx, f"MCP server {name!r} is not an HTTP server: it has no sign-in", error=True)
        return
    if not login:
        storage = storage_for(servers.agent_dir, config)
        _show(ctx, f"Signed out of {name}" if storage.forget() else f"No stored sign-in for {name}")
        return

    def open_page(url: str) -> None:
        import webbrowser

        webbrowser.open(url)

    _show(ctx, f"Signing in to {name} in the browser...")
    try:
        await sign_in(servers.agent_dir, config, open_url=open_page)
    except Exception as exc:  # the sign-in's failure is the user's news, in one line
        _show(ctx, f"sign-in to {name} failed: {str(exc).strip() or type(exc).__name__}", error=True)
        return
    connection = await servers.reconnect(name)
    _show(ctx, f"Signed in to {name} ({connection.state})")


async def _pick(servers: McpServers, ctx: Any) -> None:
    from tau.mcp.listing import describe_server

    labels = {describe_server(c)[0]: name for name, c in servers.connections.items()}
    chosen = await ctx.ui.select("MCP servers", list(labels))
    if chosen is None:
        return
    name = labels[chosen]
    connection = servers.connections[name]
    switch = "Disable" if connection.config.enabled else "Enable"
    actions = ["Show details", "Reconnect", switch]
    if servers.may_override_in_project(name):
        actions.append(f"{switch} in this project")  # a project override of a global server, as pi
    if connection.config.transport == "http":
        actions += ["Login", "Logout"]
    action = await ctx.ui.select(f"MCP server {name}", actions)
    if action == "Show details":
        _show(ctx, "\n".join(describe_server(connection)))
    elif action is not None:
        await _act(servers, ctx, action.lower(), name)


def _show(ctx: Any, text: str, *, error: bool = False) -> None:
    if ctx.has_ui:
        ctx.ui.notify(text, "error" if error else "info")
    else:
        print(text, file=sys.stderr if error else sys.stdout, flush=True)

"""The MCP support in waiting: loaded beside other extensions when no ``mcp.json`` brought in the
full one, it only handles ``mcp_servers_change``. The first server an extension registers after the
session started imports ``tau.mcp.extension`` and hands over to it, so a session without MCP
servers never pays for importing it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tau.extensions.loader import ExtensionSource

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.extensions.context import ExtensionContext

__all__ = ["on_demand_mcp_source"]


def on_demand_mcp_source(
    cwd: str, agent_dir: str, *, include_project: bool, codemode: bool = True, tool_search: bool = True
) -> ExtensionSource:
    """The waiting extension (same name and path as the built-in MCP extension)."""

    def setup(tau: ExtensionAPI) -> None:
        started: list[Any] = []

        async def first_change(event: Any, ctx: ExtensionContext) -> None:
            if started:
                return  # the full support handles this one itself
            from tau.mcp.config import McpConfig
            from tau.mcp.extension import McpServers

            servers = McpServers(
                tau,
                McpConfig(),
                cwd,
                agent_dir,
                trusted=include_project,
                codemode=codemode,
                tool_search=tool_search,
            )
            started.append(servers)
            servers.install()  # takes in every registered server, and handles later changes
            servers.attach(ctx)

        tau.on("mcp_servers_change", first_change)

    return ExtensionSource("inline", "mcp", "<builtin:mcp>", setup=setup)

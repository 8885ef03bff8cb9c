"""The resource tools (``list_mcp_resources``, ``list_mcp_resource_templates``, ``read_mcp_resource``),
named and shaped as in pi (and Codex, OpenCode): they reach every enabled server that offers resources."""

from __future__ import annotations

import base64
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

from tau.agent.tool import AgentToolResult, text_result
from tau.ai.types import ImageContent, TextContent
from tau.extensions.types import ToolDefinition
from tau.mcp.connection import McpCallError, ServerConnection

if TYPE_CHECKING:
    from tau.mcp.extension import McpServers

__all__ = ["resource_tools"]

_APP_MIME = "text/html;profile=mcp-app"


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_SERVER = {"type": "string", "description": "The MCP server's name."}
_CURSOR = {"type": "string", "description": "Continue a listing of one server from its nextCursor."}


def _visible(entry: dict[str, Any]) -> bool:
    """MCP Apps resources are left out: tau does not render them."""
    uri = str(entry.get("uri") or entry.get("uriTemplate") or "")
    return not uri.startswith("ui://") and entry.get("mimeType") != _APP_MIME


def _json(value: Any) -> AgentToolResult:
    return text_result(json.dumps(value, ensure_ascii=False, indent=2))


def resource_tools(servers: McpServers, *, default_active: bool) -> list[ToolDefinition]:
    """The three tools over the servers of ``servers`` (active at once when one is ``direct``)."""

    def offering(name: str | None) -> list[ServerConnection]:
        if name is not None:
            connection = servers.connections.get(name)
            if connection is None or not connection.config.enabled or connection.config.exposure == "hidden":
                raise ValueError(f"no enabled MCP server named {name!r}")
            return [connection]
        return [
            c
            for c in servers.connections.values()
            if c.config.enabled and c.config.exposure != "hidden" and c.has_resources
        ]

    async def listing(params: dict[str, Any], templates: bool) -> AgentToolResult:
        key = "resourceTemplates" if templates else "resources"
        name = params.get("server")
        await servers.wait_for_all()
        entries: list[dict[str, Any]] = []
        result: dict[str, Any] = {}
        for connection in offering(name):
            cursor = params.get("cursor") if name else None
            while True:
                try:
                    if templates:
                        page = await connection.list_resource_templates(cursor)
                    else:
                        page = await connection.list_resources(cursor)
                except McpCallError as exc:
                    raise RuntimeError(str(exc)) from None
                entries += [{"server": connection.name, **e} for e in page.get(key, []) if _visible(e)]
                cursor = page.get("nextCursor")
                if name is not None or not cursor:
                    break
            if name is not None and cursor:
                result["nextCursor"] = cursor
        result = {"server": name, key: entries, **result} if name is not None else {key: entries}
        return _json(result)

    async def list_resources(
        call_id: str, params: dict[str, Any], signal: Any, update: Any, ctx: Any
    ) -> AgentToolResult:
        return await listing(params, templates=False)

    async def list_templates(
        call_id: str, params: dict[str, Any], signal: Any, update: Any, ctx: Any
    ) -> AgentToolResult:
        return await listing(params, templates=True)

    async def read(
        call_id: str, params: dict[str, Any], signal: Any, update: Any, ctx: Any
    ) -> AgentToolResult:
        (connection,) = offering(str(params.get("server", "")))
        uri = str(params.get("uri", ""))
        try:
            result = await connection.read_resource(uri)
        except McpCallError as exc:
            raise RuntimeError(str(exc)) from None
        content: list[TextContent | ImageContent] = []
        for item in result.get("contents", []):
            mime = str(item.get("mimeType") or "")
            if "text" in item:
                content.append(TextContent(str(item["text"])))
            elif mime.startswith("image/"):
                content.append(ImageContent(str(item.get("blob", "")), mime))
            elif "blob" in item:
                handle, path = tempfile.mkstemp(prefix="tau-mcp-resource-")
                with os.fdopen(handle, "wb") as f:
                    f.write(base64.b64decode(str(item["blob"])))
                content.append(
                    TextContent(f"[{mime or 'binary'} resource {item.get('uri', uri)} saved to {path}]")
                )
        return AgentToolResult(
            content or [TextContent("(empty resource)")], details={"server": connection.name, "uri": uri}
        )

    return [
        ToolDefinition(
            name="list_mcp_resources",
            description="List the resources of MCP servers as JSON: with `server`, one page (continue with `cursor`); without, every resource of every server.",
            parameters=_object({"server": _SERVER, "cursor": _CURSOR}),
            execute=list_resources,
            default_active=default_active,
        ),
        ToolDefinition(
            name="list_mcp_resource_templates",
            description="List the URI templates of resources MCP servers can read but do not list.",
            parameters=_object({"server": _SERVER, "cursor": _CURSOR}),
            execute=list_templates,
            default_active=default_active,
        ),
        ToolDefinition(
            name="read_mcp_resource",
            description="Read a resource of an MCP server by its URI.",
            parameters=_object(
                {"server": _SERVER, "uri": {"type": "string", "description": "The resource URI."}},
                ["server", "uri"],
            ),
            execute=read,
            default_active=default_active,
        ),
    ]

"""Shorter tool titles, for every tool: registered ones, and ones that are not registered (yet).

``tau.register_tool_renderer`` chooses how calls of any tool are drawn in the interactive chat.
Here ``read`` calls show only the file's name, and calls of MCP tools (``mcp__<server>__<tool>``)
that nothing draws otherwise, such as those of a resumed session whose server has not connected
yet, show the server and the tool. ``next()`` is what would be used without this extension, so
``next() or mine`` only fills in.

    tau -e examples/extensions/tool_titles.py
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from rich.text import Text

from tau.extensions import ExtensionAPI, ToolRenderer


def setup(tau: ExtensionAPI) -> None:
    @tau.register_tool_renderer
    def titles(tool_name: str, next: Callable[[], Any]) -> Any:
        if tool_name == "read":
            return ToolRenderer(
                render_call=lambda args, theme: Text(f"read {os.path.basename(str(args.get('path', '')))}")
            )
        if tool_name.startswith("mcp__"):
            _, server, tool = [*tool_name.split("__", 2), "", ""][:3]
            return next() or ToolRenderer(render_call=lambda args, theme: Text(f"{server} › {tool}"))
        return next()

"""Tools calling tools: an ``inspect_file`` tool that runs ``read``, ``bash`` and a tool of its own
through ``ctx.execute_tool``, and that tool, ``file_digest``, which only other tools reach.

``ctx.execute_tool(name, args)`` runs another tool as the model's calls run: its arguments are
validated, the ``tool_call`` and ``tool_result`` handlers see it (with ``parent_tool_call_id``), and
it emits ``tool_execution_*`` events whose id is ``<this call's id>/<n>``. It never raises for the
tool's failure: the outcome's ``is_error`` says so. The nested calls add nothing to the transcript;
the session records them (``nestedCalls`` on the ``inspect_file`` result).

``file_digest`` has ``exposure="codemode"``: it is not declared to the model, yet other tools (and
codemode scripts) call it whether it is active or not.

    tau -e examples/extensions/inspect_file.py
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from tau.agent.tool import AgentToolResult, text_result
from tau.ai.types import TextContent
from tau.extensions import ExtensionAPI, ExtensionToolContext, ToolAnnotations, ToolDefinition

PATH = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "The file, relative to the working folder"}},
    "required": ["path"],
}


def text_of(result: AgentToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def setup(tau: ExtensionAPI) -> None:
    def digest(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: ExtensionToolContext
    ) -> str:
        with open(os.path.join(ctx.cwd, params["path"]), "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()

    tau.register_tool(
        ToolDefinition(
            name="file_digest",
            description="The SHA-256 of a file, in hex.",
            parameters=PATH,
            execute=digest,
            exposure="codemode",
            annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
        )
    )

    async def inspect(
        tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: ExtensionToolContext
    ) -> AgentToolResult:
        path = params["path"]
        lines: list[str] = []
        read = await ctx.execute_tool("read", {"path": path, "limit": 3})
        if read.is_error:
            return text_result(f"cannot read {path}: {text_of(read.result)}", details={"ok": False})
        lines.append("first lines:\n" + text_of(read.result))
        if on_update is not None:
            on_update(text_result("read done", details={"ok": None}))
        counted = await ctx.execute_tool("bash", {"command": f"wc -l < '{path}'"})
        lines.append(f"line count: {text_of(counted.result).strip()}")
        digest = await ctx.execute_tool("file_digest", {"path": path})
        lines.append(f"sha256: {text_of(digest.result)}")
        return text_result("\n".join(lines), details={"ok": True, "callable": [t.name for t in ctx.tools]})

    tau.register_tool(
        ToolDefinition(
            name="inspect_file",
            description="Show a file's first lines, its line count and its SHA-256.",
            prompt_snippet="Inspect a file: first lines, line count, digest",
            parameters=PATH,
            execute=inspect,
            annotations=ToolAnnotations(read_only_hint=True),
        )
    )

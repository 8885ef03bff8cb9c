"""The ``ls`` tool: one folder's entries, alphabetical (case-insensitive), ``/`` after folders."""

from __future__ import annotations

import os

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.tools.errors import ToolError, describe_os_error, raise_if_aborted
from tau.tools.listing_output import ListingOutput
from tau.tools.operations import LocalFileOperations, LsOperations
from tau.tools.paths import resolve_to_cwd
from tau.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_LS_LIMIT = 500

LS_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {
            "type": "number",
            "description": f"Maximum number of entries to return (default: {DEFAULT_LS_LIMIT})",
        },
    },
}

LS_DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for directories. "
    f"Includes dotfiles. Output is truncated to {DEFAULT_LS_LIMIT} entries or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first)."
)


def create_ls_tool(cwd: str, operations: LsOperations | None = None) -> AgentTool:
    """The ls tool for ``cwd``."""
    ops: LsOperations = operations or LocalFileOperations()

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        root = resolve_to_cwd(str(args.get("path") or "."), cwd)
        limit = max(1, int(args.get("limit") or DEFAULT_LS_LIMIT))
        if not await ops.exists(root):
            raise ToolError(f"Path not found: {root}")
        try:
            is_dir = await ops.is_directory(root)
        except OSError as error:
            raise ToolError(f"Cannot read directory: {describe_os_error(error)}") from error
        if not is_dir:
            raise ToolError(f"Not a directory: {root}")
        try:
            names = await ops.readdir(root)
        except OSError as error:
            raise ToolError(f"Cannot read directory: {describe_os_error(error)}") from error

        entries: list[str] = []
        limit_reached = False
        for name in sorted(names, key=lambda n: (n.lower(), n)):
            if len(entries) >= limit:
                limit_reached = True
                break
            try:
                entry_is_dir = await ops.is_directory(os.path.join(root, name))
            except OSError:
                continue
            entries.append(name + "/" if entry_is_dir else name)
        if not entries:
            return text_result("(empty directory)")

        limit_notice = f"{limit} entries limit reached. Use limit={limit * 2} for more"
        output = ListingOutput(
            entries, limit_reached=(limit_notice, "entryLimitReached", limit) if limit_reached else None
        )
        return output.result()

    return AgentTool(
        name="ls",
        label="ls",
        description=LS_DESCRIPTION,
        parameters=LS_PARAMETERS,
        execute=execute,
        prompt_snippet="List directory contents",
        prompt_guidelines=[],
    )

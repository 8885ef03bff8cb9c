"""The ``write`` tool: create or overwrite a file, creating its parent folders.

Beyond pi: the success message reports the UTF-8 size written (pi reports the UTF-16 length of the
text and calls it bytes).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject, JsonSchemaSampling
from tau.tools.errors import ToolError, describe_os_error, raise_if_aborted
from tau.tools.mutation_queue import file_mutation
from tau.tools.operations import LocalFileOperations, WriteOperations
from tau.tools.paths import resolve_to_cwd
from tau.tools.truncate import utf8_len

if TYPE_CHECKING:
    from tau.tools.sandbox import Sandbox

WRITE_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
    "required": ["path", "content"],
}

WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites it if it does. "
    "Creates parent directories as needed."
)


def create_write_tool(
    cwd: str, operations: WriteOperations | None = None, *, sandbox: Sandbox | None = None
) -> AgentTool:
    """The write tool for ``cwd``; ``sandbox`` refuses the paths its fence keeps from being written."""
    ops: WriteOperations = operations or LocalFileOperations()

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        path = str(args["path"])
        content = str(args["content"])
        absolute = resolve_to_cwd(path, cwd)
        if sandbox is not None and (refusal := sandbox.write_refusal(absolute)) is not None:
            raise ToolError(refusal)
        async with file_mutation(absolute):
            raise_if_aborted(signal)
            try:
                await ops.mkdir(os.path.dirname(absolute))
                await ops.write_file(absolute, content)
            except OSError as error:
                raise ToolError(f"Could not write {path}: {describe_os_error(error, absolute)}") from error
        return text_result(f"Successfully wrote {utf8_len(content)} bytes to {path}")

    return AgentTool(
        name="write",
        label="write",
        description=WRITE_DESCRIPTION,
        parameters=WRITE_PARAMETERS,
        execute=execute,
        prompt_snippet="Create or overwrite files",
        constrained_sampling=JsonSchemaSampling("prefer"),
        prompt_guidelines=["Use write only for new files or complete rewrites."],
    )

"""Turn an extension's ``ToolDefinition`` into an ``AgentTool`` the agent loop can run.

The agent calls ``execute(tool_call_id, args, signal, on_update)``; the wrapper adds a fresh
``ExtensionContext`` as the fifth argument (made at call time, so it is never stale while the
session lives) and accepts the looser return values extension tools may give.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.agent.tool_execution import NestedToolCaller, nested_tool_caller
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.extensions.context import ExtensionToolContext
from tau.extensions.errors import MalformedResultError
from tau.extensions.results import to_content
from tau.extensions.types import RegisteredTool, ToolOutput

__all__ = ["to_tool_result", "wrap_tool"]


def to_tool_result(output: ToolOutput, tool: RegisteredTool) -> AgentToolResult:
    """An ``AgentToolResult`` from what the tool returned (a result, text, or ``{content, details,
    terminate}``); anything else raises a ``TypeError`` naming the tool and its extension."""
    if isinstance(output, AgentToolResult):
        return output
    if isinstance(output, str):
        return text_result(output)
    what = f"tool {tool.definition.name!r} of extension {tool.extension!r}"
    if isinstance(output, Mapping):
        unknown = set(output) - {"content", "details", "terminate"}
        if unknown or "content" not in output:
            raise TypeError(
                f"{what} returned a dict with keys {sorted(output)}; expected content, details, terminate"
            )
        try:
            content = to_content(output["content"], "content", what)
        except MalformedResultError as exc:
            raise TypeError(str(exc)) from None
        return AgentToolResult(content, output.get("details"), bool(output.get("terminate", False)))
    raise TypeError(f"{what} returned {type(output).__name__}; expected AgentToolResult, str or a dict")


def wrap_tool(
    tool: RegisteredTool,
    make_context: Callable[[AbortSignal | None, NestedToolCaller | None], ExtensionToolContext],
) -> AgentTool:
    """The agent-side tool for ``tool``; ``make_context(signal, caller)`` builds each call's
    ``ctx``, whose ``execute_tool`` makes nested calls through ``caller``."""
    definition = tool.definition

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        ctx = make_context(signal, nested_tool_caller())
        output = definition.execute(tool_call_id, args, signal, on_update, ctx)
        if inspect.isawaitable(output):
            output = await output
        return to_tool_result(output, tool)

    return AgentTool(
        name=definition.name,
        description=definition.description,
        parameters=definition.schema(),
        execute=execute,
        label=definition.label,
        prepare_arguments=definition.prepare_arguments,
        execution_mode=definition.execution_mode,
        prompt_snippet=definition.prompt_snippet,
        prompt_guidelines=list(definition.prompt_guidelines),
        exposure=definition.exposure,
        constrained_sampling=definition.constrained_sampling,
    )

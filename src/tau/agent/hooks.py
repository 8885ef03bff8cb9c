"""Hooks around each tool call: ``before_tool_call`` may block it, ``after_tool_call`` may amend it.

Both receive the run's abort signal and may be plain functions or coroutines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from msgspec import Struct

from tau.agent.context import AgentContext
from tau.agent.tool import AgentToolResult
from tau.ai.abort import AbortSignal
from tau.ai.types import AssistantMessage, ImageContent, JsonObject, TextContent, ToolCall


class BeforeToolCallContext(Struct):
    """A call about to run. ``args`` are the validated arguments: the very object ``execute``
    will receive, so changing it in place changes the call (it is not validated again)."""

    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: JsonObject
    context: AgentContext
    parent_tool_call_id: str | None = None
    """The calling tool's id, for a call a tool made while it ran (``tau.agent.nested_calls``)."""


class BeforeToolCallResult(Struct):
    """``block=True`` turns the call into an error result with ``reason`` as its text."""

    block: bool = False
    reason: str | None = None


class AfterToolCallContext(Struct):
    assistant_message: AssistantMessage
    tool_call: ToolCall
    args: JsonObject
    result: AgentToolResult
    is_error: bool
    context: AgentContext
    parent_tool_call_id: str | None = None


class AfterToolCallResult(Struct):
    """Fields to replace in the result; ``None`` keeps the original value (no deep merge)."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None
    terminate: bool | None = None


BeforeToolCall: TypeAlias = Callable[
    [BeforeToolCallContext, AbortSignal | None],
    "BeforeToolCallResult | Awaitable[BeforeToolCallResult | None] | None",
]
AfterToolCall: TypeAlias = Callable[
    [AfterToolCallContext, AbortSignal | None],
    "AfterToolCallResult | Awaitable[AfterToolCallResult | None] | None",
]

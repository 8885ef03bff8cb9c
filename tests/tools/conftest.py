"""Fixtures shared by the tool tests: ``run`` calls a tool as the agent loop would, ``text_of``
joins a result's text blocks, ``spill`` is a spill folder removed after the test."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

import pytest

from tau.agent.tool import AgentTool, AgentToolResult
from tau.ai.abort import AbortSignal
from tau.ai.types import TextContent
from tau.tools import SpillDirectory


class RunTool(Protocol):
    def __call__(
        self,
        tool: AgentTool,
        args: dict[str, Any],
        *,
        signal: AbortSignal | None = None,
        updates: list[AgentToolResult] | None = None,
    ) -> Awaitable[AgentToolResult]: ...


async def _run_tool(
    tool: AgentTool,
    args: dict[str, Any],
    *,
    signal: AbortSignal | None = None,
    updates: list[AgentToolResult] | None = None,
) -> AgentToolResult:
    if tool.prepare_arguments is not None:
        args = tool.prepare_arguments(args)
    return await tool.execute("call-1", args, signal, updates.append if updates is not None else None)


def _text_of(result: AgentToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


@pytest.fixture
def run() -> RunTool:
    return _run_tool


@pytest.fixture
def text_of() -> Callable[[AgentToolResult], str]:
    return _text_of


@pytest.fixture
def spill() -> Iterator[SpillDirectory]:
    with SpillDirectory() as directory:
        yield directory

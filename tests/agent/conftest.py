"""Shared fixtures for the agent tests: a faux provider, agents bound to it, tools, event recorders."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from tau.agent import Agent, AgentTool, AgentToolResult, text_result
from tau.agent.events import AgentEvent
from tau.ai import AbortSignal
from tau.testing.faux import FauxProvider, register_faux_provider

OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(chunk_chars=8)
    yield provider
    provider.unregister()


@pytest.fixture
def make_agent(faux: FauxProvider) -> Callable[..., Agent]:
    """An Agent on the faux model with a dummy API key; keyword arguments go to ``Agent``."""

    def build(**options: Any) -> Agent:
        options.setdefault("get_api_key", lambda provider: "test-key")
        return Agent(model=faux.get_model(), **options)

    return build


class Recorder:
    """A listener that keeps every event."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent, signal: AbortSignal) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def compact_types(self) -> list[str]:
        """Event types with runs of ``message_update`` collapsed into one entry."""
        out: list[str] = []
        for kind in self.types:
            if kind == "message_update" and out and out[-1] == "message_update":
                continue
            out.append(kind)
        return out

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


Execute = Callable[[str, dict[str, Any], AbortSignal | None, Any], Awaitable[AgentToolResult]]


def build_tool(
    name: str,
    execute: Execute | None = None,
    parameters: dict[str, Any] | None = None,
    **options: Any,
) -> AgentTool:
    """A tool; without ``execute`` it answers ``"<name> ok"``."""

    async def default(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> AgentToolResult:
        return text_result(f"{name} ok")

    return AgentTool(
        name=name,
        description=f"the {name} tool",
        parameters=parameters or OBJECT_SCHEMA,
        execute=execute or default,
        **options,
    )


@pytest.fixture(name="make_tool")
def make_tool_fixture() -> Callable[..., AgentTool]:
    """``make_tool(name, execute=None, parameters=None, **AgentTool options)``."""
    return build_tool

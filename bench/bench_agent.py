"""Agent loop overhead: 20 tool turns against the in-process faux provider with a trivial tool.

Reported: process CPU time per turn (``time.process_time`` over a whole run divided by the number
of turns, median over the runs). It covers everything in the process: the loop, tool validation
and execution, event dispatch to a listener, and the faux provider streaming each reply.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from _common import Figure, median
from tau.agent import Agent, AgentTool, AgentToolResult, text_result
from tau.testing.faux import faux_message, faux_text, faux_tool_call, register_faux_provider

TOOL_TURNS = 20
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


async def _add_one(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    return text_result(str(args["n"] + 1))


def _script() -> list[Any]:
    turns = [
        faux_message([faux_text(f"Step {i}: calling the tool."), faux_tool_call("add_one", {"n": i})])
        for i in range(TOOL_TURNS)
    ]
    return [*turns, faux_message("All done.")]


async def _one_run() -> tuple[float, float]:
    """CPU seconds and wall seconds of one prompt that takes TOOL_TURNS tool turns."""
    faux = register_faux_provider()
    try:
        faux.set_responses(_script())
        tool = AgentTool(name="add_one", description="Add one", parameters=SCHEMA, execute=_add_one)
        agent = Agent(model=faux.get_model(), tools=[tool], get_api_key=lambda provider: "bench")
        events = 0

        def count(event: Any, signal: Any) -> None:
            nonlocal events
            events += 1

        agent.subscribe(count)
        cpu, wall = time.process_time(), time.perf_counter()
        await agent.prompt("Add one twenty times.")
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        results = [m for m in agent.state.messages if m.role == "toolResult"]
        assert len(results) == TOOL_TURNS and not any(getattr(m, "is_error", False) for m in results)
        return cpu, wall
    finally:
        faux.unregister()


def run(repeat: int) -> list[Figure]:
    asyncio.run(_one_run())  # warm up: imports, validator compilation
    samples = [asyncio.run(_one_run()) for _ in range(max(repeat, 5))]
    cpu_per_turn = median([cpu for cpu, _ in samples]) / TOOL_TURNS
    wall_per_turn = median([wall for _, wall in samples]) / TOOL_TURNS
    return [
        Figure("agent loop: process CPU per tool turn", cpu_per_turn * 1000, "ms", "<= 5 ms per turn"),
        Figure("agent loop: wall time per tool turn", wall_per_turn * 1000, "ms"),
    ]

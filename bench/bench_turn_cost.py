"""Per-turn harness cost of a tool loop against a history of N messages, for each provider API.

An in-process ``Agent`` starts from a history of N messages (tool calls and their results, each
with some text), answers one prompt to warm up, then runs TURNS more tool turns against
``FakeLLMServer``. Reported: CPU time of the
agent's own thread per tool turn (user + system time of that thread; the fake server answers on
threads of its own, so its cost is excluded), median over the runs; the user (Python) part is
shown too, the system part is mostly the kernel carrying the request bytes over loopback. A harness whose per-turn cost grows with N
makes a long tool loop quadratic.

    .venv/bin/python bench/run.py turn_cost
    .venv/bin/python bench/bench_turn_cost.py --profile anthropic-messages 500   # cProfile one run
"""

from __future__ import annotations

import asyncio
import resource
import sys
from typing import Any

from _common import Figure, median
from tau.agent import Agent, AgentTool, AgentToolResult, text_result
from tau.ai.types import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.runtime.extension_hooks import AgentExtensionHooks
from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.testing.fake_llm.script import ScriptedToolCall

SIZES = (10, 100, 500, 1000)
TURNS = 10
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["n"],
}
APIS: dict[str, str] = {
    "anthropic-messages": "",
    "openai-completions": "/v1",
    "openai-responses": "/v1",
    "google-generative-ai": "/v1beta",
}
RESULT_TEXT = "line of tool output that a real tool would return\n" * 20


async def _read(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
    return text_result(RESULT_TEXT)


async def _drained() -> None:
    return None


def _model(api: str, server: FakeLLMServer) -> Model:
    return Model(
        id="bench-model", api=api, provider="bench", base_url=server.url(APIS[api]), max_tokens=32000
    )


def history(n: int, model: Model) -> list[Message]:
    """N messages: a user prompt, then pairs of an assistant tool call and its result."""
    messages: list[Message] = [UserMessage("Read many files.", timestamp=1)]
    i = 0
    while len(messages) < n:
        call = ToolCall(id=f"call_{i}", name="read", arguments={"path": f"src/module_{i}.py", "n": i})
        messages.append(
            AssistantMessage(
                content=[TextContent(f"Reading file {i} to see what it does."), call],
                api=model.api,
                provider=model.provider,
                model=model.id,
                usage=Usage(),
                stop_reason="toolUse",
                timestamp=2 + i,
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=call.id, tool_name="read", content=[TextContent(RESULT_TEXT)], timestamp=2 + i
            )
        )
        i += 1
    return messages[:n]


def _turns() -> list[Turn]:
    calls = [
        Turn(
            text="Next file.",
            tool_calls=[ScriptedToolCall("read", {"path": f"new_{i}.py", "n": i}, id=f"new_{i}")],
        )
        for i in range(TURNS)
    ]
    return [Turn(text="Warm."), *calls, Turn(text="Done.")]


async def one_run(api: str, n: int) -> tuple[float, float]:
    """Agent-thread CPU seconds (user, system) per tool turn, continuing from N messages.

    A first one-turn prompt is not measured: it converts the loaded history once, as the first
    request after opening a session does; the figure is the steady cost of each further turn.
    """
    with FakeLLMServer(_turns()) as server:
        model = _model(api, server)
        tool = AgentTool(name="read", description="Read a file", parameters=SCHEMA, execute=_read)
        agent = Agent(
            model=model,
            tools=[tool],
            messages=history(n, model),
            get_api_key=lambda _p: "bench",
        )
        # The callbacks tau's runtime installs on every agent (for extensions), here with none loaded.
        AgentExtensionHooks(lambda: None, _drained).install(agent)
        await agent.prompt("Start.")
        before = resource.getrusage(resource.RUSAGE_THREAD)
        await agent.prompt("Go on.")
        after = resource.getrusage(resource.RUSAGE_THREAD)
        assert server.pending == 0, "the run ended early"
        user = after.ru_utime - before.ru_utime
        system = after.ru_stime - before.ru_stime
        return user / (TURNS + 1), system / (TURNS + 1)


def run(repeat: int) -> list[Figure]:
    asyncio.run(one_run("anthropic-messages", 10))  # warm up: imports, validator compilation
    figures: list[Figure] = []
    for api in APIS:
        for n in SIZES:
            samples = [asyncio.run(one_run(api, n)) for _ in range(max(repeat, 3))]
            user = median([u for u, _ in samples])
            system = median([s for _, s in samples])
            goal = "<= 5 ms, flat in N" if n == 1000 else ""
            figures.append(Figure(f"turn cost {api} N={n}", (user + system) * 1000, "ms CPU/turn", goal))
            figures.append(Figure("  of which user (Python) time", user * 1000, "ms"))
    return figures


def _profile(api: str, n: int) -> None:
    import cProfile
    import pstats

    asyncio.run(one_run(api, 10))
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(one_run(api, n))
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--profile":
        _profile(sys.argv[2], int(sys.argv[3]))
    else:
        for figure in run(3):
            print(figure)

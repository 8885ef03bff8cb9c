"""The ``task`` tool's figures (issue #35), in one process against the fake server.

- **overhead**: a ``task`` call's wall time minus the child's own run (the same prompt and scripted
  answer run by an already made session): what making, recording and closing a child costs.
- **cached share of a child's first request**: the bytes of the child's first request that lie in
  the longest common prefix with an earlier request of the parent (cache order: tools, system,
  messages; ``tau.testing.fake_llm.prefix``), for an Anthropic model with pi 1.6's current-Claude
  compat flags and for a plain OpenAI-compatible one; a fresh session's first request has 0.
  With an agent definition that narrows the tools, and without.
- **8 parallel children under a provider limit**: one reply with eight ``task`` calls, the
  session's requests held to ``concurrency: 2`` as ``tau batch`` holds a task's (its
  ``limited_stream_fn`` on the session and, through ``child_stream_wrapper``, on every child);
  the most requests the fake server saw in flight at once, and the wall time.

    .venv/bin/python bench/bench_subagents.py [runs]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import Figure
from tau.ai.types import ToolResultMessage
from tau.batch.limits import LimitBook, limited_stream_fn
from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn, text_turn, tool_turn
from tau.testing.fake_llm.prefix import canonical
from tau.testing.fake_llm.script import RecordedRequest

FLAG_COMPAT = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsMidConvoEffort": True,
}
TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "task"]


def _provider(server: FakeLLMServer, variant: str) -> dict[str, Any]:
    if variant == "flags":
        return {
            "baseUrl": server.url(""),
            "api": "anthropic-messages",
            "apiKey": "k",
            "models": [
                {"id": "claude-bench", "reasoning": True, "contextWindow": 200000, "compat": FLAG_COMPAT}
            ],
        }
    return {
        "baseUrl": server.url("/v1"),
        "api": "openai-completions",
        "apiKey": "k",
        "models": [{"id": "plain"}],
    }


def _session(server: FakeLLMServer, root: Path, variant: str) -> AgentSession:
    project, agent_dir = root / "project", root / "agent"
    project.mkdir(exist_ok=True)
    (agent_dir / "agents").mkdir(parents=True, exist_ok=True)
    (agent_dir / "agents" / "scout.md").write_text(
        "---\nname: scout\ndescription: Read-only recon\ntools: read, grep, find, ls\n---\nYou only look.\n"
    )
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"bench": _provider(server, variant)}}))
    services = create_agent_session_services(cwd=str(project), agent_dir=str(agent_dir))
    model = services.model_registry.get_provider_models("bench")[0]
    manager = SessionManager.create(str(project), agent_dir=str(agent_dir))
    return create_agent_session(services=services, session_manager=manager, model=model, tools=TOOLS).session


def _prefix_share(first_child: Any, parents: list[Any]) -> float:
    child = canonical(first_child)
    text = child.head + "".join(child.messages)
    best = 0
    for request in parents:
        earlier = canonical(request)
        other = earlier.head + "".join(earlier.messages)
        n = 0
        limit = min(len(text), len(other))
        while n < limit and text[n] == other[n]:
            n += 1
        best = max(best, n)
    return best / len(text)


async def _cached_share(variant: str, agent: str | None) -> float:
    args: dict[str, Any] = {"prompt": "Find where settings are read."}
    if agent:
        args["agent"] = agent
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        server.add(tool_turn("task", args), text_turn("In config/settings.py."), text_turn("Done."))
        session = _session(server, Path(tmp), variant)
        await session.prompt("Where are settings read? Delegate it.")
        requests = list(server.requests)
        await session.dispose()
    return _prefix_share(requests[1], [requests[0]])


async def _overhead(runs: int) -> float:
    gaps: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        session = _session(server, Path(tmp), "plain")
        plain = _session(server, Path(tmp), "plain")
        for i in range(runs + 2):
            server.add(tool_turn("task", {"prompt": f"step {i}"}), text_turn("child answer"), text_turn("ok"))
            started: dict[str, float] = {}
            ended: dict[str, float] = {}

            def watch(
                event: Any, started: dict[str, float] = started, ended: dict[str, float] = ended
            ) -> None:
                if event.type == "tool_execution_start":
                    started[event.tool_call_id] = time.perf_counter()
                elif event.type == "tool_execution_end":
                    ended[event.tool_call_id] = time.perf_counter()

            unsubscribe = session.subscribe(watch)
            await session.prompt(f"delegate {i}")
            unsubscribe()
            results = [m for m in session.messages if isinstance(m, ToolResultMessage)]
            call = results[-1].tool_call_id
            task_time = ended[call] - started[call]
            server.add(text_turn("child answer"))
            begin = time.perf_counter()
            await plain.prompt(f"step {i}")
            child_own = time.perf_counter() - begin
            if i >= 2:  # the first runs warm imports and connections
                gaps.append((task_time - child_own) * 1000)
        await session.dispose()
        await plain.dispose()
    return statistics.median(gaps)


class _Counting:
    """Answers every request after ``delay`` s and counts how many were in flight at once."""

    def __init__(self, children: int, delay: float) -> None:
        self.children, self.delay = children, delay
        self.in_flight = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Turn:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(self.delay)
            messages = request.body["messages"]
            if any(m.get("role") == "tool" for m in messages):
                return Turn(text="All children answered.")
            if "Delegate" in json.dumps(messages[-1]):
                calls = [ScriptedToolCall("task", {"prompt": f"child {i}"}) for i in range(self.children)]
                return Turn(tool_calls=calls)
            return Turn(text="child answer")
        finally:
            with self.lock:
                self.in_flight -= 1


async def _parallel_under_limit(children: int, limit: int) -> tuple[int, float, int]:
    counting = _Counting(children, 0.2)
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer() as server:
        server.add(*[counting] * (children + 2))
        session = _session(server, Path(tmp), "plain")
        book = LimitBook({"bench": {"concurrency": limit}})
        assert session.agent.stream_fn is not None
        session.agent.stream_fn = limited_stream_fn(session.agent.stream_fn, {"bench"}, book, "task-1")
        session.child_stream_wrapper = lambda inner: limited_stream_fn(inner, {"bench"}, book, "task-1")
        begin = time.perf_counter()
        await session.prompt("Delegate eight things.")
        wall = time.perf_counter() - begin
        answered = sum(1 for m in session.messages if isinstance(m, ToolResultMessage) and not m.is_error)
        await session.dispose()
    return counting.most, wall, answered


def run(runs: int = 20) -> list[Figure]:
    figures = [
        Figure("task call overhead beyond the child's run", asyncio.run(_overhead(runs)), "ms", "<= 50")
    ]
    for variant in ("flags", "plain"):
        for agent in (None, "scout"):
            share = asyncio.run(_cached_share(variant, agent))
            name = f"child 1st request cached share, {variant}{', scout' if agent else ''}"
            figures.append(Figure(name, share * 100, "%", ">= 90"))
    most, wall, answered = asyncio.run(_parallel_under_limit(8, 2))
    assert answered == 8, f"{answered} of 8 children answered"
    figures.append(Figure("8 parallel children, most in flight (limit 2)", most, "requests", "<= 2"))
    figures.append(Figure("8 parallel children, wall (0.2 s a request)", wall * 1000, "ms"))
    return figures


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 20):
        print(figure)

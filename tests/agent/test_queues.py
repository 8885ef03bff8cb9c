"""Steering and follow-up queues (spec 20 §6; cases 27-32)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tau.agent import Agent, AgentTool, AgentToolResult, text_result
from tau.agent.events import AgentEvent
from tau.agent.queues import MessageQueue
from tau.ai import AbortSignal, UserMessage
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

MakeTool = Callable[..., AgentTool]
Recorder = Any


def _text(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)


def _conversation(agent: Agent) -> list[str]:
    """Each message as ``role:text`` (tool results as ``toolResult``)."""
    out = []
    for m in agent.state.messages:
        out.append("toolResult" if m.role == "toolResult" else f"{m.role}:{_text(m)}")
    return out


def _queue(push: Callable[[str], None], *texts: str) -> None:
    for text in texts:
        push(text)


def _on_first_assistant_start(agent: Agent, action: Callable[[], None]) -> None:
    done = False

    def listener(event: AgentEvent, signal: AbortSignal) -> None:
        nonlocal done
        if not done and event.type == "message_start" and event.message.role == "assistant":
            done = True
            action()

    agent.subscribe(listener)


def test_one_at_a_time_hands_out_the_oldest_message_per_poll() -> None:
    queue = MessageQueue()
    first, second = UserMessage("a"), UserMessage("b")
    queue.push(first)
    queue.push(second)
    assert queue.drain() == [first]
    assert queue.drain() == [second]
    assert queue.drain() == []


def test_all_mode_hands_out_everything_in_order() -> None:
    queue = MessageQueue("all")
    messages = [UserMessage(str(i)) for i in range(3)]
    for m in messages:
        queue.push(m)
    assert queue.drain() == messages
    assert len(queue) == 0


def test_clear_returns_what_was_dropped() -> None:
    queue = MessageQueue()
    queue.push(UserMessage("a"))
    assert [_text(m) for m in queue.clear()] == ["a"]
    assert queue.messages == []


async def test_steering_during_a_tool_batch_waits_for_every_call_then_opens_the_next_turn(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    agent: Agent
    ran: list[str] = []

    async def a(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        agent.steer("change of plan")
        await asyncio.sleep(0)
        ran.append("a")
        return text_result("A")

    async def b(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        ran.append("b")
        return text_result("B")

    faux.set_responses([faux_message([faux_tool_call("a", {}), faux_tool_call("b", {})]), faux_message("ok")])
    agent = make_agent(tools=[make_tool("a", a), make_tool("b", b)])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert sorted(ran) == ["a", "b"]
    assert all(not getattr(m, "is_error", False) for m in agent.state.messages)
    assert _conversation(agent) == [
        "user:go",
        "assistant:",
        "toolResult",
        "toolResult",
        "user:change of plan",
        "assistant:ok",
    ]
    kinds = recorder.compact_types()
    first_turn_end = kinds.index("turn_end")
    assert kinds[first_turn_end : first_turn_end + 4] == [
        "turn_end",
        "turn_start",
        "message_start",
        "message_end",
    ]


async def test_three_steering_messages_one_at_a_time_take_three_turns(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    faux.set_responses([faux_message(t) for t in ("r0", "r1", "r2", "r3")])
    agent = make_agent()
    _on_first_assistant_start(agent, lambda: _queue(agent.steer, "s1", "s2", "s3"))
    await agent.prompt("go")
    assert _conversation(agent) == [
        "user:go",
        "assistant:r0",
        "user:s1",
        "assistant:r1",
        "user:s2",
        "assistant:r2",
        "user:s3",
        "assistant:r3",
    ]


async def test_steering_mode_all_injects_every_queued_message_in_one_turn(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    faux.set_responses([faux_message("r0"), faux_message("r1")])
    agent = make_agent(steering_mode="all")
    _on_first_assistant_start(agent, lambda: _queue(agent.steer, "s1", "s2", "s3"))
    await agent.prompt("go")
    assert _conversation(agent) == [
        "user:go",
        "assistant:r0",
        "user:s1",
        "user:s2",
        "user:s3",
        "assistant:r1",
    ]
    assert faux.state.call_count == 2


async def test_steering_queued_before_the_first_call_joins_the_first_turn(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("r0")])
    agent = make_agent()
    agent.steer("also this")
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert _conversation(agent) == ["user:go", "user:also this", "assistant:r0"]
    assert recorder.types.count("turn_start") == 1
    assert faux.state.call_count == 1


async def test_a_follow_up_waits_for_a_turn_without_tool_calls(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    agent: Agent

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        agent.follow_up("afterwards")
        return text_result("ok")

    faux.set_responses([faux_message(faux_tool_call("t", {})), faux_message("a"), faux_message("b")])
    agent = make_agent(tools=[make_tool("t", execute)])
    await agent.prompt("go")
    assert _conversation(agent) == [
        "user:go",
        "assistant:",
        "toolResult",
        "assistant:a",
        "user:afterwards",
        "assistant:b",
    ]


async def test_two_follow_ups_one_at_a_time_add_two_turns(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message(t) for t in ("r0", "r1", "r2")])
    agent = make_agent()
    _on_first_assistant_start(agent, lambda: _queue(agent.follow_up, "f1", "f2"))
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert _conversation(agent) == [
        "user:go",
        "assistant:r0",
        "user:f1",
        "assistant:r1",
        "user:f2",
        "assistant:r2",
    ]
    assert recorder.types.count("turn_start") == 3

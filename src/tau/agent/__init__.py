"""tau.agent: the agent loop and the stateful ``Agent`` on top of ``tau.ai``.

    from tau.agent import Agent, AgentTool, text_result

    agent = Agent(model=model, tools=[echo_tool])
    agent.subscribe(on_event)
    await agent.prompt("hello")

Names are imported on first access, so ``import tau.agent`` (or ``tau.agent.tool``, which tool
authors need) stays cheap; the loop and asyncio load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.agent.agent import Agent, AgentBusyError, Listener
    from tau.agent.config import AgentLoopConfig, StreamFn, TurnSummary
    from tau.agent.context import AgentContext
    from tau.agent.events import (
        AgentEnd,
        AgentEvent,
        AgentStart,
        MessageEnd,
        MessageStart,
        MessageUpdate,
        ToolExecutionEnd,
        ToolExecutionStart,
        ToolExecutionUpdate,
        TurnEnd,
        TurnStart,
        agent_event_to_json,
    )
    from tau.agent.hooks import (
        AfterToolCallContext,
        AfterToolCallResult,
        BeforeToolCallContext,
        BeforeToolCallResult,
    )
    from tau.agent.loop import (
        AgentEventStream,
        agent_loop,
        agent_loop_continue,
        run_agent_loop,
        run_agent_loop_continue,
    )
    from tau.agent.messages import AgentMessage, CustomAgentMessage, default_convert_to_llm, user_message
    from tau.agent.queues import MessageQueue, QueueMode
    from tau.agent.state import AgentState
    from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentEnd",
    "AgentEvent",
    "AgentEventStream",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentStart",
    "AgentState",
    "AgentTool",
    "AgentToolResult",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "CustomAgentMessage",
    "Listener",
    "MessageEnd",
    "MessageQueue",
    "MessageStart",
    "MessageUpdate",
    "QueueMode",
    "StreamFn",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolUpdate",
    "TurnEnd",
    "TurnStart",
    "TurnSummary",
    "agent_event_to_json",
    "agent_loop",
    "agent_loop_continue",
    "default_convert_to_llm",
    "run_agent_loop",
    "run_agent_loop_continue",
    "text_result",
    "user_message",
]

# Searched in this order: the cheap modules first, so a tool author importing AgentTool does not
# load the loop.
_MODULES = ("tool", "messages", "events", "context", "hooks", "queues", "state", "config", "loop", "agent")

__getattr__, __dir__ = lazy_exports(globals(), _MODULES)

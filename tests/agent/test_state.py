"""Agent state: list copies on assignment and the per-event reduction (spec 20 §1.5, §3.3)."""

from __future__ import annotations

from tau.agent.events import AgentEnd, MessageEnd, MessageStart, ToolExecutionEnd, ToolExecutionStart, TurnEnd
from tau.agent.state import PLACEHOLDER_MODEL, AgentState
from tau.agent.tool import text_result
from tau.ai import UserMessage
from tau.testing.faux import faux_message


def test_assigning_messages_or_tools_stores_a_copy() -> None:
    state = AgentState()
    messages = [UserMessage("a")]
    state.messages = messages
    messages.append(UserMessage("b"))
    assert len(state.messages) == 1
    tools: list = []
    state.tools = tools
    assert state.tools is not tools


def test_an_unconfigured_state_has_the_placeholder_model_and_thinking_off() -> None:
    state = AgentState()
    assert state.model is PLACEHOLDER_MODEL and state.model.provider == "unknown"
    assert state.thinking_level == "off"


def test_messages_grow_only_on_message_end() -> None:
    state = AgentState()
    user = UserMessage("hi")
    state.apply(MessageStart(user))
    assert state.messages == [] and state.streaming_message is user
    state.apply(MessageEnd(user))
    assert state.messages == [user] and state.streaming_message is None


def test_pending_tool_calls_follow_start_and_end_with_a_new_set_each_time() -> None:
    state = AgentState()
    state.apply(ToolExecutionStart("c1", "t", {}))
    first = state.pending_tool_calls
    state.apply(ToolExecutionStart("c2", "t", {}))
    assert first == {"c1"} and state.pending_tool_calls == {"c1", "c2"}
    state.apply(ToolExecutionEnd("c1", "t", text_result("x"), False))
    assert state.pending_tool_calls == {"c2"}


def test_a_failed_turn_records_its_error_and_a_new_run_clears_it() -> None:
    state = AgentState()
    state.apply(TurnEnd(faux_message("", stop_reason="error", error_message="boom"), []))
    assert state.error_message == "boom"
    state.begin_run()
    assert state.error_message is None and state.is_streaming
    state.apply(AgentEnd([]))
    assert state.is_streaming
    state.end_run()
    assert not state.is_streaming

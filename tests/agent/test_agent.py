"""The stateful Agent (spec 20 §2, §3.3, §7, §8; cases 1-4, 33-41, 44-45, 48-52)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from tau.agent import Agent, AgentBusyError, AgentTool, BeforeToolCallResult, text_result
from tau.agent.events import AgentEvent
from tau.ai import AbortSignal, AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call, register_faux_provider

MakeTool = Callable[..., AgentTool]
Recorder = Any

LONG_TEXT = "hello there, this answer is long enough to stream in several pieces"


async def test_a_text_only_prompt_emits_the_reference_sequence(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message(LONG_TEXT)])
    agent = make_agent()
    agent.subscribe(recorder)
    await agent.prompt("hi")
    assert recorder.compact_types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert len(recorder.of("message_update")) > 1
    end = recorder.of("agent_end")[0]
    assert [m.role for m in end.messages] == ["user", "assistant"]
    assert end.messages[1].text() == LONG_TEXT
    assert recorder.of("turn_end")[0].tool_results == []
    assert agent.state.messages == end.messages


async def test_a_prompt_with_images_puts_the_text_block_first(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    faux.set_responses([faux_message("seen")])
    agent = make_agent()
    image = ImageContent(data="aGVsbG8=", mime_type="image/png")
    await agent.prompt("look", images=[image])
    user = agent.state.messages[0]
    assert isinstance(user, UserMessage)
    assert isinstance(user.content, list)
    assert isinstance(user.content[0], TextContent) and user.content[0].text == "look"
    assert user.content[1] == image


async def test_a_list_prompt_emits_each_message_before_the_assistant_starts(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("ok")])
    agent = make_agent()
    agent.subscribe(recorder)
    first, second = UserMessage("one"), UserMessage("two")
    await agent.prompt([first, second])
    starts = [(e.type, e.message.role) for e in recorder.events if e.type in ("message_start", "message_end")]
    assert starts[:5] == [
        ("message_start", "user"),
        ("message_end", "user"),
        ("message_start", "user"),
        ("message_end", "user"),
        ("message_start", "assistant"),
    ]
    assert recorder.of("message_start")[0].message is first
    assert recorder.of("message_start")[1].message is second


async def test_a_single_tool_call_emits_the_reference_sequence_and_orders_state(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message(faux_tool_call("echo", {})), faux_message("done")])
    agent = make_agent(tools=[make_tool("echo")])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert recorder.compact_types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "toolResult", "assistant"]
    first_turn = recorder.of("turn_end")[0]
    assert first_turn.tool_results == [agent.state.messages[2]]


async def test_an_error_reply_ends_the_run_and_keeps_the_queues(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("partial", stop_reason="error", error_message="overloaded")])
    agent = make_agent()
    agent.subscribe(recorder)

    def queue_during_the_reply(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.steer("steer me")
            agent.follow_up("then this")

    agent.subscribe(queue_during_the_reply)
    await agent.prompt("hi")
    assert recorder.types[-2:] == ["turn_end", "agent_end"]
    assert recorder.of("turn_end")[0].tool_results == []
    assert agent.state.error_message == "overloaded"
    assert len(agent.steering_messages) == 1 and len(agent.follow_up_messages) == 1
    assert agent.has_queued_messages()
    assert faux.state.call_count == 1


async def test_an_abort_while_streaming_keeps_the_aborted_message(recorder: Recorder) -> None:
    slow = register_faux_provider(chunk_chars=4, tokens_per_second=200)
    try:
        slow.set_responses([faux_message(LONG_TEXT * 3)])
        agent = Agent(model=slow.get_model(), get_api_key=lambda provider: "k")
        agent.subscribe(recorder)

        def abort_on_first_update(event: AgentEvent, signal: AbortSignal) -> None:
            if event.type == "message_update" and event.assistant_message_event.type == "text_delta":
                agent.abort()

        agent.subscribe(abort_on_first_update)
        await agent.prompt("hi")
    finally:
        slow.unregister()
    last = agent.state.messages[-1]
    assert isinstance(last, AssistantMessage)
    assert last.stop_reason == "aborted"
    assert 0 < len(last.text()) < len(LONG_TEXT * 3)
    assert recorder.types[-3:] == ["message_end", "turn_end", "agent_end"]
    assert agent.state.error_message
    assert not agent.state.is_streaming


async def test_an_abort_during_tools_finishes_the_batch_then_adds_one_aborted_reply(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    started = asyncio.Event()
    seen: list[bool] = []

    async def wait_for_abort(
        call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: Any
    ) -> Any:
        assert signal is not None
        started.set()
        await signal.wait()
        seen.append(signal.aborted)
        raise RuntimeError("stopped by abort")

    faux.set_responses([faux_message(faux_tool_call("wait", {})), faux_message("never sent")])
    agent = make_agent(tools=[make_tool("wait", wait_for_abort)])
    run = asyncio.create_task(agent.prompt("go"))
    await started.wait()
    agent.abort()
    await run
    assert seen == [True]
    roles = [m.role for m in agent.state.messages]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    result, last = agent.state.messages[2], agent.state.messages[3]
    assert isinstance(result, ToolResultMessage) and result.is_error
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted" and last.content == []


async def test_abort_and_wait_for_idle_do_nothing_when_idle(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent()
    agent.abort()
    assert agent.signal is None
    await asyncio.wait_for(agent.wait_for_idle(), timeout=0.1)


async def test_prompt_and_continue_refuse_while_a_run_is_active(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    release = asyncio.Event()

    async def block(call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: Any) -> Any:
        await release.wait()
        return text_result("ok")

    faux.set_responses([faux_message(faux_tool_call("block", {})), faux_message("done")])
    agent = make_agent(tools=[make_tool("block", block)])
    run = asyncio.create_task(agent.prompt("go"))
    while not agent.state.pending_tool_calls:
        await asyncio.sleep(0)
    assert agent.signal is not None
    with pytest.raises(AgentBusyError, match="steer"):
        await agent.prompt("again")
    with pytest.raises(AgentBusyError):
        await agent.continue_()
    release.set()
    await agent.wait_for_idle()
    await run
    assert not agent.is_running and agent.signal is None


async def test_continue_refuses_an_empty_history_or_a_final_assistant_reply_with_empty_queues(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent()
    with pytest.raises(ValueError, match="no messages"):
        await agent.continue_()
    faux.set_responses([faux_message("hi")])
    await agent.prompt("hello")
    with pytest.raises(ValueError, match="assistant"):
        await agent.continue_()


async def test_continue_after_an_assistant_reply_runs_a_queued_follow_up_as_the_prompt(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("first"), faux_message("second")])
    agent = make_agent()
    await agent.prompt("hello")
    agent.follow_up("and then?")
    agent.subscribe(recorder)
    await agent.continue_()
    assert recorder.compact_types()[:5] == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
    ]
    injected = recorder.of("message_start")[0].message
    assert isinstance(injected, UserMessage) and injected.content[0].text == "and then?"  # type: ignore[union-attr]
    assert not agent.has_queued_messages()
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "user", "assistant"]


async def test_continue_with_two_steering_messages_injects_one_per_turn(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("first"), faux_message("a"), faux_message("b")])
    agent = make_agent()
    await agent.prompt("hello")
    agent.steer("s1")
    agent.steer("s2")
    agent.subscribe(recorder)
    await agent.continue_()
    texts = [_text(m) for m in agent.state.messages[2:]]
    assert texts == ["s1", "a", "s2", "b"]
    assert recorder.types.count("turn_start") == 2
    assert faux.state.call_count == 3


async def test_continue_from_a_user_message_emits_no_user_events_and_calls_the_model_once(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("answer")])
    agent = make_agent(messages=[UserMessage("pending question")])
    agent.subscribe(recorder)
    await agent.continue_()
    assert recorder.compact_types() == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert faux.state.call_count == 1
    assert [m.role for m in recorder.of("agent_end")[0].messages] == ["assistant"]


async def test_a_raising_convert_to_llm_fails_the_run_with_a_synthetic_error_message(
    make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    def broken(messages: list[Any]) -> list[Any]:
        raise RuntimeError("cannot convert")

    agent = make_agent(convert_to_llm=broken)
    agent.subscribe(recorder)
    await agent.prompt("hi")
    assert recorder.types == ["agent_start", "turn_start", "message_start", "message_end", "agent_end"]
    failed = agent.state.messages[-1]
    assert isinstance(failed, AssistantMessage)
    assert failed.stop_reason == "error" and failed.error_message == "cannot convert"
    assert failed.content == [TextContent("")]
    assert recorder.of("agent_end")[0].messages == [failed]
    assert all(e.message is not failed for e in recorder.of("message_end"))
    assert agent.state.error_message == "cannot convert"
    assert not agent.state.is_streaming


async def test_a_stream_fn_that_raises_after_an_abort_gives_an_aborted_synthetic_message(
    make_agent: Callable[..., Agent],
) -> None:
    agent: Agent

    def rejecting(model: Any, context: Any, options: Any) -> Any:
        agent.abort()
        raise RuntimeError("transport gone")

    agent = make_agent(stream_fn=rejecting)
    await agent.prompt("hi")
    failed = agent.state.messages[-1]
    assert isinstance(failed, AssistantMessage)
    assert failed.stop_reason == "aborted" and failed.error_message == "transport gone"


async def test_a_slow_listener_holds_the_loop_until_it_finishes(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    seen_last_role: list[str] = []
    agent: Agent

    async def slow_on_message_end(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "message_end":
            await asyncio.sleep(0.02)

    def before(context: Any, signal: AbortSignal | None) -> BeforeToolCallResult | None:
        seen_last_role.append(agent.state.messages[-1].role)
        return None

    faux.set_responses([faux_message(faux_tool_call("echo", {})), faux_message("done")])
    agent = make_agent(tools=[make_tool("echo")], before_tool_call=before)
    agent.subscribe(slow_on_message_end)
    await agent.prompt("go")
    assert seen_last_role == ["assistant"]


async def test_a_listener_raising_on_turn_start_fails_the_run(
    faux: FauxProvider, make_agent: Callable[..., Agent], recorder: Recorder
) -> None:
    faux.set_responses([faux_message("never")])
    agent = make_agent()

    def explode(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "turn_start":
            raise RuntimeError("listener broke")

    agent.subscribe(recorder)
    agent.subscribe(explode)
    await agent.prompt("hi")
    assert recorder.types == ["agent_start", "turn_start", "agent_end"]
    assert agent.state.error_message == "listener broke"
    assert not agent.state.is_streaming
    assert faux.state.call_count == 0


async def test_is_streaming_stays_true_inside_agent_end_listeners(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    faux.set_responses([faux_message("ok")])
    agent = make_agent()
    during: list[bool] = []

    async def on_end(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "agent_end":
            await asyncio.sleep(0)
            during.append(agent.state.is_streaming)

    agent.subscribe(on_end)
    await agent.prompt("hi")
    assert during == [True]
    assert not agent.state.is_streaming


async def test_changing_tools_mid_run_only_affects_the_next_run(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    offered: list[list[str]] = []

    def reply(message: AssistantMessage) -> Any:
        def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
            offered.append([t.name for t in context.tools or []])
            return message

        return factory

    faux.set_responses(
        [
            reply(faux_message(faux_tool_call("old", {}))),
            reply(faux_message("done")),
            reply(faux_message(faux_tool_call("old", {}))),
            reply(faux_message("done")),
        ]
    )
    agent = make_agent(tools=[make_tool("old")])

    def swap_tools(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.state.tools = [make_tool("new")]

    unsubscribe = agent.subscribe(swap_tools)
    await agent.prompt("first")
    unsubscribe()
    first_result = agent.state.messages[2]
    assert _text(first_result) == "old ok"
    await agent.prompt("second")
    assert offered == [["old"], ["old"], ["new"], ["new"]]
    second_result = agent.state.messages[6]
    assert isinstance(second_result, ToolResultMessage) and second_result.is_error
    assert "old" in _text(second_result)


async def test_reset_clears_history_error_pending_calls_and_queues(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    faux.set_responses([faux_message("x", stop_reason="error", error_message="bad")])
    agent = make_agent()
    await agent.prompt("hi")
    agent.steer("s")
    agent.follow_up("f")
    assert agent.state.error_message == "bad"
    agent.reset()
    assert agent.state.messages == []
    assert agent.state.error_message is None
    assert agent.state.pending_tool_calls == frozenset()
    assert not agent.has_queued_messages()


async def test_options_are_mutable_attributes_read_at_each_run_start(
    faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    seen: list[tuple[str | None, str | None]] = []

    def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        seen.append((options.reasoning, context.system_prompt))
        return faux_message("ok")

    faux.set_responses([factory, factory])
    agent = make_agent(system_prompt="one")
    await agent.prompt("a")
    agent.state.thinking_level = "high"
    agent.state.system_prompt = "two"
    agent.steering_mode = "all"
    await agent.prompt("b")
    assert seen == [(None, "one"), ("high", "two")]
    assert agent.steering_mode == "all"


async def test_queue_helpers_report_and_clear_what_is_waiting(make_agent: Callable[..., Agent]) -> None:
    agent = make_agent()
    agent.steer("a")
    agent.follow_up(UserMessage("b"))
    assert agent.has_queued_messages()
    assert [_text(m) for m in agent.clear_steering_queue()] == ["a"]
    assert [_text(m) for m in agent.clear_follow_up_queue()] == ["b"]
    agent.steer("c")
    agent.follow_up("d")
    assert [_text(m) for m in agent.clear_all_queues()] == ["c", "d"]
    assert not agent.has_queued_messages()


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(getattr(block, "text", "") for block in content)


async def test_a_listener_that_takes_only_the_event_is_called_with_it() -> None:
    from tau.agent import Agent
    from tau.testing.faux import faux_message, register_faux_provider

    faux = register_faux_provider()
    try:
        faux.set_responses([faux_message("hello")])
        agent = Agent(model=faux.get_model())
        seen: list[str] = []
        agent.subscribe(lambda event: seen.append(event.type))
        await agent.prompt("hi")
        assert seen[0] == "agent_start" and seen[-1] == "agent_end"
    finally:
        faux.unregister()


async def test_live_tools_changed_mid_run_are_offered_from_the_next_model_call(
    make_tool: MakeTool, faux: FauxProvider, make_agent: Callable[..., Agent]
) -> None:
    offered: list[list[str]] = []

    def reply(message: AssistantMessage) -> Any:
        def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
            offered.append([t.name for t in context.tools or []])
            return message

        return factory

    faux.set_responses([reply(faux_message(faux_tool_call("old", {}))), reply(faux_message("done"))])
    agent = make_agent(tools=[make_tool("old")], live_tools=True)

    def swap_tools(event: AgentEvent, signal: AbortSignal) -> None:
        if event.type == "message_start" and event.message.role == "assistant":
            agent.state.tools = [make_tool("new")]

    agent.subscribe(swap_tools)
    await agent.prompt("first")
    assert offered == [["old"], ["new"]]

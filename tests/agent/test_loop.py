"""The stateless loop (spec 20 §3; cases 42-43, 46-47, 59, and the two entry points)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tau.agent import (
    AgentContext,
    AgentLoopConfig,
    AgentTool,
    TurnSummary,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
    text_result,
)
from tau.agent.events import AgentEvent
from tau.ai import AbortController, AbortSignal, AssistantMessage, SimpleStreamOptions, UserMessage
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call


@dataclass
class Note:
    """An app-defined message the model never sees."""

    text: str
    role: str = "note"
    timestamp: int = 0


class Events:
    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    async def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events if e.type != "message_update"]


@pytest.fixture
def sink() -> Iterator[Events]:
    yield Events()


def _config(faux: FauxProvider, **options: Any) -> AgentLoopConfig:
    options.setdefault("stream_options", SimpleStreamOptions(api_key="test-key"))
    return AgentLoopConfig(model=faux.get_model(), **options)


def _echo_tool() -> AgentTool:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> Any:
        return text_result("echoed")

    return AgentTool(name="echo", description="echo", parameters={"type": "object"}, execute=execute)


async def test_run_agent_loop_returns_the_new_messages_and_leaves_the_given_context_alone(
    faux: FauxProvider, sink: Events
) -> None:
    faux.set_responses([faux_message("hi")])
    context = AgentContext("sys", [UserMessage("earlier")], [])
    prompt = UserMessage("now")
    new = await run_agent_loop([prompt], context, _config(faux), sink)
    assert new[0] is prompt and [m.role for m in new] == ["user", "assistant"]
    assert len(context.messages) == 1
    assert sink.types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


async def test_transform_context_shapes_each_call_without_touching_the_history(
    faux: FauxProvider, sink: Events
) -> None:
    seen_by_model: list[list[str]] = []
    calls: list[AbortSignal | None] = []

    def reply(text: str) -> Any:
        def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
            seen_by_model.append([m.role for m in context.messages])
            return faux_message(text) if text else faux_message(faux_tool_call("echo", {}))

        return factory

    async def keep_last(messages: list[Any], signal: AbortSignal | None) -> list[Any]:
        calls.append(signal)
        return messages[-1:]

    faux.set_responses([reply(""), reply(""), reply("done")])
    signal = AbortController().signal
    context = AgentContext("", [], [_echo_tool()])
    new = await run_agent_loop(
        [UserMessage("go")], context, _config(faux, transform_context=keep_last), sink, signal
    )
    assert seen_by_model == [["user"], ["toolResult"], ["toolResult"]]
    assert calls == [signal, signal, signal]
    assert [m.role for m in new] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]


async def test_the_default_converter_hides_app_messages_from_the_model(
    faux: FauxProvider, sink: Events
) -> None:
    roles: list[list[str]] = []

    def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        roles.append([m.role for m in context.messages])
        return faux_message("ok")

    faux.set_responses([factory])
    new = await run_agent_loop([Note("private"), UserMessage("hi")], AgentContext(), _config(faux), sink)
    assert roles == [["user"]]
    assert new[0].role == "note"


async def test_get_api_key_is_asked_before_every_call_and_falls_back_to_the_configured_key(
    faux: FauxProvider, sink: Events
) -> None:
    keys: list[str | None] = []
    answers = iter([None, "fresh-token"])

    def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
        keys.append(options.api_key)
        return faux_message(faux_tool_call("echo", {})) if len(keys) == 1 else faux_message("done")

    asked: list[str] = []

    async def get_api_key(provider: str) -> str | None:
        asked.append(provider)
        return next(answers)

    faux.set_responses([factory, factory])
    config = _config(faux, get_api_key=get_api_key, stream_options=SimpleStreamOptions(api_key="fallback"))
    await run_agent_loop([UserMessage("go")], AgentContext("", [], [_echo_tool()]), config, sink)
    assert asked == ["faux", "faux"]
    assert keys == ["fallback", "fresh-token"]


async def test_an_error_before_start_still_gives_message_start_then_message_end(
    faux: FauxProvider, sink: Events
) -> None:
    faux.set_responses([])  # the faux provider fails without a start event
    new = await run_agent_loop([UserMessage("hi")], AgentContext(), _config(faux), sink)
    assert sink.types[-4:] == ["message_start", "message_end", "turn_end", "agent_end"]
    final = new[-1]
    assert isinstance(final, AssistantMessage) and final.stop_reason == "error"
    assert sink.events[-3].message is final  # type: ignore[union-attr]


async def test_should_stop_after_turn_ends_the_run_without_another_call_or_queue_poll(
    faux: FauxProvider, sink: Events
) -> None:
    polls: list[str] = []
    summaries: list[TurnSummary] = []

    def stop(summary: TurnSummary) -> bool:
        summaries.append(summary)
        return True

    def poll_steering() -> list[Any]:
        polls.append("steering")
        return []

    def poll_follow_ups() -> list[Any]:
        polls.append("follow-up")
        return [UserMessage("never")]

    faux.set_responses([faux_message(faux_tool_call("echo", {})), faux_message("unused")])
    config = _config(
        faux,
        should_stop_after_turn=stop,
        get_steering_messages=poll_steering,
        get_follow_up_messages=poll_follow_ups,
    )
    new = await run_agent_loop([UserMessage("go")], AgentContext("", [], [_echo_tool()]), config, sink)
    assert faux.state.call_count == 1
    assert polls == ["steering"]  # only the initial poll
    assert sink.types[-2:] == ["turn_end", "agent_end"]
    assert [m.role for m in summaries[0].tool_results] == ["toolResult"]
    assert summaries[0].new_messages == new


async def test_continue_mode_refuses_an_empty_or_assistant_ended_context(
    faux: FauxProvider, sink: Events
) -> None:
    with pytest.raises(ValueError):
        agent_loop_continue(AgentContext(), _config(faux))
    ended = AgentContext("", [faux_message("done")], [])
    with pytest.raises(ValueError, match="assistant"):
        await run_agent_loop_continue(ended, _config(faux), sink)
    assert sink.events == []


async def test_continue_mode_starts_with_the_model_and_returns_only_new_messages(
    faux: FauxProvider, sink: Events
) -> None:
    faux.set_responses([faux_message("answer")])
    context = AgentContext("", [UserMessage("question")], [])
    new = await run_agent_loop_continue(context, _config(faux), sink)
    assert sink.types == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert [m.role for m in new] == ["assistant"]


async def test_agent_loop_streams_the_events_and_returns_the_new_messages(faux: FauxProvider) -> None:
    faux.set_responses([faux_message("streamed")])
    stream = agent_loop([UserMessage("hi")], AgentContext(), _config(faux))
    kinds = [event.type async for event in stream]
    assert kinds[0] == "agent_start" and kinds[-1] == "agent_end"
    new = await stream.result()
    assert [m.role for m in new] == ["user", "assistant"]


async def test_agent_loop_surfaces_a_broken_callback_to_the_reader(faux: FauxProvider) -> None:
    def broken(messages: list[Any]) -> list[Any]:
        raise RuntimeError("converter broke")

    stream = agent_loop([UserMessage("hi")], AgentContext(), _config(faux, convert_to_llm=broken))
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="converter broke"):
        async for event in stream:
            seen.append(event.type)
    assert seen == ["agent_start", "turn_start", "message_start", "message_end"]


async def test_prepare_next_turn_runs_between_turns_only_and_can_replace_the_conversation(
    faux: FauxProvider, sink: Events
) -> None:
    """pi 1.6's prepareNextTurn point: before each turn but the first (before its turn_start); a
    returned conversation replaces the run's, and the next call is built from it."""
    seen_by_model: list[list[str]] = []

    def reply(text: str) -> Any:
        def factory(context: Any, options: Any, state: Any, model: Any) -> AssistantMessage:
            seen_by_model.append(
                [getattr(m, "content", "") if m.role == "user" else m.role for m in context.messages]
            )
            return faux_message(text) if text else faux_message(faux_tool_call("echo", {}))

        return factory

    asked: list[int] = []

    async def prepare_next_turn(context: AgentContext) -> list[Any] | None:
        asked.append(len(sink.types))
        if len(asked) == 1:
            return [UserMessage("summary"), *context.messages[-2:]]  # the history folded away
        return None

    faux.set_responses([reply(""), reply(""), reply("done")])
    context = AgentContext("", [UserMessage("earlier")], [_echo_tool()])
    new = await run_agent_loop(
        [UserMessage("go")], context, _config(faux, prepare_next_turn=prepare_next_turn), sink
    )
    assert seen_by_model == [
        ["earlier", "go"],
        ["summary", "assistant", "toolResult"],
        ["summary", "assistant", "toolResult", "assistant", "toolResult"],
    ]
    # Asked twice (after each tool turn), each time right after a turn_end, before the turn_start.
    assert len(asked) == 2
    for at in asked:
        assert sink.types[at - 1] == "turn_end" and sink.types[at] == "turn_start"
    assert [m.role for m in new] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
    ]

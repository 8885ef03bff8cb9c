"""Tool execution (spec 20 §5; cases 5-8, 11-25, 60, and the tool timeout beyond pi)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tau.agent import (
    AfterToolCallResult,
    Agent,
    AgentTool,
    AgentToolResult,
    BeforeToolCallResult,
    text_result,
)
from tau.ai import AbortSignal, ToolResultMessage
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

MakeTool = Callable[..., AgentTool]
Recorder = Any

COUNT_SCHEMA = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}


def _results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.state.messages if isinstance(m, ToolResultMessage)]


def _text(result: ToolResultMessage | AgentToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _script(faux: FauxProvider, *calls: Any) -> None:
    """One assistant reply making ``calls``, then a closing text reply."""
    faux.set_responses([faux_message(list(calls)), faux_message("done")])


async def test_tool_execution_start_carries_the_raw_arguments_even_when_prepare_rewrites_them(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    received: list[dict[str, Any]] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        received.append(args)
        return text_result("ok")

    def fold_legacy(args: dict[str, Any]) -> dict[str, Any]:
        return {"text": args.pop("old")}

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tool = make_tool("say", execute, schema, prepare_arguments=fold_legacy)
    _script(faux, faux_tool_call("say", {"old": "hi"}))
    agent = make_agent(tools=[tool])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert recorder.of("tool_execution_start")[0].args == {"old": "hi"}
    assert received == [{"text": "hi"}]


async def test_an_unknown_tool_becomes_an_error_result_and_the_loop_goes_on(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    called: list[str] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        called.append(call_id)
        return text_result("ok")

    _script(faux, faux_tool_call("missing_tool", {}))
    agent = make_agent(tools=[make_tool("present", execute)])
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.is_error and "missing_tool" in _text(result)
    assert called == []
    assert faux.state.call_count == 2


async def test_missing_required_arguments_give_an_error_listing_the_path_and_the_received_json(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    _script(faux, faux_tool_call("count", {"other": 1}))
    agent = make_agent(tools=[make_tool("count", parameters=COUNT_SCHEMA)])
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.is_error
    text = _text(result)
    assert '"count"' in text.splitlines()[0]
    assert "  - count: " in text
    assert '"other": 1' in text


async def test_numeric_strings_are_coerced_before_execute_and_garbage_is_rejected(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    received: list[Any] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        received.append(args["count"])
        return text_result("ok")

    faux.set_responses(
        [
            faux_message(faux_tool_call("count", {"count": "3"})),
            faux_message(faux_tool_call("count", {"count": "abc"})),
            faux_message("done"),
        ]
    )
    agent = make_agent(tools=[make_tool("count", execute, COUNT_SCHEMA)])
    await agent.prompt("go")
    assert received == [3] and isinstance(received[0], int)
    good, bad = _results(agent)
    assert not good.is_error
    assert bad.is_error and "count: 'abc' is not of type 'integer'" in _text(bad)


async def test_before_tool_call_can_block_a_call_with_a_reason(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    called: list[str] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        called.append(call_id)
        return text_result("ok")

    _script(faux, faux_tool_call("rm", {}))
    agent = make_agent(
        tools=[make_tool("rm", execute)],
        before_tool_call=lambda ctx, signal: BeforeToolCallResult(True, "nope"),
    )
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.is_error and _text(result) == "nope"
    assert called == []


async def test_a_raising_before_hook_blocks_only_its_own_call(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    async def before(ctx: Any, signal: Any) -> None:
        if ctx.tool_call.name == "bad":
            raise PermissionError("policy says no")

    _script(faux, faux_tool_call("bad", {}), faux_tool_call("good", {}))
    agent = make_agent(tools=[make_tool("bad"), make_tool("good")], before_tool_call=before)
    await agent.prompt("go")
    bad, good = _results(agent)
    assert bad.is_error and _text(bad) == "policy says no"
    assert not good.is_error and _text(good) == "good ok"


async def test_before_hook_changes_to_args_reach_execute_without_revalidation(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    received: list[Any] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        received.append(args["count"])
        return text_result("ok")

    def before(ctx: Any, signal: Any) -> None:
        ctx.args["count"] = "not an integer any more"

    _script(faux, faux_tool_call("count", {"count": 1}))
    agent = make_agent(tools=[make_tool("count", execute, COUNT_SCHEMA)], before_tool_call=before)
    await agent.prompt("go")
    assert received == ["not an integer any more"]


async def test_a_raising_tool_gives_an_error_result_with_empty_details(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        raise OSError("disk on fire")

    _script(faux, faux_tool_call("io", {}))
    agent = make_agent(tools=[make_tool("io", execute)])
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.is_error and _text(result) == "disk on fire"
    assert result.details == {}


async def test_after_hook_overrides_only_the_fields_it_returns(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    _script(faux, faux_tool_call("a", {}), faux_tool_call("b", {}))

    def after(ctx: Any, signal: Any) -> AfterToolCallResult:
        if ctx.tool_call.name == "a":
            return AfterToolCallResult(details={"seen": True})
        return AfterToolCallResult(is_error=True)

    agent = make_agent(tools=[make_tool("a"), make_tool("b")], after_tool_call=after)
    agent.subscribe(recorder)
    await agent.prompt("go")
    a, b = _results(agent)
    assert _text(a) == "a ok" and not a.is_error and a.details == {"seen": True}
    assert _text(b) == "b ok" and b.is_error
    ends = {e.tool_name: e for e in recorder.of("tool_execution_end")}
    assert ends["b"].is_error and ends["a"].result.details == {"seen": True}


async def test_a_raising_after_hook_turns_the_result_into_an_error(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    def after(ctx: Any, signal: Any) -> None:
        raise ValueError("audit failed")

    _script(faux, faux_tool_call("a", {}))
    agent = make_agent(tools=[make_tool("a")], after_tool_call=after)
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.is_error and _text(result) == "audit failed"


async def test_each_on_update_call_emits_an_update_before_the_end(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        for step in range(3):
            on_update(text_result(f"step {step}"))
        return text_result("finished")

    _script(faux, faux_tool_call("work", {"n": 1}))
    agent = make_agent(tools=[make_tool("work", execute)])
    agent.subscribe(recorder)
    await agent.prompt("go")
    tool_events = [e for e in recorder.events if e.type.startswith("tool_execution")]
    assert [e.type for e in tool_events] == ["tool_execution_start"] + ["tool_execution_update"] * 3 + [
        "tool_execution_end"
    ]
    assert [_text(e.partial_result) for e in tool_events[1:4]] == ["step 0", "step 1", "step 2"]
    assert tool_events[1].args == {"n": 1}


async def test_parallel_ends_come_in_completion_order_and_results_in_call_order(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    b_done = asyncio.Event()

    async def slow_a(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        await b_done.wait()
        return text_result("A")

    async def fast_b(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        b_done.set()
        return text_result("B")

    _script(faux, faux_tool_call("a", {}), faux_tool_call("b", {}))
    agent = make_agent(tools=[make_tool("a", slow_a), make_tool("b", fast_b)])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert [e.tool_name for e in recorder.of("tool_execution_end")] == ["b", "a"]
    assert [_text(m) for m in _results(agent)] == ["A", "B"]
    assert [m.tool_name for m in recorder.of("turn_end")[0].tool_results] == ["a", "b"]


async def test_parallel_starts_all_precede_any_update(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    async def chatty(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        on_update(text_result("working"))
        await asyncio.sleep(0)
        return text_result("ok")

    _script(faux, *(faux_tool_call("chatty", {}) for _ in range(3)))
    agent = make_agent(tools=[make_tool("chatty", chatty)])
    agent.subscribe(recorder)
    await agent.prompt("go")
    kinds = [e.type for e in recorder.events if e.type.startswith("tool_execution")]
    assert kinds[:3] == ["tool_execution_start"] * 3
    assert kinds.count("tool_execution_update") == 3


async def test_a_parallel_preflight_failure_ends_before_any_tool_runs(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    log: list[str] = []

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        log.append("execute")
        return text_result("ok")

    def note(event: Any, signal: AbortSignal) -> None:
        if event.type.startswith("tool_execution"):
            log.append(f"{event.type}:{event.tool_name}")

    _script(faux, faux_tool_call("ok", {}), faux_tool_call("nope", {}), faux_tool_call("ok", {}))
    agent = make_agent(tools=[make_tool("ok", execute)])
    agent.subscribe(note)
    await agent.prompt("go")
    assert log[:4] == [
        "tool_execution_start:ok",
        "tool_execution_start:nope",
        "tool_execution_end:nope",
        "tool_execution_start:ok",
    ]
    assert log.index("execute") == 4
    assert log.count("execute") == 2
    assert [m.is_error for m in _results(agent)] == [False, True, False]


async def test_sequential_mode_runs_each_call_to_its_result_before_the_next(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    spans: list[tuple[float, float]] = []

    async def timed(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        began = time.perf_counter()
        await asyncio.sleep(0.005)
        spans.append((began, time.perf_counter()))
        return text_result("ok")

    _script(faux, faux_tool_call("t", {}), faux_tool_call("t", {}))
    agent = make_agent(tools=[make_tool("t", timed)], tool_execution="sequential")
    agent.subscribe(recorder)
    await agent.prompt("go")
    first_ended, second_began = spans[0][1], spans[1][0]
    assert first_ended <= second_began
    tool_part = [
        (e.type, getattr(e, "message", None) and e.message.role)
        for e in recorder.events
        if e.type.startswith("tool_execution")
        or (e.type.startswith("message_") and e.message.role == "toolResult")
    ]
    one_call = [
        ("tool_execution_start", None),
        ("tool_execution_end", None),
        ("message_start", "toolResult"),
        ("message_end", "toolResult"),
    ]
    assert tool_part == one_call * 2


async def test_one_sequential_tool_makes_the_whole_batch_sequential(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    _script(faux, faux_tool_call("plain", {}), faux_tool_call("careful", {}))
    tools = [make_tool("plain"), make_tool("careful", execution_mode="sequential")]
    agent = make_agent(tools=tools)
    agent.subscribe(recorder)
    await agent.prompt("go")
    kinds = [e.type for e in recorder.events if e.type.startswith("tool_execution")]
    assert kinds == ["tool_execution_start", "tool_execution_end"] * 2


def _terminating(name: str, make_tool: MakeTool, terminate: bool = True) -> AgentTool:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=text_result(name).content, terminate=terminate)

    return make_tool(name, execute)


async def test_terminate_on_every_result_skips_the_follow_up_model_call(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool, recorder: Recorder
) -> None:
    _script(faux, faux_tool_call("stop1", {}), faux_tool_call("stop2", {}))
    agent = make_agent(tools=[_terminating("stop1", make_tool), _terminating("stop2", make_tool)])
    agent.subscribe(recorder)
    await agent.prompt("go")
    assert faux.state.call_count == 1
    assert recorder.types[-2:] == ["turn_end", "agent_end"]
    assert recorder.types.count("turn_end") == 1


async def test_terminate_on_only_some_results_continues(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    _script(faux, faux_tool_call("stop", {}), faux_tool_call("go_on", {}))
    agent = make_agent(tools=[_terminating("stop", make_tool), _terminating("go_on", make_tool, False)])
    await agent.prompt("go")
    assert faux.state.call_count == 2


async def test_terminate_still_lets_queued_steering_open_a_turn(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    agent: Agent

    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        agent.steer("one more thing")
        return AgentToolResult(content=text_result("stopping").content, terminate=True)

    _script(faux, faux_tool_call("stop", {}))
    agent = make_agent(tools=[make_tool("stop", execute)])
    await agent.prompt("go")
    assert faux.state.call_count == 2
    assert [m.role for m in agent.state.messages] == ["user", "assistant", "toolResult", "user", "assistant"]


async def test_tool_results_carry_the_call_identity_and_plain_success_is_not_an_error(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        return text_result("error: the file has an error in it", details={"lines": 3})

    call = faux_tool_call("lint", {}, id="call_42")
    _script(faux, call)
    agent = make_agent(tools=[make_tool("lint", execute)])
    before = time.time_ns() // 1_000_000
    await agent.prompt("go")
    (result,) = _results(agent)
    assert result.tool_call_id == "call_42" and result.tool_name == "lint"
    assert result.timestamp >= before
    assert result.is_error is False
    assert result.details == {"lines": 3}


async def test_a_tool_that_outlives_its_timeout_becomes_an_error_result(
    faux: FauxProvider, make_agent: Callable[..., Agent], make_tool: MakeTool
) -> None:
    async def hang(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        await asyncio.sleep(10)
        return text_result("never")

    async def own_timeout(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> AgentToolResult:
        raise TimeoutError("upstream timed out")

    _script(faux, faux_tool_call("hang", {}), faux_tool_call("own", {}))
    agent = make_agent(tools=[make_tool("hang", hang), make_tool("own", own_timeout)], tool_timeout_s=0.02)
    await agent.prompt("go")
    hung, own = _results(agent)
    assert hung.is_error and _text(hung) == "Tool hang timed out after 0.02 s"
    assert own.is_error and _text(own) == "upstream timed out"
    assert faux.state.call_count == 2

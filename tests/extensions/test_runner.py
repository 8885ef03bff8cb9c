"""The runner: how each hook point calls the extensions and combines what they return."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.agent.context import AgentContext
from tau.agent.events import AgentEnd, AgentStart, MessageEnd, TurnEnd, TurnStart
from tau.agent.hooks import AfterToolCallContext, BeforeToolCallContext
from tau.agent.tool import AgentToolResult, text_result
from tau.ai.abort import AbortController
from tau.ai.options import ResponseInfo
from tau.ai.types import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.compaction import CompactionPreparation, CompactionSettings, FileOperations
from tau.extensions import (
    CompactionOverride,
    ExtensionRunner,
    ExtensionSource,
    SessionBeforeSwitchEvent,
    SessionStartEvent,
    StaleContextError,
    ToolCallEvent,
    load_extensions,
)
from tau.extensions.testing import RecordingHost

Setup = Callable[[Any], Any]


@pytest.fixture
async def make_runner(project: Path, runners: list[ExtensionRunner]) -> Callable[..., Any]:
    async def make(*setups: Setup) -> ExtensionRunner:
        sources = [ExtensionSource.inline(f"ext{i}", setup) for i, setup in enumerate(setups, 1)]
        runner = await load_extensions(sources, cwd=str(project))
        runners.append(runner)
        runner.bind(RecordingHost(str(project)))
        return runner

    return make


def assistant(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), api="faux", provider="faux", model="m")


def tool_output(call_id: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(call_id, "bash", [TextContent(text)])


# -- context -----------------------------------------------------------------------------------


async def test_context_handlers_chain_on_a_deep_copy(make_runner) -> None:
    def drop_first(tau: Any) -> None:
        @tau.on("context")
        def handler(event: Any, ctx: Any) -> Any:
            return {"messages": event.messages[1:]}

    def rewrite_in_place(tau: Any) -> None:
        @tau.on("context")
        async def handler(event: Any, ctx: Any) -> None:
            assert len(event.messages) == 1  # sees the previous handler's result
            event.messages[0].content = "changed"

    runner = await make_runner(drop_first, rewrite_in_place)
    state = [UserMessage("first"), UserMessage("second")]

    sent = await runner.emit_context(state, None)

    assert [m.content for m in sent] == ["changed"]
    assert [m.content for m in state] == ["first", "second"]


async def test_context_without_handlers_returns_the_same_list(make_runner) -> None:
    runner = await make_runner(lambda tau: None)
    messages: list[Any] = [UserMessage("x")]
    assert await runner.emit_context(messages) is messages


async def test_a_raising_context_handler_is_reported_and_the_previous_messages_are_used(make_runner) -> None:
    def trims(tau: Any) -> None:
        tau.on("context", lambda event, ctx: {"messages": event.messages[-1:]})

    def fails(tau: Any) -> None:
        def handler(event: Any, ctx: Any) -> Any:
            raise ValueError("cannot count tokens")

        tau.on("context", handler)

    runner = await make_runner(trims, fails)
    sent = await runner.emit_context([UserMessage("a"), UserMessage("b")])
    assert [m.content for m in sent] == ["b"]
    (report,) = runner.errors
    assert (report.extension, report.event) == ("ext2", "context")
    assert report.error == "ValueError: cannot count tokens"
    assert report.path == __file__ and report.line is not None


# -- before_provider_request and after_provider_response ---------------------------------------


async def test_before_provider_request_chains_and_replaces_the_payload(make_runner) -> None:
    seen: list[Any] = []

    def set_temperature(tau: Any) -> None:
        tau.on("before_provider_request", lambda event, ctx: {**event.payload, "temperature": 0})

    def observe(tau: Any) -> None:
        def handler(event: Any, ctx: Any) -> None:
            seen.append((dict(event.payload), event.model))

        tau.on("before_provider_request", handler)

    runner = await make_runner(set_temperature, observe)
    original = {"model": "m", "messages": []}
    result = await runner.emit_before_provider_request(original, None)
    assert result == {"model": "m", "messages": [], "temperature": 0}
    assert seen == [(result, None)]
    assert original == {"model": "m", "messages": []}


async def test_a_malformed_payload_is_reported_at_the_handler_and_ignored(make_runner) -> None:
    def wrong(tau: Any) -> None:
        def handler(event: Any, ctx: Any) -> Any:
            return "temperature=0"

        tau.on("before_provider_request", handler)

    runner = await make_runner(wrong)
    payload = {"a": 1}
    assert await runner.emit_before_provider_request(payload) is payload
    (report,) = runner.errors
    assert "expected None or the new payload dict" in report.error
    assert report.path == __file__


async def test_after_provider_response_sees_status_and_headers(make_runner) -> None:
    seen: list[Any] = []
    runner = await make_runner(
        lambda tau: tau.on("after_provider_response", lambda e, ctx: seen.append((e.status, e.headers)))
    )
    await runner.emit_after_provider_response(ResponseInfo(429, {"retry-after": "2"}), None)
    assert seen == [(429, {"retry-after": "2"})]


# -- the prompt flow ---------------------------------------------------------------------------


async def test_before_agent_start_chains_the_system_prompt_and_collects_messages(make_runner) -> None:
    seen: list[tuple[str, str]] = []

    def first(tau: Any) -> None:
        @tau.on("before_agent_start")
        def handler(event: Any, ctx: Any) -> Any:
            return {
                "systemPrompt": event.system_prompt + "\nBe brief.",
                "message": {"customType": "note", "content": "one", "display": False},
            }

    def second(tau: Any) -> None:
        @tau.on("before_agent_start")
        def handler(event: Any, ctx: Any) -> Any:
            seen.append((event.system_prompt, ctx.get_system_prompt()))
            return {"message": {"custom_type": "note", "content": [{"type": "text", "text": "two"}]}}

    runner = await make_runner(first, second)
    outcome = await runner.emit_before_agent_start("fix it", None, "BASE", None)

    assert outcome.system_prompt == "BASE\nBe brief."
    assert seen == [("BASE\nBe brief.", "BASE\nBe brief.")]
    assert [(m.custom_type, m.display) for m in outcome.messages] == [("note", False), ("note", True)]
    assert outcome.messages[1].content == [TextContent("two")]


async def test_before_agent_start_without_a_prompt_result_keeps_the_base(make_runner) -> None:
    runner = await make_runner(lambda tau: tau.on("before_agent_start", lambda e, ctx: None))
    outcome = await runner.emit_before_agent_start("hi", None, "BASE")
    assert outcome.system_prompt is None and outcome.messages == []


async def test_input_transforms_chain_and_handled_stops_everything(make_runner) -> None:
    calls: list[str] = []

    def shout(tau: Any) -> None:
        tau.on("input", lambda e, ctx: {"action": "transform", "text": e.text.upper()})

    def exclaim(tau: Any) -> None:
        def handler(e: Any, ctx: Any) -> Any:
            calls.append(e.text)
            if e.text == "STOP":
                return {"action": "handled"}
            return {"action": "transform", "text": e.text + "!"}

        tau.on("input", handler)

    def never(tau: Any) -> None:
        tau.on("input", lambda e, ctx: calls.append("never"))

    runner = await make_runner(shout, exclaim)
    outcome = await runner.emit_input("go", None, "interactive")
    assert (outcome.action, outcome.text) == ("transform", "GO!")

    runner = await make_runner(shout, exclaim, never)
    outcome = await runner.emit_input("stop", None, "rpc")
    assert outcome.action == "handled"
    assert calls == ["GO", "STOP"]


async def test_input_continue_keeps_text_and_images(make_runner) -> None:
    image = ImageContent("aGk=", "image/png")
    runner = await make_runner(lambda tau: tau.on("input", lambda e, ctx: {"action": "continue"}))
    outcome = await runner.emit_input("look", [image], "extension")
    assert (outcome.action, outcome.text, outcome.images) == ("continue", "look", [image])


# -- tools -------------------------------------------------------------------------------------


async def test_tool_call_handlers_may_change_the_input_in_place(make_runner) -> None:
    def rewrite(tau: Any) -> None:
        @tau.on("tool_call")
        def handler(event: ToolCallEvent, ctx: Any) -> None:
            event.input["command"] = event.input["command"].replace("rm", "echo rm")

    runner = await make_runner(rewrite)
    args = {"command": "rm x"}
    assert await runner.emit_tool_call("bash", "c1", args) is None
    assert args == {"command": "echo rm x"}


async def test_the_first_block_wins_and_later_handlers_do_not_run(make_runner) -> None:
    later: list[str] = []

    def block(tau: Any) -> None:
        tau.on("tool_call", lambda e, ctx: {"block": True, "reason": "read-only session"})

    def record(tau: Any) -> None:
        tau.on("tool_call", lambda e, ctx: later.append(e.tool_name))

    runner = await make_runner(block, record)
    decision = await runner.emit_tool_call("write", "c1", {"path": "a"})
    assert decision is not None and (decision.block, decision.reason) == (True, "read-only session")
    assert later == []


async def test_a_raising_tool_call_handler_blocks_the_call(make_runner) -> None:
    later: list[str] = []

    def fails(tau: Any) -> None:
        def handler(e: Any, ctx: Any) -> Any:
            raise PermissionError("policy server unreachable")

        tau.on("tool_call", handler)

    runner = await make_runner(fails, lambda tau: tau.on("tool_call", lambda e, ctx: later.append("x")))
    decision = await runner.emit_tool_call("bash", "c1", {"command": "ls"})
    assert decision is not None and decision.block
    assert "policy server unreachable" in (decision.reason or "")
    assert later == [] and runner.errors[0].event == "tool_call"


async def test_tool_result_handlers_chain_on_a_working_copy(make_runner) -> None:
    def add_details(tau: Any) -> None:
        tau.on("tool_result", lambda e, ctx: {"details": {"checked": True}})

    def mark_error(tau: Any) -> None:
        def handler(e: Any, ctx: Any) -> Any:
            assert e.details == {"checked": True}
            return {"isError": True, "content": "denied: " + e.content[0].text}

        tau.on("tool_result", handler)

    def fails(tau: Any) -> None:
        def handler(e: Any, ctx: Any) -> Any:
            raise RuntimeError("late failure")

        tau.on("tool_result", handler)

    runner = await make_runner(add_details, mark_error, fails)
    patch = await runner.emit_tool_result("bash", "c1", {}, text_result("out"), False)
    assert patch is not None
    assert (patch.details, patch.is_error, patch.content) == (
        {"checked": True},
        True,
        [TextContent("denied: out")],
    )
    assert [r.event for r in runner.errors] == ["tool_result"]


async def test_tool_result_without_changes_is_none(make_runner) -> None:
    runner = await make_runner(lambda tau: tau.on("tool_result", lambda e, ctx: None))
    assert await runner.emit_tool_result("bash", "c1", {}, text_result("out"), False) is None


async def test_agent_hook_adapters(make_runner) -> None:
    def gate(tau: Any) -> None:
        tau.on("tool_call", lambda e, ctx: {"block": e.input.get("path") == "/etc/passwd"})
        tau.on("tool_result", lambda e, ctx: {"details": "seen"})

    runner = await make_runner(gate)
    message = assistant(ToolCall("c1", "read", {"path": "/etc/passwd"}))
    context = AgentContext(system_prompt="", messages=[], tools=[])
    before = await runner.before_tool_call(
        BeforeToolCallContext(message, message.content[0], {"path": "/etc/passwd"}, context), None
    )
    assert before is not None and before.block and "ext1" in (before.reason or "")
    after = await runner.after_tool_call(
        AfterToolCallContext(
            message, message.content[0], {}, AgentToolResult([TextContent("x")]), False, context
        ),
        None,
    )
    assert after is not None and after.details == "seen"


# -- message_end -------------------------------------------------------------------------------


async def test_message_end_replacement_is_copied_into_the_original(make_runner) -> None:
    def annotate(tau: Any) -> None:
        @tau.on("message_end")
        def handler(event: Any, ctx: Any) -> Any:
            if event.message.role == "assistant":
                replacement = assistant(TextContent("rewritten"))
                replacement.response_id = "annotated"
                return {"message": replacement}
            return None

    def wrong_role(tau: Any) -> None:
        tau.on("message_end", lambda e, ctx: {"message": UserMessage("not an assistant")})

    runner = await make_runner(annotate, wrong_role)
    original = assistant(TextContent("draft"))
    await runner.emit_agent_event(MessageEnd(original))
    assert original.content == [TextContent("rewritten")] and original.response_id == "annotated"
    (report,) = runner.errors
    assert "role 'user'" in report.error and report.extension == "ext2"


# -- session lifecycle -------------------------------------------------------------------------


def preparation() -> CompactionPreparation:
    return CompactionPreparation(
        first_kept_entry_id="e5",
        messages_to_summarize=[UserMessage("old")],
        turn_prefix_messages=[],
        is_split_turn=False,
        tokens_before=12345,
        previous_summary=None,
        file_ops=FileOperations(),
        settings=CompactionSettings(),
    )


async def test_session_before_compact_can_supply_a_summary(make_runner) -> None:
    def summarise(tau: Any) -> None:
        @tau.on("session_before_compact")
        def handler(event: Any, ctx: Any) -> Any:
            prep = event.preparation
            return {
                "compaction": {
                    "summary": f"{len(prep.messages_to_summarize)} messages",
                    "firstKeptEntryId": prep.first_kept_entry_id,
                    "tokensBefore": prep.tokens_before,
                    "details": {"by": "ext"},
                }
            }

    runner = await make_runner(summarise)
    result = await runner.emit_session_before_compact(preparation(), [], None, AbortController().signal)
    assert result is not None and not result.cancel
    assert result.compaction == CompactionOverride("1 messages", "e5", 12345, {"by": "ext"})
    assert result.compaction.details_json() == {"by": "ext"}


def _summary_from(text: str) -> Callable[[Any], None]:
    def setup(tau: Any) -> None:
        @tau.on("session_before_compact")
        def handler(event: Any, ctx: Any) -> Any:
            prep = event.preparation
            return {
                "compaction": {
                    "summary": text,
                    "firstKeptEntryId": prep.first_kept_entry_id,
                    "tokensBefore": prep.tokens_before,
                }
            }

    return setup


def _raising(tau: Any) -> None:
    @tau.on("session_before_compact")
    def handler(event: Any, ctx: Any) -> Any:
        raise RuntimeError("summariser extension broke")


async def test_compaction_handlers_run_in_order_and_the_last_result_wins(make_runner) -> None:
    # spec 50 case 40
    runner = await make_runner(_summary_from("first"), _raising, _summary_from("last"))
    errors: list[Any] = []
    runner.on_error(errors.append)
    result = await runner.emit_session_before_compact(preparation(), [], None, AbortController().signal)
    assert result is not None and result.compaction is not None
    assert result.compaction.summary == "last"
    assert [e.error for e in errors] == ["RuntimeError: summariser extension broke"]


async def test_a_throwing_compaction_handler_leaves_the_default_compaction(make_runner) -> None:
    runner = await make_runner(_raising)
    runner.on_error(lambda report: None)
    result = await runner.emit_session_before_compact(preparation(), [], None, AbortController().signal)
    assert result is None or (result.compaction is None and not result.cancel)


async def test_session_before_cancel_short_circuits(make_runner) -> None:
    later: list[str] = []
    runner = await make_runner(
        lambda tau: tau.on("session_before_compact", lambda e, ctx: {"compaction": None}),
        lambda tau: tau.on("session_before_compact", lambda e, ctx: {"cancel": True}),
        lambda tau: tau.on("session_before_compact", lambda e, ctx: later.append("ran")),
    )
    result = await runner.emit_session_before_compact(preparation(), [])
    assert result is not None and result.cancel and later == []

    runner = await make_runner(lambda tau: tau.on("session_before_switch", lambda e, ctx: {"cancel": True}))
    switch = await runner.emit_session_before_switch("new")
    assert switch is not None and switch.cancel
    assert (await runner.emit(SessionBeforeSwitchEvent("resume", "/x.jsonl"))).cancel


async def test_session_before_fork_and_tree_results(make_runner) -> None:
    from tau.extensions import TreePreparation

    runner = await make_runner(
        lambda tau: tau.on("session_before_fork", lambda e, ctx: {"skipConversationRestore": True}),
        lambda tau: tau.on("session_before_tree", lambda e, ctx: {"summary": "went elsewhere", "label": "x"}),
    )
    fork = await runner.emit_session_before_fork("e1", "before")
    assert fork is not None and fork.skip_conversation_restore and not fork.cancel
    tree = await runner.emit_session_before_tree(TreePreparation("e2", "e9", "e1", [], True))
    assert tree is not None and tree.summary is not None and tree.summary.summary == "went elsewhere"
    assert tree.label == "x"


async def test_user_bash_first_result_wins(make_runner) -> None:
    runner = await make_runner(
        lambda tau: tau.on("user_bash", lambda e, ctx: None),
        lambda tau: tau.on("user_bash", lambda e, ctx: {"result": {"output": "remote", "exitCode": 0}}),
        lambda tau: tau.on("user_bash", lambda e, ctx: {"result": "never"}),
    )
    result = await runner.emit_user_bash("ls", False, "/tmp")
    assert result is not None and result.result == {"output": "remote", "exitCode": 0}


async def test_resources_discover_collects_every_handlers_paths(make_runner, project: Path) -> None:
    runner = await make_runner(
        lambda tau: tau.on("resources_discover", lambda e, ctx: {"skillPaths": ["/abs/skills"]}),
        lambda tau: tau.on(
            "resources_discover", lambda e, ctx: {"promptPaths": ["prompts"], "skillPaths": ["s2"]}
        ),
    )
    found = await runner.emit_resources_discover(str(project), "startup")
    here = str(Path(__file__).parent)
    assert found.skill_paths == ["/abs/skills", f"{here}/s2"]
    assert found.prompt_paths == [f"{here}/prompts"]


async def test_emit_refuses_events_whose_results_combine(make_runner) -> None:
    runner = await make_runner(lambda tau: None)
    with pytest.raises(TypeError, match="emit_tool_call"):
        await runner.emit(ToolCallEvent("bash", "c1", {}))


# -- isolation, order, contexts ----------------------------------------------------------------


async def test_one_extension_failing_does_not_stop_another(make_runner) -> None:
    seen: list[str] = []

    def fails(tau: Any) -> None:
        async def handler(e: Any, ctx: Any) -> None:
            raise KeyError("boom")

        tau.on("session_start", handler)

    runner = await make_runner(
        fails, lambda tau: tau.on("session_start", lambda e, ctx: seen.append(e.reason))
    )
    await runner.emit(SessionStartEvent("startup"))
    assert seen == ["startup"]
    assert runner.errors[0].extension == "ext1" and "KeyError" in runner.errors[0].error


async def test_error_listeners_receive_reports(make_runner) -> None:
    received: list[str] = []

    def fails(tau: Any) -> None:
        def handler(e: Any, ctx: Any) -> None:
            raise RuntimeError("x")

        tau.on("agent_start", handler)

    runner = await make_runner(fails)
    unsubscribe = runner.on_error(lambda report: received.append(report.event))
    await runner.emit_agent_event(AgentStart())
    unsubscribe()
    await runner.emit_agent_event(AgentStart())
    assert received == ["agent_start"]


async def test_agent_events_number_turns_and_keep_their_order(make_runner) -> None:
    order: list[str] = []

    def record(tau: Any) -> None:
        for name in ("agent_start", "turn_start", "turn_end", "agent_end"):
            tau.on(name, lambda e, ctx: order.append(f"{e.type}:{getattr(e, 'turn_index', '')}"))

    runner = await make_runner(record)
    reply = assistant(TextContent("ok"))
    for event in (
        AgentStart(),
        TurnStart(),
        TurnEnd(reply, []),
        TurnStart(),
        TurnEnd(reply, []),
        AgentEnd([]),
    ):
        await runner.emit_agent_event(event)
    await runner.emit_agent_event(AgentStart())
    await runner.emit_agent_event(TurnStart())
    assert order == [
        "agent_start:",
        "turn_start:0",
        "turn_end:0",
        "turn_start:1",
        "turn_end:1",
        "agent_end:",
        "agent_start:",
        "turn_start:0",
    ]


async def test_ctx_signal_is_set_during_tool_call_and_none_at_session_start(make_runner) -> None:
    signals: list[Any] = []

    def record(tau: Any) -> None:
        tau.on("session_start", lambda e, ctx: signals.append(ctx.signal))
        tau.on("tool_call", lambda e, ctx: signals.append(ctx.signal))

    runner = await make_runner(record)
    controller = AbortController()
    await runner.emit(SessionStartEvent("startup"))
    await runner.emit_tool_call("bash", "c1", {}, controller.signal)
    assert signals == [None, controller.signal]


async def test_contexts_and_tau_go_stale_after_dispose(make_runner) -> None:
    kept: dict[str, Any] = {}

    def keep(tau: Any) -> None:
        kept["tau"] = tau
        tau.on("session_start", lambda e, ctx: kept.setdefault("ctx", ctx))

    runner = await make_runner(keep)
    await runner.emit(SessionStartEvent("startup"))
    assert kept["ctx"].cwd == runner.cwd
    runner.dispose()
    with pytest.raises(StaleContextError):
        _ = kept["ctx"].cwd
    with pytest.raises(StaleContextError):
        kept["tau"].append_entry("x")
    with pytest.raises(StaleContextError):
        kept["tau"].on("agent_start", lambda e, ctx: None)


async def test_handler_exceptions_name_the_extension_file_and_line(write_extension, load) -> None:
    path = write_extension(
        "faulty.py",
        """
        def setup(tau):
            @tau.on("session_start")
            def handler(event, ctx):
                data = {}
                return data["missing"]
        """,
    )
    runner = await load(path)
    await runner.emit(SessionStartEvent("startup"))
    (report,) = runner.errors
    assert (report.extension, report.path, report.line) == ("faulty", str(path), 5)
    assert str(report) == f"{path}:5: extension 'faulty' failed in session_start: KeyError: 'missing'"
    assert "Traceback" in report.stack


async def test_malformed_results_are_located_at_the_handler_definition(write_extension, load) -> None:
    path = write_extension(
        "typo.py",
        """
        def setup(tau):
            tau.on("tool_call", gate)


        def gate(event, ctx):
            return {"blok": True}
        """,
    )
    runner = await load(path)
    assert await runner.emit_tool_call("bash", "c1", {}) is None
    (report,) = runner.errors
    assert report.line == 5 and report.path == str(path)
    assert "unknown key 'blok'" in report.error


async def test_agent_events_reach_handlers_with_pi_field_names(make_runner) -> None:
    from tau.agent.events import MessageStart, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate

    seen: list[tuple[str, Any]] = []

    def record(tau: Any) -> None:
        tau.on("message_start", lambda e, ctx: seen.append((e.type, e.message.role)))
        tau.on(
            "tool_execution_start",
            lambda e, ctx: seen.append((e.type, (e.tool_call_id, e.tool_name, e.args))),
        )
        tau.on(
            "tool_execution_update", lambda e, ctx: seen.append((e.type, e.partial_result.content[0].text))
        )
        tau.on("tool_execution_end", lambda e, ctx: seen.append((e.type, e.is_error)))

    runner = await make_runner(record)
    partial = text_result("half")
    for event in (
        MessageStart(UserMessage("hi")),
        ToolExecutionStart("c1", "bash", {"command": "ls"}),
        ToolExecutionUpdate("c1", "bash", {"command": "ls"}, partial),
        ToolExecutionEnd("c1", "bash", partial, True),
    ):
        await runner.emit_agent_event(event)
    assert seen == [
        ("message_start", "user"),
        ("tool_execution_start", ("c1", "bash", {"command": "ls"})),
        ("tool_execution_update", "half"),
        ("tool_execution_end", True),
    ]

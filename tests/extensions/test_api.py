"""The ``tau`` object: registering handlers, tools, commands, shortcuts and flags, and session actions."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.extensions import (
    ExtensionNotReadyError,
    ExtensionRunner,
    ExtensionSource,
    SessionStartEvent,
    ToolDefinition,
    load_extensions,
)
from tau.extensions.testing import RecordingHost, ScriptedUI
from tau.session.entries import CustomEntry
from tau.session.messages import CustomMessage


async def loaded(project: Path, runners: list[ExtensionRunner], *setups: Any) -> ExtensionRunner:
    sources = [ExtensionSource.inline(f"ext{i}", s) for i, s in enumerate(setups, 1)]
    runner = await load_extensions(sources, cwd=str(project))
    runners.append(runner)
    return runner


def recording(runner: ExtensionRunner) -> RecordingHost:
    host = runner.binding.host
    assert isinstance(host, RecordingHost)
    return host


def echo_tool(name: str = "echo") -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description="Echo the text back",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        execute=lambda call_id, params, signal, on_update, ctx: params["text"],
    )


# -- handlers ----------------------------------------------------------------------------------


async def test_on_works_as_call_and_as_decorator_with_sync_and_async_handlers(project, runners) -> None:
    seen: list[str] = []

    def setup(tau: Any) -> None:
        def plain(event: Any, ctx: Any) -> None:
            seen.append("plain")

        returned = tau.on("session_start", plain)
        assert returned is plain

        @tau.on("session_start")
        async def decorated(event: Any, ctx: Any) -> None:
            await asyncio.sleep(0)
            seen.append("decorated")

        assert callable(decorated)

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert seen == ["plain", "decorated"]


async def test_an_unknown_event_name_is_a_warning_with_the_line(write_extension, load) -> None:
    path = write_extension(
        "typo.py",
        """
        def setup(tau):
            tau.on("tool_calls", lambda e, ctx: None)
        """,
    )
    runner = await load(path)
    (diagnostic,) = runner.diagnostics
    assert (diagnostic.type, diagnostic.line, diagnostic.path) == ("warning", 2, str(path))
    assert "unknown event 'tool_calls'" in diagnostic.message
    assert not runner.has_handlers("tool_calls")


# -- tools -------------------------------------------------------------------------------------


async def test_a_duplicate_tool_name_is_skipped_with_a_diagnostic_naming_file_and_line(
    write_extension, load
) -> None:
    first = write_extension(
        "first.py",
        """
        from tau.extensions import ToolDefinition

        def setup(tau):
            tau.register_tool(ToolDefinition(name="deploy", description="one", parameters={"type": "object"},
                                             execute=lambda *args: "first"))
        """,
    )
    second = write_extension(
        "second.py",
        """
        from tau.extensions import ToolDefinition

        def setup(tau):
            tau.register_command("still-loaded", lambda a, c: None)
            tau.register_tool(ToolDefinition(name="deploy", description="two", parameters={"type": "object"},
                                             execute=lambda *args: "second"))
        """,
    )
    runner = await load(first, second)
    assert [t.description for t in runner.tools] == ["one"]
    assert [e.name for e in runner.extensions] == ["first", "second"]
    (diagnostic,) = runner.diagnostics
    assert (diagnostic.extension, diagnostic.path, diagnostic.line) == ("second", str(second), 5)
    assert "already registered by extension 'first'" in diagnostic.message


async def test_registering_a_tool_during_the_session_refreshes_the_host(project, runners) -> None:
    def setup(tau: Any) -> None:
        tau.on("session_start", lambda e, ctx: tau.register_tool(echo_tool("late")))

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert [t.name for t in runner.tools] == ["late"]
    assert recording(runner).actions == ["refresh_tools"]


async def test_a_bad_tool_definition_fails_setup(project, runners) -> None:
    runner = await loaded(project, runners, lambda tau: tau.register_tool(echo_tool("has space")))
    assert runner.extensions == []
    assert "must be 1-64 letters" in runner.diagnostics[0].message


# -- commands and shortcuts --------------------------------------------------------------------


async def test_commands_run_with_their_arguments_and_duplicates_get_numbered(project, runners) -> None:
    calls: list[tuple[str, str]] = []

    def one(tau: Any) -> None:
        @tau.register_command("review", description="first review")
        async def review(args: str, ctx: Any) -> None:
            calls.append(("one", args))

    def two(tau: Any) -> None:
        tau.register_command("review", lambda args, ctx: calls.append(("two", args)))
        tau.register_command("/solo", lambda args, ctx: calls.append(("solo", args)))

    runner = await loaded(project, runners, one, two)
    runner.bind(RecordingHost(str(project)))
    assert list(runner.commands) == ["review:1", "review:2", "solo"]
    assert await runner.run_command("/review:2 a b")
    assert await runner.run_command("/solo")
    assert not await runner.run_command("/review x")
    assert not runner.is_command("review:1")
    assert calls == [("two", "a b"), ("solo", "")]


async def test_a_failing_command_is_reported_not_raised(project, runners) -> None:
    def setup(tau: Any) -> None:
        def broken(args: str, ctx: Any) -> None:
            raise RuntimeError("bad args")

        tau.register_command("broken", broken)

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    assert await runner.run_command("/broken now")
    assert [(r.event, r.error) for r in runner.errors] == [("command", "RuntimeError: bad args")]


async def test_command_context_can_wait_and_replace_the_session(project, runners) -> None:
    def setup(tau: Any) -> None:
        @tau.register_command("fresh")
        async def fresh(args: str, ctx: Any) -> None:
            await ctx.wait_for_idle()
            await ctx.new_session()

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.run_command("/fresh")
    assert recording(runner).actions == ["wait_for_idle", "new_session"]


async def test_reserved_shortcuts_are_refused_and_free_keys_work(project, runners) -> None:
    pressed: list[str] = []

    def setup(tau: Any) -> None:
        tau.register_shortcut("Ctrl+C", lambda ctx: pressed.append("stolen"))
        tau.register_shortcut("Shift+Ctrl+X", lambda ctx: pressed.append("x"))

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    assert list(runner.shortcuts) == ["ctrl+shift+x"]
    assert "reserved" in runner.diagnostics[0].message
    assert await runner.run_shortcut("ctrl+shift+x")
    assert not await runner.run_shortcut("ctrl+c")
    assert pressed == ["x"]


# -- flags -------------------------------------------------------------------------------------


async def test_flags_have_defaults_and_take_cli_values(project, runners) -> None:
    values: dict[str, Any] = {}

    def setup(tau: Any) -> None:
        tau.register_flag("plan", type=bool, default=False, description="plan first")
        tau.register_flag("profile", type=str, default="dev")

        @tau.on("session_start")
        def read(e: Any, ctx: Any) -> None:
            values.update(plan=tau.get_flag("plan"), profile=tau.get_flag("profile"), other=tau.get_flag("x"))

    def rival(tau: Any) -> None:
        tau.register_flag("plan", type="string")

    runner = await loaded(project, runners, setup, rival)
    problems = runner.apply_flag_values({"plan": True, "profile": "prod", "nope": True})
    assert [p.message for p in problems] == ["Unknown option: --nope"]
    assert runner.apply_flag_values({"profile": True})[0].message == "--profile needs a value"
    assert "already registered" in runner.diagnostics[0].message
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert values == {"plan": True, "profile": "prod", "other": None}


# -- session actions ---------------------------------------------------------------------------


async def test_messages_entries_and_tools_go_through_the_host(project, runners) -> None:
    def setup(tau: Any) -> None:
        @tau.on("session_start")
        def act(e: Any, ctx: Any) -> None:
            tau.send_message({"customType": "note", "content": "hello"}, deliver_as="nextTurn")
            tau.send_message(CustomMessage("note", "go"), trigger_turn=True)
            tau.send_user_message("continue", deliver_as="followUp")
            tau.append_entry("state", {"count": 1})
            tau.set_active_tools(["read"])
            tau.set_session_name("demo")

    runner = await loaded(project, runners, setup)
    host = RecordingHost(str(project))
    runner.bind(host)
    await runner.emit(SessionStartEvent("startup"))

    assert [(s.message.content, s.trigger_turn, s.deliver_as) for s in host.sent] == [
        ("hello", False, "next_turn"),
        ("go", True, "steer"),
    ]
    assert host.user_messages == [("continue", "follow_up")]
    assert host.entries == [("state", {"count": 1})]
    entry = host.session_manager.get_leaf_entry()
    assert isinstance(entry, CustomEntry) and entry.data == {"count": 1}
    assert host.active_tools == ["read"] and host.session_name == "demo"


async def test_bad_send_message_arguments_raise_clearly(project, runners) -> None:
    errors: list[str] = []

    def setup(tau: Any) -> None:
        @tau.on("session_start")
        def act(e: Any, ctx: Any) -> None:
            for call in (
                lambda: tau.send_message({"content": "no type"}),
                lambda: tau.send_message({"customType": "x", "content": "y"}, deliver_as="later"),
            ):
                try:
                    call()
                except ValueError as exc:
                    errors.append(str(exc))

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert "'customType' must be str" in errors[0]
    assert "deliver_as must be" in errors[1]


async def test_ctx_reads_the_session_through_the_host(project, runners) -> None:
    seen: dict[str, Any] = {}

    def setup(tau: Any) -> None:
        @tau.on("session_start")
        async def read(e: Any, ctx: Any) -> None:
            seen.update(
                cwd=ctx.cwd,
                has_ui=ctx.has_ui,
                idle=ctx.is_idle(),
                prompt=ctx.get_system_prompt(),
                confirmed=await ctx.ui.confirm("Proceed?", "really"),
                entries=len(ctx.session_manager.get_entries()),
            )
            ctx.ui.notify("hello", "warning")
            ctx.abort()

    runner = await loaded(project, runners, setup)
    host = RecordingHost(str(project), system_prompt="SYSTEM")
    ui = ScriptedUI(confirms=[True])
    runner.bind(host, ui)
    await runner.emit(SessionStartEvent("startup"))
    assert seen == {
        "cwd": str(project),
        "has_ui": True,
        "idle": True,
        "prompt": "SYSTEM",
        "confirmed": True,
        "entries": 0,
    }
    assert ui.notifications == [("hello", "warning")] and ui.dialogs == ["Proceed?"]
    assert host.actions == ["abort"]


async def test_ctx_before_binding_has_no_session(project, runners) -> None:
    runner = await loaded(project, runners, lambda tau: None)
    ctx = runner.create_context()
    assert ctx.cwd == str(project) and ctx.signal is None and not ctx.has_ui
    with pytest.raises(ExtensionNotReadyError, match=r"ctx\.session_manager"):
        _ = ctx.session_manager


# -- bus, background tasks, exec ---------------------------------------------------------------


async def test_extensions_talk_over_the_shared_bus_and_failures_are_isolated(project, runners) -> None:
    received: list[Any] = []

    def sender(tau: Any) -> None:
        tau.on("session_start", lambda e, ctx: tau.events.emit("plan:changed", {"step": 2}))

    def failing_listener(tau: Any) -> None:
        def listener(data: Any) -> None:
            raise RuntimeError("listener broke")

        tau.events.on("plan:changed", listener)

    def listener(tau: Any) -> None:
        @tau.events.on("plan:changed")
        async def on_plan(data: Any) -> None:
            received.append(data)

    runner = await loaded(project, runners, sender, failing_listener, listener)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    await runner.supervisor.wait()
    assert received == [{"step": 2}]
    assert [(r.extension, r.event) for r in runner.errors] == [("ext2", "bus:plan:changed")]


async def test_spawned_tasks_are_supervised_and_cancelled_on_dispose(project, runners) -> None:
    started = asyncio.Event()

    def setup(tau: Any) -> None:
        async def fails() -> None:
            raise ValueError("background failure")

        async def forever() -> None:
            started.set()
            await asyncio.sleep(3600)

        @tau.on("session_start")
        def start(e: Any, ctx: Any) -> None:
            tau.spawn(fails())
            tau.spawn(forever())

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    await started.wait()
    await asyncio.sleep(0)
    assert [(r.event, r.error) for r in runner.errors] == [("task", "ValueError: background failure")]
    assert runner.supervisor.pending == 1
    runner.dispose()
    assert runner.supervisor.pending == 0


async def test_exec_runs_a_program_in_the_session_cwd(project, runners) -> None:
    results: list[Any] = []

    def setup(tau: Any) -> None:
        @tau.on("session_start")
        async def run(e: Any, ctx: Any) -> None:
            results.append(await tau.exec(sys.executable, ["-c", "import os; print(os.getcwd())"]))
            results.append(await tau.exec(sys.executable, ["-c", "import time; time.sleep(5)"], timeout=0.2))
            results.append(await tau.exec("/no/such/program"))

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    done, timed_out, missing = results
    assert (done.stdout.strip(), done.code, done.killed) == (str(project), 0, False)
    assert (timed_out.code, timed_out.killed) == (None, True)
    assert missing.code == 127 and missing.stderr


async def test_message_renderers_first_wins_and_failures_fall_back(project, runners) -> None:
    def one(tau: Any) -> None:
        tau.register_message_renderer("plan", lambda message, options, theme: f"plan:{message.content}")

        @tau.register_message_renderer("broken")
        def broken(message: Any, options: Any, theme: Any) -> Any:
            raise RuntimeError("cannot draw")

    def two(tau: Any) -> None:
        tau.register_message_renderer("plan", lambda message, options, theme: "second")

    runner = await loaded(project, runners, one, two)
    runner.bind(RecordingHost(str(project)))
    assert runner.render_message(CustomMessage("plan", "a")) == "plan:a"
    assert runner.render_message(CustomMessage("plan", "a", display=False)) is None
    assert runner.render_message(CustomMessage("broken", "x")) is None
    assert runner.errors[0].event == "render"
    assert "already rendered by extension 'ext1'" in runner.diagnostics[0].message


async def test_get_commands_lists_extension_commands_first(project, runners) -> None:
    listed: list[Any] = []

    def setup(tau: Any) -> None:
        tau.register_command("mine", lambda a, c: None, description="my command")
        tau.on("session_start", lambda e, ctx: listed.extend(tau.get_commands()))

    runner = await loaded(project, runners, setup)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert [(c.name, c.description, c.source) for c in listed] == [("mine", "my command", "extension")]

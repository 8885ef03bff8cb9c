"""The extension test cases of spec 30 §10 that need a running session (numbers in the names).

Extensions record what they see in module-level lists, read back through
``runner.extensions[i].module``.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import Context, TextContent, ToolResultMessage
from tau.compaction import CompactionCancelledError
from tau.runtime.agent_session import AgentSession
from tau.runtime.errors import SessionBusyError
from tau.runtime.runtime import CreatedRuntime, create_agent_session_runtime
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import ExtensionOptions, create_agent_session_services
from tau.session.entries import CustomMessageEntry
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, Turn
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

from .conftest import ExtensionSessionFactory, Gate, file_lines, register_faux_models, user_texts


def recorded(session: AgentSession, index: int = 0) -> list[Any]:
    """The ``seen`` list of the session's ``index``-th extension."""
    runner = session.extension_runner
    assert runner is not None
    seen: list[Any] = runner.extensions[index].module.seen  # type: ignore[union-attr]
    return seen


def capture(into: list[Context], reply: Any = "ok") -> Any:
    def respond(context: Context, *rest: Any) -> Any:
        into.append(context)
        return reply if not isinstance(reply, str) else faux_message(reply)

    return respond


def result_texts(context: Context) -> list[str]:
    return [
        "".join(b.text for b in m.content if isinstance(b, TextContent))
        for m in context.messages
        if isinstance(m, ToolResultMessage)
    ]


COMMANDS = """
seen = []

def setup(tau):
    @tau.register_command("note")
    def note(args, ctx):
        seen.append((args, ctx.is_idle()))

    @tau.register_command("broken")
    def broken(args, ctx):
        raise ValueError("no such thing")
"""


async def test_01_02_06_commands_run_while_streaming_report_failures_and_cannot_be_queued(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    gate = Gate()
    faux.set_responses([gate])
    session = await extension_session(commands=COMMANDS)
    reports: list[Any] = []
    await session.bind_extensions(on_error=reports.append)
    running = asyncio.create_task(session.prompt("work"))
    await gate.entered.wait()
    await session.prompt("/note a b")
    assert recorded(session) == [("a b", False)]
    with pytest.raises(SessionBusyError, match="cannot be queued"):
        await session.steer("/note later")
    gate.release.set()
    await running
    await session.prompt("/broken now")
    assert [(r.extension, r.event, r.error) for r in reports] == [
        ("commands", "command", "ValueError: no such thing")
    ]
    assert faux.state.call_count == 1


async def test_03_04_input_transforms_chain_and_extension_prompts_skip_templates(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, project: str
) -> None:
    prompts = Path(project) / ".tau" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "tpl.md").write_text("Template says $1")
    contexts: list[Context] = []
    faux.set_responses([capture(contexts), capture(contexts)])
    session = await extension_session(
        first="""
        seen = []

        def setup(tau):
            @tau.on("input")
            def one(event, ctx):
                seen.append((event.text, event.source))
                return {"action": "transform", "text": event.text + " +1"}
        """,
        second="""
        def setup(tau):
            @tau.on("input")
            def two(event, ctx):
                return {"action": "transform", "text": event.text + " +2"}
        """,
    )
    await session.prompt("/tpl x")
    session.send_user_message("/tpl y")
    await session.wait_for_idle()
    assert recorded(session) == [("/tpl x", "interactive"), ("/tpl y", "extension")]
    assert user_texts(contexts[0]) == ["Template says x"]  # "/tpl x +1 +2": the template ignores $2, $3
    assert user_texts(contexts[1])[-1] == "/tpl y +1 +2"


async def test_resources_discover_adds_prompt_templates_at_startup(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, tmp_path: Path
) -> None:
    (tmp_path / "ext" / "prompts").mkdir(parents=True)
    (tmp_path / "ext" / "prompts" / "shipit.md").write_text("Ship $1 now")
    contexts: list[Context] = []
    faux.set_responses([capture(contexts)])
    session = await extension_session(
        bundle="""
        def setup(tau):
            @tau.on("resources_discover")
            def discover(event, ctx):
                return {"promptPaths": ["prompts"]}  # relative to the extension's folder
        """
    )
    await session.prompt("/shipit v2")
    assert user_texts(contexts[0]) == ["Ship v2 now"]


async def test_28_before_agent_start_chains_prompts_and_injects_messages_in_order(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Context] = []
    faux.set_responses([capture(contexts)])
    session = await extension_session(
        alpha="""
        def setup(tau):
            @tau.on("before_agent_start")
            def alpha(event, ctx):
                return {"systemPrompt": "ALPHA", "message": {"customType": "a", "content": "from alpha"}}
        """,
        beta="""
        seen = []

        def setup(tau):
            @tau.on("before_agent_start")
            def beta(event, ctx):
                seen.append((event.system_prompt, ctx.get_system_prompt()))
                return {"systemPrompt": event.system_prompt + "+BETA", "message": {"customType": "b", "content": "from beta"}}
        """,
    )
    await session.prompt("go")
    assert recorded(session, 1) == [("ALPHA", "ALPHA")]
    assert contexts[0].system_prompt == "ALPHA+BETA"
    assert [m.role for m in session.messages] == ["user", "custom", "custom", "assistant"]
    assert [getattr(m, "custom_type", None) for m in session.messages[1:3]] == ["a", "b"]


async def test_30_32_33_context_errors_keep_messages_and_tool_calls_can_be_rewritten_or_blocked(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, project: str
) -> None:
    contexts: list[Context] = []
    faux.set_responses(
        [
            faux_message(faux_tool_call("bash", {"command": "echo original"})),
            faux_message(faux_tool_call("bash", {"command": "echo forbidden"})),
            capture(contexts),
        ]
    )
    session = await extension_session(
        rewrite="""
        def setup(tau):
            @tau.on("context")
            def broken(event, ctx):
                raise RuntimeError("context failed")

            @tau.on("tool_call")
            def rewrite(event, ctx):
                if "forbidden" in event.input["command"]:
                    raise PermissionError("not this one")
                event.input["command"] = "echo rewritten"
        """
    )
    await session.prompt("run things")
    assert user_texts(contexts[0]) == ["run things"]
    first, second = result_texts(contexts[0])
    assert first.strip() == "rewritten"
    assert "not this one" in second and "rewrite" in second
    assert session.get_last_assistant_text() == "ok"
    assert {r.event for r in session.extension_runner.errors} == {"context", "tool_call"}  # type: ignore[union-attr]


async def test_34_36_tool_result_patches_chain_and_message_end_replacements_are_persisted(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message(faux_tool_call("bash", {"command": "echo hi"})), faux_message("raw")])
    session = await extension_session(
        details="""
        def setup(tau):
            @tau.on("tool_result")
            def details(event, ctx):
                return {"details": {"checked": True}}
        """,
        errors="""
        import msgspec
        from tau.ai.types import AssistantMessage, TextContent

        def setup(tau):
            @tau.on("tool_result")
            def flag(event, ctx):
                assert event.details == {"checked": True}
                return {"isError": True}

            @tau.on("message_end")
            def polish(event, ctx):
                if isinstance(event.message, AssistantMessage) and event.message.text() == "raw":
                    return {"message": msgspec.structs.replace(event.message, content=[TextContent("polished")])}
                if event.message.role == "user":
                    return {"message": AssistantMessage(content=[], api="x", provider="x", model="x")}  # wrong role
        """,
    )
    await session.prompt("go")
    [result] = [m for m in session.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error and result.details == {"checked": True}
    assert session.get_last_assistant_text() == "polished"
    stored = [
        line["message"]
        for line in file_lines(session.session_file)
        if line["type"] == "message" and line["message"]["role"] != "system"
    ]
    assert stored[-1]["content"] == [{"type": "text", "text": "polished"}]
    assert stored[0]["role"] == "user"
    [report] = session.extension_runner.errors  # type: ignore[union-attr]
    assert report.event == "message_end" and "role" in report.error


async def test_37_session_before_compact_can_cancel(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("a" * 400), faux_message("b" * 400)])
    session = await extension_session(
        veto="""
        def setup(tau):
            @tau.on("session_before_compact")
            def veto(event, ctx):
                return {"cancel": True}
        """
    )
    session.services.settings_manager.apply_overrides({"compaction": {"keepRecentTokens": 100}})
    await session.prompt("x" * 400)
    await session.prompt("y" * 400)
    with pytest.raises(CompactionCancelledError):
        await session.compact()


LIFECYCLE = """
seen = []
contexts = []

def setup(tau):
    @tau.on("session_start")
    def start(event, ctx):
        contexts.append(ctx)
        seen.append(("start", event.reason, event.previous_session_file))

    @tau.on("session_shutdown")
    def stop(event, ctx):
        seen.append(("shutdown", event.reason))

    @tau.on("session_before_switch")
    def switch(event, ctx):
        seen.append(("before_switch", event.reason))
        if tau.get_flag("locked"):
            return {"cancel": True}

    tau.register_flag("locked", type=bool, default=False)
"""


async def test_38_39_new_session_can_be_vetoed_and_otherwise_replaces_the_extensions(
    tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider
) -> None:
    extension = tmp_path / "lifecycle.py"
    extension.write_text(LIFECYCLE)
    flags: dict[str, str | bool] = {"locked": True}

    def factory(*, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime:
        options = ExtensionOptions(paths=[str(extension)], flag_values=flags)
        services = create_agent_session_services(cwd=cwd, agent_dir=agent_dir, extension_options=options)
        register_faux_models(services, faux)
        result = create_agent_session(services=services, session_manager=session_manager)
        return CreatedRuntime(result.session, services)

    runtime = create_agent_session_runtime(
        factory,
        cwd=project,
        agent_dir=agent_dir,
        session_manager=SessionManager.create(project, agent_dir=agent_dir),
    )
    old = runtime.session
    await old.bind_extensions()
    first_file = old.session_file
    assert (await runtime.new_session()).cancelled
    assert runtime.session is old and recorded(old) == [("start", "startup", None), ("before_switch", "new")]

    old_runner = old.extension_runner
    assert old_runner is not None
    old_seen, old_ctx = recorded(old), old_runner.extensions[0].module.contexts[0]  # type: ignore[union-attr]
    old_runner.apply_flag_values({"locked": False})
    flags.clear()
    assert not (await runtime.new_session()).cancelled
    assert old_seen[-2:] == [("before_switch", "new"), ("shutdown", "new")]
    assert recorded(runtime.session) == [("start", "new", first_file)]
    with pytest.raises(Exception, match="replaced, reloaded or closed"):
        _ = old_ctx.cwd
    seen = recorded(runtime.session)
    await runtime.dispose()
    assert seen[-1] == ("shutdown", "quit")


async def test_55_model_select_fires_once_per_change(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await extension_session(
        models="""
        seen = []

        def setup(tau):
            @tau.on("model_select")
            def selected(event, ctx):
                seen.append((event.model.id, event.previous_model.id, event.source))
        """
    )
    registry = session.services.model_registry
    other = registry.find("faux", "faux-think")
    assert other is not None and session.model is not None
    await session.set_model(other)
    await session.set_model(other)
    assert recorded(session) == [("faux-think", "faux-1", "set")]


async def test_60_a_user_bash_handler_can_answer_without_running_anything(
    extension_session: ExtensionSessionFactory, project: str
) -> None:
    session = await extension_session(
        remote="""
        def setup(tau):
            @tau.on("user_bash")
            def remote(event, ctx):
                return {"result": {"output": f"remote ran {event.command}", "exitCode": 0}}
        """
    )
    result = await session.execute_bash("touch created-locally")
    assert result.output == "remote ran touch created-locally" and result.exit_code == 0
    assert not (Path(project) / "created-locally").exists()
    assert session.messages[-1].role == "bashExecution"


async def test_62_63_64_sent_messages_follow_their_delivery(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Context] = []
    faux.set_responses([capture(contexts), capture(contexts)])
    session = await extension_session(
        sender="""
        def setup(tau):
            @tau.register_command("send")
            def send(args, ctx):
                how, _, text = args.partition(" ")
                tau.send_message({"customType": "note", "content": text},
                                 deliver_as="next_turn" if how == "next" else "steer",
                                 trigger_turn=how == "trigger")
                tau.append_entry("state", {"secret": "never sent"})
        """
    )
    await session.prompt("/send quiet just recorded")
    assert faux.state.call_count == 0
    assert isinstance(session.session_manager.get_entries()[-2], CustomMessageEntry)
    await session.prompt("/send next held for later")
    await session.prompt("/send trigger start a turn")
    await session.wait_for_idle()
    await session.prompt("question")
    roles = [[m.role for m in c.messages] for c in contexts]
    assert roles == [["user", "user"], ["user", "user", "assistant", "user", "user"]]
    assert "held for later" in json.dumps([m.to_json() for m in contexts[1].messages][-1])
    assert "never sent" not in json.dumps([[m.to_json() for m in c.messages] for c in contexts])


async def test_78_79_84_tools_replace_builtins_register_late_and_see_the_signal(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Context] = []
    faux.set_responses(
        [
            faux_message([faux_tool_call("read", {"path": "x"}), faux_tool_call("late", {})]),
            capture(contexts),
        ]
    )
    session = await extension_session(
        tools="""
        from tau.extensions import ToolDefinition

        seen = []
        EMPTY = {"type": "object", "properties": {}}

        def setup(tau):
            tau.register_tool(ToolDefinition(
                name="read", description="Read through the extension",
                parameters={"type": "object", "properties": {"path": {"type": "string"}}},
                execute=lambda call_id, params, signal, update, ctx: f"extension read {params['path']}",
            ))

            @tau.on("session_start")
            def start(event, ctx):
                seen.append(("session_start", ctx.signal))
                tau.register_tool(ToolDefinition(
                    name="late", description="Registered at session start", parameters=EMPTY,
                    execute=lambda call_id, params, signal, update, ctx: "late tool ran",
                ))

            @tau.on("tool_call")
            def call(event, ctx):
                seen.append(("tool_call", ctx.signal is not None and not ctx.signal.aborted))
        """
    )
    assert "late" in session.get_active_tool_names()
    assert "Read file contents" not in session.system_prompt.split("Available tools")[1].split("\n\n")[0]
    await session.prompt("use them")
    assert result_texts(contexts[0]) == ["extension read x", "late tool ran"]
    assert recorded(session) == [("session_start", None), ("tool_call", True), ("tool_call", True)]


async def test_85_one_tool_prompt_fires_the_events_in_order(
    tmp_path: Path, project: str, agent_dir: str
) -> None:
    extension = tmp_path / "order.py"
    extension.write_text(
        textwrap.dedent(
            """
            from tau.extensions import EVENT_TYPES

            seen = []

            def setup(tau):
                def record(event, ctx):
                    if not seen or seen[-1] != event.type:
                        seen.append(event.type)
                for name in sorted(EVENT_TYPES):
                    tau.on(name, record)
            """
        )
    )
    with FakeLLMServer() as server:
        server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]), Turn(text="done"))
        options = ExtensionOptions(paths=[str(extension)])
        services = create_agent_session_services(cwd=project, agent_dir=agent_dir, extension_options=options)
        config = {
            "baseUrl": server.url("/v1"),
            "api": "openai-completions",
            "apiKey": "k",
            "models": [{"id": "m"}],
        }
        services.model_registry.register_provider("local", config)
        model = services.model_registry.find("local", "m")
        session = create_agent_session(
            services=services, model=model, session_manager=SessionManager.in_memory(project)
        ).session
        await session.bind_extensions()
        seen = recorded(session)
        await session.prompt("go")
        await session.dispose()

    # The agent loop opens the first turn before the prompt's own message events (spec 20 §3).
    # tau asks before_provider_request, then before_provider_headers (pi 1.6: the other way round).
    # Each stream event reaches handlers before the message_update it makes (the fake server's
    # tool call comes in five events, its text in two).
    def request(events: int) -> list[str]:
        return ["context", "context_with_system", "before_provider_request", "before_provider_headers",
                "after_provider_response", "message_start", *["provider_stream_event", "message_update"] * events,
                "message_end"]  # fmt: skip

    assert seen == [
        "session_start", "resources_discover", "input", "before_agent_start", "agent_start",
        "turn_start", "message_start", "message_end",
        *request(5), "tool_execution_start", "tool_call", "tool_execution_update", "tool_result", "tool_execution_end",
        "message_start", "message_end", "turn_end",
        "turn_start", *request(2), "turn_end", "agent_end", "agent_before_settle", "session_shutdown",
    ]  # fmt: skip

"""Extensions wired into AgentSession: each hook point reached from a real session on the faux
provider, with extension files loaded the way ``-e`` loads them (spec 30 §1.3, §1.8, §8)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, Context, TextContent, ToolResultMessage
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import ExtensionOptions, create_agent_session_services
from tau.session.entries import CompactionEntry, CustomEntry
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.testing.faux import FauxProvider, faux_message, faux_tool_call

from .conftest import ExtensionSessionFactory, user_texts

BLOCKER = """
    from tau.extensions import ExtensionAPI

    def setup(tau: ExtensionAPI) -> None:
        @tau.on("tool_call")
        def gate(event, ctx):
            if event.tool_name == "bash" and "rm -rf" in event.input["command"]:
                return {"block": True, "reason": "rm -rf is not allowed here"}
"""

GREETER = """
    from tau.extensions import ExtensionAPI, ToolDefinition

    def setup(tau: ExtensionAPI) -> None:
        def execute(tool_call_id, params, signal, on_update, ctx):
            return f"Hello, {params['name']}! (cwd {ctx.cwd})"

        tau.register_tool(ToolDefinition(
            name="greet",
            description="Greet someone by name",
            parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            execute=execute,
            prompt_snippet="Greet people",
        ))
"""


class Recorder:
    """A faux response that keeps each request's context and answers from a script."""

    def __init__(self, *replies: Any) -> None:
        self.contexts: list[Context] = []
        self._replies = list(replies)

    def __call__(self, context: Context, *rest: Any) -> AssistantMessage:
        self.contexts.append(context)
        reply = self._replies.pop(0) if self._replies else "ok"
        return reply if isinstance(reply, AssistantMessage) else faux_message(reply)

    def script(self, faux: FauxProvider) -> None:
        faux.set_responses([self] * (len(self._replies) + 1))


def tool_results(context: Context) -> list[ToolResultMessage]:
    return [m for m in context.messages if isinstance(m, ToolResultMessage)]


def result_text(message: ToolResultMessage) -> str:
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


async def test_a_tool_call_blocker_stops_bash_and_the_model_sees_why(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, project: str
) -> None:
    victim = Path(project) / "victim"
    victim.mkdir()
    recorder = Recorder(faux_message(faux_tool_call("bash", {"command": "rm -rf victim"})), "understood")
    recorder.script(faux)
    session = await extension_session(blocker=BLOCKER)
    await session.prompt("clean up")
    assert victim.exists()
    [result] = tool_results(recorder.contexts[-1])
    assert result.is_error and result_text(result) == "rm -rf is not allowed here"
    assert session.get_last_assistant_text() == "understood"


async def test_a_registered_tool_is_offered_to_the_model_and_runs(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, project: str
) -> None:
    recorder = Recorder(faux_message(faux_tool_call("greet", {"name": "Ada"})), "done")
    recorder.script(faux)
    session = await extension_session(greeter=GREETER)
    assert "greet" in session.get_active_tool_names()
    assert "- greet: Greet people" in session.system_prompt
    await session.prompt("say hello")
    assert "greet" in [t.name for t in recorder.contexts[0].tools or []]
    [result] = tool_results(recorder.contexts[-1])
    assert not result.is_error and result_text(result) == f"Hello, Ada! (cwd {project})"


LATENT = """
    from tau.extensions import ExtensionAPI, ToolDefinition

    def setup(tau: ExtensionAPI) -> None:
        tau.register_tool(ToolDefinition(
            name="latent",
            description="Registered inactive",
            parameters={"type": "object", "properties": {}},
            execute=lambda *args: "latent ran",
            default_active=False,
        ))
"""


async def test_a_tool_registered_inactive_waits_for_set_active_tools(
    extension_session: ExtensionSessionFactory,
) -> None:
    session = await extension_session(latent=LATENT)
    assert "latent" in [t.name for t in session.get_all_tools()]
    assert "latent" not in session.get_active_tool_names()
    session.set_active_tools([*session.get_active_tool_names(), "latent"])
    assert "latent" in session.get_active_tool_names()


async def test_a_context_handler_changes_the_request_but_not_the_session(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    recorder = Recorder("first", "second")
    recorder.script(faux)
    session = await extension_session(
        forgetful="""
        def setup(tau):
            @tau.on("context")
            def only_the_last(event, ctx):
                event.messages[-1].content = "REWRITTEN"
                return {"messages": event.messages[-1:]}
        """
    )
    await session.prompt("one")
    await session.prompt("two")
    assert [user_texts(c) for c in recorder.contexts] == [["REWRITTEN"], ["REWRITTEN"]]
    assert [m.role for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.messages[2].content[0].text == "two"  # type: ignore[union-attr]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


async def test_before_provider_request_rewrites_the_payload_on_the_wire(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    extension = tmp_path / "payload.py"
    extension.write_text(
        textwrap.dedent(
            """
            def setup(tau):
                @tau.on("before_provider_request")
                def tag(event, ctx):
                    return {**event.payload, "temperature": 0.25, "user": "extension"}
            """
        )
    )
    services = create_agent_session_services(
        cwd=project, agent_dir=agent_dir, extension_options=ExtensionOptions(paths=[str(extension)])
    )
    services.model_registry.register_provider(
        "local",
        {
            "baseUrl": server.url("/v1"),
            "api": "openai-completions",
            "apiKey": "local-key",
            "models": [{"id": "fake-model"}],
        },
    )
    model = services.model_registry.find("local", "fake-model")
    manager = SessionManager.in_memory(project)
    session = create_agent_session(services=services, model=model, session_manager=manager).session
    server.add(Turn(text="hi"))
    try:
        await session.bind_extensions()
        await session.prompt("hello")
    finally:
        await session.dispose()
    body = server.last_request.body
    assert (body["temperature"], body["user"]) == (0.25, "extension")
    assert body["messages"][-1]["content"] == [{"type": "text", "text": "hello"}]


async def test_before_agent_start_overrides_the_system_prompt_for_one_run(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    recorder = Recorder("arr", "plain")
    recorder.script(faux)
    session = await extension_session(
        pirate="""
        def setup(tau):
            @tau.on("before_agent_start")
            def pirate(event, ctx):
                if "pirate" in event.prompt:
                    return {"systemPrompt": event.system_prompt + "\\nTalk like a pirate."}
        """
    )
    base = session.base_system_prompt
    await session.prompt("be a pirate")
    await session.prompt("be normal")
    prompts = [c.system_prompt for c in recorder.contexts]
    assert prompts == [base + "\nTalk like a pirate.", base]
    assert session.system_prompt == base


async def test_input_handlers_transform_or_swallow_what_the_user_typed(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    recorder = Recorder("ok")
    recorder.script(faux)
    session = await extension_session(
        shout="""
        def setup(tau):
            @tau.on("input")
            def shout(event, ctx):
                if event.text == "quiet":
                    return {"action": "handled"}
                return {"action": "transform", "text": event.text.upper()}
        """
    )
    await session.prompt("quiet")
    assert faux.state.call_count == 0 and session.messages == []
    await session.prompt("hello")
    assert user_texts(recorder.contexts[0]) == ["HELLO"]


async def test_an_extension_command_runs_without_a_model_call(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await extension_session(
        hello="""
        def setup(tau):
            @tau.register_command("hello", description="Say hello")
            def hello(args, ctx):
                tau.append_entry("greeting", {"args": args, "idle": ctx.is_idle()})
        """
    )
    await session.prompt("/hello big world")
    assert faux.state.call_count == 0 and session.messages == []
    [entry] = [e for e in session.session_manager.get_entries() if isinstance(e, CustomEntry)]
    assert (entry.custom_type, entry.data) == ("greeting", {"args": "big world", "idle": True})


async def test_session_before_compact_supplies_the_summary(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("a" * 400), faux_message("b" * 400), faux_message("c" * 400)])
    session = await extension_session(
        summary="""
        def setup(tau):
            @tau.on("session_before_compact")
            def summarise(event, ctx):
                prep = event.preparation
                return {"compaction": {"summary": "SUMMARY BY EXTENSION",
                                       "firstKeptEntryId": prep.first_kept_entry_id,
                                       "tokensBefore": prep.tokens_before,
                                       "details": {"by": "extension"}}}
        """
    )
    session.services.settings_manager.apply_overrides({"compaction": {"keepRecentTokens": 100}})
    for question in ("q1", "q2", "q3"):
        await session.prompt(question * 100)
    calls = faux.state.call_count
    result = await session.compact()
    assert result.summary == "SUMMARY BY EXTENSION"
    assert faux.state.call_count == calls  # no summarising request
    [entry] = [e for e in session.session_manager.get_entries() if isinstance(e, CompactionEntry)]
    assert (
        entry.from_hook and entry.summary == "SUMMARY BY EXTENSION" and entry.details == {"by": "extension"}
    )


async def test_reload_gives_extensions_fresh_state_and_keeps_flags_and_tools(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await extension_session(
        counter="""
        def setup(tau):
            count = {"n": 0}
            tau.register_flag("mode", type=str, default="slow")

            @tau.on("session_start")
            def started(event, ctx):
                tau.append_entry("start", {"reason": event.reason, "mode": tau.get_flag("mode")})

            @tau.on("session_shutdown")
            def stopped(event, ctx):
                tau.append_entry("shutdown", {"reason": event.reason})

            @tau.register_command("bump")
            def bump(args, ctx):
                count["n"] += 1
                tau.append_entry("bump", count["n"])
        """
    )
    runner = session.extension_runner
    assert runner is not None
    runner.apply_flag_values({"mode": "fast"})
    session.set_active_tools(["read"])
    await session.prompt("/bump")
    await session.prompt("/bump")
    assert await session.reload() == []
    assert session.extension_runner is not runner and not runner.active
    await session.prompt("/bump")
    entries = [
        (e.custom_type, e.data) for e in session.session_manager.get_entries() if isinstance(e, CustomEntry)
    ]
    assert entries == [
        ("start", {"reason": "startup", "mode": "slow"}),
        ("bump", 1),
        ("bump", 2),
        ("shutdown", {"reason": "reload"}),
        ("start", {"reason": "reload", "mode": "fast"}),
        ("bump", 1),
    ]
    assert session.get_active_tool_names() == ["read"]


async def test_a_failing_handler_is_reported_by_name_and_the_run_goes_on(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("fine")])
    session = await extension_session(
        broken="""
        def setup(tau):
            @tau.on("turn_start")
            def explode(event, ctx):
                raise RuntimeError("kaboom")
        """,
        steady="""
        def setup(tau):
            @tau.on("turn_start")
            def note(event, ctx):
                tau.append_entry("turn", event.turn_index)
        """,
    )
    reports: list[Any] = []
    await session.bind_extensions(on_error=reports.append)
    await session.prompt("hi")
    assert session.get_last_assistant_text() == "fine"
    [report] = reports
    assert (report.extension, report.event, report.error) == ("broken", "turn_start", "RuntimeError: kaboom")
    assert report.path.endswith("broken.py") and report.line == 4
    assert "extension 'broken' failed in turn_start" in str(report)
    assert [e.data for e in session.session_manager.get_entries() if isinstance(e, CustomEntry)] == [0]


def test_without_extensions_nothing_of_the_extension_package_is_imported(
    project: str, agent_dir: str
) -> None:
    code = (
        "import sys, tau.runtime.sdk as sdk\n"
        f"sdk.create_agent_session(cwd={project!r}, agent_dir={agent_dir!r})\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tau.extensions'))))"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", "import json\n" + code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == []

"""Providers from extensions: a new wire protocol streamed by the extension, installed when the
runtime takes in the extensions and removed when it unloads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tau.ai import complete_simple
from tau.ai.registry import get_api_provider
from tau.ai.types import Context, Model, ModelCost, UserMessage
from tau.extensions import ExtensionRunner, ExtensionSource, load_extensions
from tau.testing.fake_llm import FakeLLMServer, Turn

ECHO_PROVIDER = '''
from tau.ai.stream_writer import run_stream


def echo_stream(model, context, options):
    """Replies with the last user message, reversed, in two pieces."""

    async def produce(writer):
        text = context.messages[-1].content[::-1]
        writer.start()
        index = writer.text_start()
        writer.text_delta(index, text[:2])
        writer.text_delta(index, text[2:])
        writer.text_end(index)
        writer.output.stop_reason = "stop"

    return run_stream(model, options, produce)


def setup(tau):
    tau.register_provider(
        "echo",
        {
            "api": "echo-protocol",
            "baseUrl": "http://localhost:0",
            "apiKey": "unused",
            "models": [{"id": "echo-1", "name": "Echo"}],
        },
        stream_simple=echo_stream,
    )
'''


class Sink:
    """Stands in for the model registry."""

    def __init__(self, refuse: bool = False) -> None:
        self.registered: dict[str, Any] = {}
        self.refuse = refuse

    def register_provider(self, name: str, config: Any, *, classifiers: Any = None) -> None:
        if self.refuse:
            raise ValueError("baseUrl is required")
        self.registered[name] = dict(config)

    def unregister_provider(self, name: str) -> None:
        self.registered.pop(name, None)


def echo_model() -> Model:
    return Model(
        id="echo-1",
        name="Echo",
        api="echo-protocol",
        provider="echo",
        base_url="http://localhost:0",
        input=["text"],
        cost=ModelCost(),
        context_window=1000,
        max_tokens=100,
    )


async def test_a_registered_protocol_streams_until_the_runner_is_disposed(write_extension, load) -> None:
    path = write_extension("echo_provider.py", ECHO_PROVIDER)
    runner: ExtensionRunner = await load(path)
    assert [p.name for p in runner.providers] == ["echo"]
    assert get_api_provider("echo-protocol") is None  # queued until the runtime takes it in

    sink = Sink()
    assert runner.register_providers(sink) == []
    assert sink.registered["echo"]["models"] == [{"id": "echo-1", "name": "Echo"}]
    reply = await complete_simple(echo_model(), Context(messages=[UserMessage("hello")]))
    assert reply.text() == "olleh"

    runner.dispose()
    assert get_api_provider("echo-protocol") is None
    assert sink.registered == {}


async def test_a_refused_provider_is_a_diagnostic(write_extension, load) -> None:
    runner = await load(write_extension("echo_provider.py", ECHO_PROVIDER))
    (problem,) = runner.register_providers(Sink(refuse=True))
    assert problem.extension == "echo_provider" and "baseUrl is required" in problem.message
    assert get_api_provider("echo-protocol") is None


async def test_providers_registered_later_are_installed_at_once_and_can_be_removed(
    project: Path, runners: list[ExtensionRunner]
) -> None:
    from tau.extensions import SessionStartEvent
    from tau.extensions.testing import RecordingHost

    def setup(tau: Any) -> None:
        @tau.on("session_start")
        def add(event: Any, ctx: Any) -> None:
            tau.register_provider("proxy", {"baseUrl": "http://proxy.local"})

        tau.register_command("drop", lambda args, ctx: tau.unregister_provider("proxy"))

    runner = await load_extensions([ExtensionSource.inline("late", setup)], cwd=str(project))
    runners.append(runner)
    sink = Sink()
    runner.register_providers(sink)
    runner.bind(RecordingHost(str(project)))
    await runner.emit(SessionStartEvent("startup"))
    assert sink.registered == {"proxy": {"baseUrl": "http://proxy.local"}}
    await runner.run_command("/drop")
    assert sink.registered == {}


async def test_a_stream_function_needs_an_api_name(project: Path, runners: list[ExtensionRunner]) -> None:
    def setup(tau: Any) -> None:
        tau.register_provider("nameless", {}, stream=lambda model, context, options: None)

    runner = await load_extensions([ExtensionSource.inline("nameless", setup)], cwd=str(project))
    runners.append(runner)
    assert runner.extensions == []
    assert "needs config['api']" in runner.diagnostics[0].message


OVERRIDE_PROVIDER = """
from tau.ai.stream_writer import error_stream


def setup(tau):
    tau.register_provider(
        "shadow",
        {"api": "openai-completions", "baseUrl": "http://localhost:0", "apiKey": "unused", "models": []},
        stream_simple=lambda model, context, options: error_stream(model, "served by the extension"),
    )
    tau.register_command("drop", lambda args, ctx: tau.unregister_provider("shadow"))
"""


def completions_model(server: FakeLLMServer) -> Model:
    return Model(id="test-model", api="openai-completions", provider="fake", base_url=server.url("/v1"))


async def test_disposing_a_runner_brings_back_the_builtin_api_it_overrode(write_extension, load) -> None:
    runner: ExtensionRunner = await load(write_extension("shadow.py", OVERRIDE_PROVIDER))
    runner.register_providers(Sink())
    with FakeLLMServer() as server:
        server.add(Turn(text="from the built-in"))
        model = completions_model(server)
        overridden = await complete_simple(model, Context(messages=[UserMessage("hi")]), api_key="k")
        assert overridden.error_message == "served by the extension"

        runner.dispose()
        reply = await complete_simple(model, Context(messages=[UserMessage("hi")]), api_key="k")
    assert reply.error_message is None
    assert reply.text() == "from the built-in"


async def test_unregistering_a_provider_brings_back_the_builtin_api_it_overrode(
    write_extension, load
) -> None:
    runner: ExtensionRunner = await load(write_extension("shadow.py", OVERRIDE_PROVIDER))
    runner.register_providers(Sink())
    await runner.run_command("/drop")
    with FakeLLMServer() as server:
        server.add(Turn(text="from the built-in"))
        reply = await complete_simple(
            completions_model(server), Context(messages=[UserMessage("hi")]), api_key="k"
        )
    assert reply.error_message is None
    assert reply.text() == "from the built-in"

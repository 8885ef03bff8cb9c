"""``context_with_system``, ``before_provider_headers`` and ``provider_stream_event`` in a real
session against the fake LLM server (pi 1.6's request hooks)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import ExtensionOptions, create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, ScriptedToolCall, Turn


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as running:
        yield running


@dataclass
class Started:
    session: AgentSession
    seen: list[Any]
    """The extension's module-level ``seen`` list."""
    reports: list[Any]


async def start(tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer, source: str) -> Started:
    extension = tmp_path / "ext.py"
    extension.write_text(textwrap.dedent(source))
    options = ExtensionOptions(paths=[str(extension)])
    services = create_agent_session_services(cwd=project, agent_dir=agent_dir, extension_options=options)
    config = {
        "baseUrl": server.url("/v1"),
        "api": "openai-completions",
        "apiKey": "k",
        "headers": {"x-drop-me": "1", "x-keep": "kept"},
        "models": [{"id": "m"}],
    }
    services.model_registry.register_provider("local", config)
    model = services.model_registry.find("local", "m")
    session = create_agent_session(
        services=services, model=model, session_manager=SessionManager.in_memory(project)
    ).session
    reports: list[Any] = []
    await session.bind_extensions(on_error=reports.append)
    runner = session.extension_runner
    assert runner is not None
    return Started(session, getattr(runner.extensions[0].module, "seen", []), reports)


def system_text(request: RecordedRequest) -> str:
    first = request.body["messages"][0]
    assert first["role"] in ("system", "developer")
    return str(first["content"])


async def test_before_provider_headers_adds_changes_and_removes_headers(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="one"), Turn(text="two"))
    started = await start(
        tmp_path,
        project,
        agent_dir,
        server,
        """
        seen = []

        def setup(tau):
            @tau.on("before_provider_headers")
            def tag(event, ctx):
                seen.append(dict(event.headers))
                event.headers["x-session-id"] = ctx.session_manager.get_session_id()
                event.headers["x-drop-me"] = None
                event.headers["X-Keep"] = "changed"
        """,
    )
    await started.session.prompt("hi")
    await started.session.prompt("again")
    await started.session.dispose()
    assert len(started.seen) == 2  # once per request
    assert started.seen[0]["x-drop-me"] == "1"
    for request in server.requests:
        assert request.headers["x-session-id"] == started.session.session_manager.get_session_id()
        assert "x-drop-me" not in request.headers
        assert request.headers["x-keep"] == "changed"


async def test_without_a_headers_handler_the_request_keeps_its_headers(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="one"))
    started = await start(tmp_path, project, agent_dir, server, "def setup(tau):\n    pass\n")
    await started.session.prompt("hi")
    await started.session.dispose()
    assert server.requests[0].headers["x-drop-me"] == "1"


async def test_provider_stream_event_sees_each_parsed_chunk_in_order(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="hello there"))
    started = await start(
        tmp_path,
        project,
        agent_dir,
        server,
        """
        seen = []

        def setup(tau):
            @tau.on("provider_stream_event")
            async def raw(event, ctx):
                seen.append((event.provider, event.api, event.model, event.data))
        """,
    )
    await started.session.prompt("hi")
    await started.session.dispose()
    events = started.seen
    assert {(p, a, m) for p, a, m, _ in events} == {("local", "openai-completions", "m")}
    chunks = [data for *_, data in events]
    assert all(isinstance(chunk, dict) and "choices" in chunk for chunk in chunks)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "hello there"
    assert started.reports == []


async def test_a_failing_stream_event_handler_is_reported_and_the_reply_is_unchanged(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="intact"))
    started = await start(
        tmp_path,
        project,
        agent_dir,
        server,
        """
        seen = []

        def setup(tau):
            @tau.on("provider_stream_event")
            def boom(event, ctx):
                raise RuntimeError("bad handler")
        """,
    )
    await started.session.prompt("hi")
    await started.session.dispose()
    assert started.session.get_last_assistant_text() == "intact"
    reports = started.reports
    assert reports and {r.event for r in reports} == {"provider_stream_event"}


CONTEXT_WITH_SYSTEM = """
from tau.session.messages import SystemMessage

seen = []

def setup(tau):
    @tau.on("context_with_system")
    def own_prompt(event, ctx):
        seen.append([m.role for m in event.messages])
        head = event.messages[0]
        head = SystemMessage(content="", sections={"only": "OWNED PROMPT"}, tools_added=[])
        return {"messages": [head, *event.messages[1:]]}
"""


async def test_context_with_system_sees_the_records_and_owns_the_prompt_and_tools(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="ok"))
    started = await start(tmp_path, project, agent_dir, server, CONTEXT_WITH_SYSTEM)
    await started.session.prompt("hi")
    await started.session.dispose()
    assert started.seen == [["system", "user"]]
    request = server.requests[0]
    assert system_text(request) == "OWNED PROMPT"
    assert not request.body.get("tools")
    assert started.reports == []


async def test_context_with_system_gets_a_head_when_context_dropped_the_records(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]), Turn(text="done"))
    started = await start(
        tmp_path,
        project,
        agent_dir,
        server,
        """
        seen = []

        def setup(tau):
            @tau.on("context")
            def last_two(event, ctx):
                return {"messages": event.messages[-2:]}

            @tau.on("context_with_system")
            def look(event, ctx):
                seen.append((event.messages[0].role, bool(event.messages[0].tools_added), len(event.messages)))
        """,
    )
    await started.session.prompt("go")
    await started.session.dispose()
    assert started.seen == [("system", True, 2), ("system", True, 3)]
    assert [len(r.body["messages"]) for r in server.requests] == [2, 3]  # the prompt, then the two kept


async def test_a_context_with_system_result_without_a_leading_system_message_is_refused(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="ok"))
    started = await start(
        tmp_path,
        project,
        agent_dir,
        server,
        """
        seen = []

        def setup(tau):
            @tau.on("context_with_system")
            def drop_head(event, ctx):
                return {"messages": event.messages[1:]}
        """,
    )
    await started.session.prompt("hi")
    await started.session.dispose()
    assert system_text(server.requests[0]) == started.session.system_prompt
    assert server.requests[0].body.get("tools")
    reports = started.reports
    assert [r.event for r in reports] == ["context_with_system"]
    assert "must stay a system message" in reports[0].error


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "debug_provider.py"


async def test_the_debug_provider_example_keeps_the_raw_events_of_each_reply(
    tmp_path: Path, project: str, agent_dir: str, server: FakeLLMServer
) -> None:
    server.add(Turn(text="not captured"), Turn(text="captured"))
    started = await start(tmp_path, project, agent_dir, server, EXAMPLE.read_text())
    session = started.session
    await session.prompt("before")
    await session.prompt("/debug-provider on")
    await session.prompt("after")
    entries = [e for e in session.session_manager.get_entries() if getattr(e, "custom_type", None)]
    await session.dispose()
    assert [e.custom_type for e in entries] == ["debug-provider-events"]  # type: ignore[attr-defined]
    data = entries[0].data  # type: ignore[attr-defined]
    assert (data["provider"], data["api"], data["model"]) == ("local", "openai-completions", "m")
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in data["events"] if c["choices"])
    assert text == "captured"
    assert "x-tau-session-id" not in server.requests[0].headers
    assert server.requests[1].headers["x-tau-session-id"] == session.session_manager.get_session_id()
    assert started.reports == []

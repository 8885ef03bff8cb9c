"""AgentSession: the prompt flow, persistence, queueing while streaming, and the session surface."""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from event_log import EventLog

from tau.agent.state import PLACEHOLDER_MODEL
from tau.ai.types import AssistantMessage, Context, ImageContent, UserMessage
from tau.runtime.errors import MissingAuthError, NoModelError, SessionBusyError
from tau.runtime.events import SessionInfoChanged
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import AgentSessionServices
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message

from .conftest import Gate, SessionFactory, file_lines, user_texts


async def test_a_prompt_is_persisted_in_pi_format(make_session: SessionFactory, faux: FauxProvider) -> None:
    faux.set_responses([faux_message("hi there")])
    session = make_session()
    await session.prompt("hello")

    lines = file_lines(session.session_file)
    assert [line["type"] for line in lines] == [
        "session",
        "model_change",
        "thinking_level_change",
        "message",
        "message",
        "message",
    ]
    header, model_change, thinking, system, user, assistant = lines
    # pi 1.x: the prompt and tools the request used, recorded before the first message
    assert system["message"]["role"] == "system"
    assert "\n\n".join(system["message"]["sections"].values()) == session.system_prompt  # named sections
    assert header["version"] == 3 and header["id"] == session.session_id and header["cwd"] == session.cwd
    assert (model_change["provider"], model_change["modelId"]) == ("faux", "faux-1")
    assert thinking["thinkingLevel"] == "off"
    assert user["message"] == {
        "role": "user",
        "content": [{"type": "text", "text": "hello"}],
        "timestamp": user["message"]["timestamp"],
    }
    reply = assistant["message"]
    assert reply["role"] == "assistant" and reply["content"] == [{"type": "text", "text": "hi there"}]
    assert (reply["provider"], reply["model"], reply["stopReason"]) == ("faux", "faux-1", "stop")
    assert set(reply["usage"]) >= {"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
    for parent, child in itertools.pairwise(lines[1:]):
        assert child["parentId"] == parent["id"]
    assert lines[1]["parentId"] is None


async def test_a_reopened_session_restores_the_conversation_and_continues_it(
    make_session: SessionFactory, services: AgentSessionServices, faux: FauxProvider
) -> None:
    seen: list[Context] = []

    def capture(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("second answer")

    faux.set_responses([faux_message("first answer"), capture])
    first = make_session()
    await first.prompt("first question")
    path = first.session_file
    await first.dispose()

    reopened = create_agent_session(services=services, session_manager=SessionManager.open(str(path)))
    assert reopened.model_fallback_message is None
    session = reopened.session
    assert session.model is not None and session.model.id == "faux-1"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    await session.prompt("second question")

    assert user_texts(seen[0]) == ["first question", "second question"]
    assert [m.role for m in seen[0].messages] == ["user", "assistant", "user"]
    types = [line["type"] for line in file_lines(path)]
    assert types == [
        "session",
        "model_change",
        "thinking_level_change",
        *["message"] * 5,
    ]  # one system message
    await session.dispose()


async def test_prompt_returns_after_listeners_saw_every_event(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("a reply long enough to stream in several pieces")])
    session = make_session()
    log = EventLog()
    slow: list[str] = []

    async def slow_listener(event: Any) -> None:
        await asyncio.sleep(0)
        slow.append(event.type)

    session.subscribe(log)
    session.subscribe(slow_listener)
    await session.prompt("go")
    assert log.types[0] == "agent_start" and log.types[-2:] == ["agent_end", "agent_settled"]
    assert "message_update" in log.types
    assert slow == log.types


async def test_unsubscribed_listeners_hear_nothing(make_session: SessionFactory, faux: FauxProvider) -> None:
    faux.set_responses([faux_message("ok")])
    session = make_session()
    log = EventLog()
    session.subscribe(log)()
    await session.prompt("go")
    assert log.events == []


async def test_a_failing_listener_is_reported_after_the_run_and_the_file_stays_whole(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("ok")])
    session = make_session()

    def broken(event: Any) -> None:
        if event.type == "message_end":
            raise RuntimeError("listener broke")

    session.subscribe(broken)
    with pytest.raises(RuntimeError, match="listener broke"):
        await session.prompt("go")
    assert [line["type"] for line in file_lines(session.session_file)][-2:] == ["message", "message"]


async def test_prompt_without_a_model_raises_a_clear_error(make_session: SessionFactory) -> None:
    session = make_session()
    session.agent.state.model = PLACEHOLDER_MODEL
    with pytest.raises(NoModelError, match="No model selected"):
        await session.prompt("hello")


async def test_prompt_for_a_provider_without_credentials_names_the_env_var_and_auth_json(
    make_session: SessionFactory, services: AgentSessionServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    model = services.model_registry.find("anthropic", "claude-sonnet-4-5")
    assert model is not None
    session = make_session(model=model)
    with pytest.raises(MissingAuthError) as raised:
        await session.prompt("hello")
    message = str(raised.value)
    assert "ANTHROPIC_API_KEY" in message and "auth.json" in message and "\n" not in message
    assert session.messages == []


async def test_prompt_templates_and_skills_are_expanded(
    make_session: SessionFactory, faux: FauxProvider, project: str, services: AgentSessionServices
) -> None:
    prompts = Path(project, ".tau", "prompts")
    prompts.mkdir(parents=True)
    (prompts / "greet.md").write_text("---\ndescription: greet\n---\nSay hello to $1 and [$@]")
    skill = Path(project, ".tau", "skills", "tidy")
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up code\n---\nRemove dead code.\n")
    services.resource_loader.reload()
    seen: list[Context] = []

    def capture(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("ok")

    faux.set_responses([capture, capture, capture])
    session = make_session()
    await session.prompt('/greet Bob "and Ann"')
    await session.prompt("/skill:tidy src/app.py")
    await session.prompt("/unknown stays as typed")
    texts = user_texts(seen[-1])
    assert texts[0] == "Say hello to Bob and [Bob and Ann]"
    assert texts[1].startswith('<skill name="tidy"') and "Remove dead code." in texts[1]
    assert texts[1].endswith("</skill>\n\nsrc/app.py")
    assert texts[2] == "/unknown stays as typed"


async def test_prompt_while_streaming_needs_a_streaming_behavior(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    gate = Gate()
    faux.set_responses([gate, faux_message("answer to the steer")])
    session = make_session()
    log = EventLog()
    session.subscribe(log)
    running = asyncio.create_task(session.prompt("start"))
    await gate.entered.wait()
    assert session.is_streaming

    with pytest.raises(SessionBusyError, match="streaming_behavior"):
        await session.prompt("too early")
    await session.prompt("change course", streaming_behavior="steer")
    assert session.pending_message_count == 1 and session.steering_messages == ["change course"]
    gate.release.set()
    await running

    updates = [(u.steering, u.follow_up) for u in log.of("queue_update")]
    assert updates == [(["change course"], []), ([], [])]
    roles = [(m.role, m.text() if isinstance(m, AssistantMessage) else None) for m in session.messages]
    assert roles == [
        ("user", None),
        ("assistant", "gated reply"),
        ("user", None),
        ("assistant", "answer to the steer"),
    ]
    assert session.pending_message_count == 0
    # The queue update for the delivered steer comes before its message_start.
    cleared = log.events.index(log.of("queue_update")[1])
    assert log.events[cleared + 1].type == "message_start"


async def test_follow_ups_run_after_the_agent_would_stop_and_steers_expand_templates(
    make_session: SessionFactory, faux: FauxProvider, project: str, services: AgentSessionServices
) -> None:
    prompts = Path(project, ".tau", "prompts")
    prompts.mkdir(parents=True)
    (prompts / "tpl.md").write_text("Template says $1")
    services.resource_loader.reload()
    gate = Gate()
    seen: list[Context] = []

    def capture(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("done")

    faux.set_responses([gate, capture])
    session = make_session()
    running = asyncio.create_task(session.prompt("start"))
    await gate.entered.wait()
    await session.follow_up("/tpl x")
    assert session.follow_up_messages == ["Template says x"]
    gate.release.set()
    await running
    assert user_texts(seen[0]) == ["start", "Template says x"]


async def test_clear_queue_returns_the_queued_texts(make_session: SessionFactory, faux: FauxProvider) -> None:
    gate = Gate()
    faux.set_responses([gate])
    session = make_session()
    running = asyncio.create_task(session.prompt("start"))
    await gate.entered.wait()
    await session.steer("s1")
    await session.follow_up("f1")
    assert session.clear_queue() == (["s1"], ["f1"])
    assert session.pending_message_count == 0
    gate.release.set()
    await running
    assert [m.role for m in session.messages] == ["user", "assistant"]


async def test_abort_ends_the_run_and_the_aborted_reply_is_persisted(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    gate = Gate()
    faux.set_responses([gate])
    session = make_session()
    running = asyncio.create_task(session.prompt("start"))
    await gate.entered.wait()
    await session.abort()
    await running
    assert not session.is_streaming
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "aborted"
    assert file_lines(session.session_file)[-1]["message"]["stopReason"] == "aborted"


async def test_last_assistant_text_and_session_name(make_session: SessionFactory, faux: FauxProvider) -> None:
    faux.set_responses([faux_message("the answer")])
    session = make_session()
    log = EventLog()
    session.subscribe(log)
    assert session.get_last_assistant_text() is None
    await session.prompt("q")
    assert session.get_last_assistant_text() == "the answer"

    session.set_session_name("  my work  ")
    await session.abort()  # drains the event queue
    assert session.session_name == "my work"
    assert log.of("session_info_changed") == [SessionInfoChanged("my work")]
    last = file_lines(session.session_file)[-1]
    assert (last["type"], last["name"]) == ("session_info", "my work")


async def test_context_usage_counts_the_last_reported_usage(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("x" * 400)])
    session = make_session()
    await session.prompt("q")
    usage = session.get_context_usage()
    assert usage is not None and usage.context_window == 128_000
    reply = session.messages[-1]
    assert isinstance(reply, AssistantMessage)
    assert usage.tokens == reply.usage.total_tokens and usage.tokens > 100
    assert usage.percent == pytest.approx(usage.tokens / 128_000 * 100)


async def test_the_system_prompt_is_built_once_and_holds_no_date(
    make_session: SessionFactory, faux: FauxProvider, project: str, services: AgentSessionServices
) -> None:
    Path(project, "AGENTS.md").write_text("Use tabs.")
    services.resource_loader.reload()
    seen: list[Context] = []

    def capture(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("ok")

    faux.set_responses([capture, capture])
    session = make_session()
    await session.prompt("one")
    await session.prompt("two")
    first, second = (c.system_prompt for c in seen)
    assert first == second == session.base_system_prompt
    assert "Current date" not in (first or "")  # no date: sessions on other days share the prompt
    assert "Use tabs." in (first or "") and f"Current working directory: {project}" in (first or "")


async def test_set_active_tools_ignores_unknown_names_and_rebuilds_the_base_prompt(
    make_session: SessionFactory,
) -> None:
    session = make_session()
    assert "- bash:" in session.system_prompt
    session.set_active_tools(["read", "nope"])
    assert session.get_active_tool_names() == ["read"]
    assert [t.name for t in session.agent.state.tools] == ["read"]
    assert session.system_prompt == session.base_system_prompt
    assert "- read:" in session.system_prompt and "- bash:" not in session.system_prompt


async def test_a_session_file_appears_only_with_the_first_reply(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("hi")])
    session = make_session()
    path = session.session_file
    assert path is not None and not os.path.exists(path)
    await session.prompt("hello")
    assert os.path.exists(path)


async def test_images_reach_the_model(make_session: SessionFactory, faux: FauxProvider) -> None:
    seen: list[Context] = []

    def capture(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("a red dot")

    faux.set_responses([capture])
    session = make_session()
    await session.prompt("what is this?", images=[ImageContent(data="aGk=", mime_type="image/png")])
    message = seen[0].messages[0]
    assert isinstance(message, UserMessage) and not isinstance(message.content, str)
    assert [b.type for b in message.content] == ["text", "image"]


async def test_disposing_closes_the_spill_folder(make_session: SessionFactory) -> None:
    session = make_session()
    result = await session.execute_bash("yes | head -c 200000")
    assert result.full_output_path is not None and os.path.exists(result.full_output_path)
    await session.dispose()
    assert not os.path.exists(result.full_output_path)

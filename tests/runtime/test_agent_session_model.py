"""AgentSession: switching model and thinking level, and credentials resolved per request."""

from __future__ import annotations

from typing import Any

import pytest
from event_log import EventLog

from tau.ai.types import AssistantMessage, Context, Model
from tau.runtime.errors import MissingAuthError
from tau.runtime.services import AgentSessionServices
from tau.testing.faux import FauxProvider, faux_message

from .conftest import SessionFactory, faux_model, file_lines, register_faux_models


def _entries(session: Any, kind: str) -> list[Any]:
    return [e for e in session.session_manager.get_entries() if e.type == kind]


async def test_set_model_records_the_change_and_saves_the_default(
    make_session: SessionFactory, services: AgentSessionServices, faux: FauxProvider
) -> None:
    session = make_session()
    thinker = faux_model(services, "faux-think")
    await session.set_model(
        thinker, persist=True
    )  # the terminal UI's choice; the SDK's default saves nothing
    assert session.model is thinker
    assert [(e.provider, e.model_id) for e in _entries(session, "model_change")] == [
        ("faux", "faux-1"),
        ("faux", "faux-think"),
    ]
    settings = services.settings_manager
    assert (settings.default_provider, settings.default_model) == ("faux", "faux-think")
    faux.set_responses([faux_message("ok")])
    await session.prompt("hi")
    assert file_lines(session.session_file)[-1]["message"]["model"] == "faux-think"


async def test_set_model_for_the_session_only_leaves_the_default(
    make_session: SessionFactory, services: AgentSessionServices
) -> None:
    """/model's Enter, as pi 1.6's: the session switches, the default model in settings stays."""
    session = make_session()
    settings = services.settings_manager
    before = (settings.default_provider, settings.default_model)
    thinker = faux_model(services, "faux-think")
    await session.set_model(thinker, persist=False)
    assert session.model is thinker
    assert _entries(session, "model_change")[-1].model_id == "faux-think"
    assert (settings.default_provider, settings.default_model) == before != ("faux", "faux-think")


async def test_set_model_without_credentials_raises(
    make_session: SessionFactory, services: AgentSessionServices, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    session = make_session()
    model = services.model_registry.find("openai", "gpt-4o")
    assert model is not None
    with pytest.raises(MissingAuthError, match="OPENAI_API_KEY"):
        await session.set_model(model)
    assert session.model is not None and session.model.id == "faux-1"


async def test_a_non_reasoning_model_clamps_to_off_and_switching_back_restores_the_default(
    make_session: SessionFactory, services: AgentSessionServices
) -> None:
    session = make_session(model=faux_model(services, "faux-think"), thinking_level="high")
    assert session.thinking_level == "high"
    session.set_thinking_level("high")  # no change: nothing recorded
    assert [e.thinking_level for e in _entries(session, "thinking_level_change")] == ["high"]

    await session.set_model(faux_model(services, "faux-1"))
    assert session.thinking_level == "off"
    services.settings_manager.set_default_thinking_level("high")
    await session.set_model(faux_model(services, "faux-think"))
    assert session.thinking_level == "high"
    assert [e.thinking_level for e in _entries(session, "thinking_level_change")] == ["high", "off", "high"]


async def test_thinking_levels_clamp_to_what_the_model_supports(
    make_session: SessionFactory, services: AgentSessionServices
) -> None:
    session = make_session(model=faux_model(services, "faux-think"))
    log = EventLog()
    session.subscribe(log)
    session.set_thinking_level("xhigh")
    assert session.thinking_level == "high"  # no xhigh without a level map: nearest below

    await session.set_model(faux_model(services, "faux-think-map"))
    session.set_thinking_level("minimal")
    assert session.thinking_level == "low"  # minimal maps to null: the nearest level above
    session.set_thinking_level("xhigh")
    assert session.thinking_level == "xhigh"
    await session.abort()
    assert [e.level for e in log.of("thinking_level_changed")] == ["high", "low", "xhigh"]
    assert services.settings_manager.default_thinking_level is None  # as pi's SDK: the session's only
    session.set_thinking_level("high", persist=True)
    assert services.settings_manager.default_thinking_level == "high"


async def test_the_sdk_changes_the_session_only_unless_asked_to_persist(
    make_session: SessionFactory, services: AgentSessionServices
) -> None:
    session = make_session()
    await session.set_model(faux_model(services, "faux-think"))
    await session.cycle_model()
    session.cycle_thinking_level()
    settings = services.settings_manager
    assert (settings.default_provider, settings.default_model, settings.default_thinking_level) == (
        None,
        None,
        None,
    )


async def test_cycling_thinking_levels(make_session: SessionFactory, services: AgentSessionServices) -> None:
    plain = make_session()
    assert plain.cycle_thinking_level() is None
    session = make_session(model=faux_model(services, "faux-think"), thinking_level="high")
    assert session.cycle_thinking_level() == "off"
    assert session.cycle_thinking_level() == "minimal"
    assert session.get_available_thinking_levels() == ["off", "minimal", "low", "medium", "high"]


async def test_cycle_model_goes_through_the_scoped_models(
    make_session: SessionFactory, services: AgentSessionServices
) -> None:
    from tau.accounts.model_resolver import ScopedModel

    first, second = faux_model(services, "faux-1"), faux_model(services, "faux-think")
    session = make_session(scoped_models=[ScopedModel(first), ScopedModel(second, "low")])
    cycled = await session.cycle_model()
    assert cycled is not None and cycled.model is second and cycled.thinking_level == "low"
    back = await session.cycle_model("backward")
    assert back is not None and back.model is first and back.is_scoped


async def test_credentials_and_headers_are_resolved_for_every_request(
    make_session: SessionFactory, services: AgentSessionServices, faux: FauxProvider
) -> None:
    register_faux_models(services, faux, headers={"X-Team": "blue"})
    seen: list[tuple[str | None, dict[str, str] | None, str | None]] = []

    def capture(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        seen.append((options.api_key, options.headers, options.session_id))
        return faux_message("ok")

    faux.set_responses([capture, capture])
    session = make_session()
    await session.prompt("one")
    services.auth_storage.set_runtime_api_key("faux", "rotated-key")
    await session.prompt("two")
    assert seen == [
        ("faux-key", {"X-Team": "blue"}, session.session_id),
        ("rotated-key", {"X-Team": "blue"}, session.session_id),
    ]


async def test_a_credential_resolving_to_nothing_ends_the_request_with_an_error(
    make_session: SessionFactory, services: AgentSessionServices, faux: FauxProvider
) -> None:
    register_faux_models(services, faux, headers={"X-Secret": "!exit 1"})
    faux.set_responses([faux_message("never sent")])
    session = make_session()
    await session.prompt("hi")
    reply = session.messages[-1]
    assert isinstance(reply, AssistantMessage) and reply.stop_reason == "error"
    assert 'header "X-Secret"' in (reply.error_message or "")
    assert faux.state.call_count == 0

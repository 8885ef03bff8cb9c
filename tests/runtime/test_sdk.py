"""create_agent_session and create_agent_session_services (spec 70 §7, spec 30 §1.1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau.agent.tool import AgentTool, text_result
from tau.ai.env_keys import env_var_names
from tau.runtime.sdk import NO_MODELS_MESSAGE, create_agent_session
from tau.runtime.services import AgentSessionServices, create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message

from .conftest import SessionFactory, faux_model, user_entries


def _custom_tool(name: str = "deploy") -> AgentTool:
    async def execute(call_id: str, args: dict[str, Any], signal: Any, on_update: Any) -> Any:
        return text_result("deployed")

    return AgentTool(name=name, description="Deploy", parameters={"type": "object"}, execute=execute)


def _entry_types(manager: SessionManager) -> list[str]:
    return [e.type for e in manager.get_entries()]


def test_a_fresh_session_records_model_and_thinking_level(
    services: AgentSessionServices, project: str, agent_dir: str
) -> None:
    manager = SessionManager.create(project, agent_dir=agent_dir)
    result = create_agent_session(services=services, session_manager=manager, model=faux_model(services))
    assert result.model_fallback_message is None
    assert _entry_types(manager) == ["model_change", "thinking_level_change"]
    assert result.session.thinking_level == "off"


async def test_an_existing_session_restores_its_branch_messages_and_model(
    make_session: SessionFactory, services: AgentSessionServices, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("one"), faux_message("two")])
    first = make_session(model=faux_model(services, "faux-think"), thinking_level="low")
    await first.prompt("a")
    await first.prompt("b")
    manager = SessionManager.open(str(first.session_file))
    second_question = user_entries(manager)[1]
    assert second_question.parent_id is not None
    manager.branch(second_question.parent_id)  # back to before the second question

    session = create_agent_session(services=services, session_manager=manager).session
    assert session.model is not None and session.model.id == "faux-think"
    assert session.thinking_level == "low"
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert _entry_types(manager).count("thinking_level_change") == 1  # nothing appended on resume


def test_a_resumed_level_is_clamped_for_a_model_that_cannot_think(
    services: AgentSessionServices, project: str, agent_dir: str
) -> None:
    manager = SessionManager.create(project, agent_dir=agent_dir)
    manager.append_thinking_level_change("high")
    manager.append_message(faux_message("earlier"))
    session = create_agent_session(
        services=services, session_manager=manager, model=faux_model(services, "faux-1")
    ).session
    assert session.thinking_level == "off"


def test_a_resumed_session_without_a_thinking_entry_gets_one(
    services: AgentSessionServices, project: str, agent_dir: str
) -> None:
    manager = SessionManager.create(project, agent_dir=agent_dir)
    manager.append_message(faux_message("earlier"))
    services.settings_manager.set_default_thinking_level("minimal")
    session = create_agent_session(
        services=services, session_manager=manager, model=faux_model(services, "faux-think")
    ).session
    assert session.thinking_level == "minimal"
    assert _entry_types(manager) == ["message", "thinking_level_change"]


def test_a_stored_model_that_no_longer_exists_falls_back_with_a_message(
    services: AgentSessionServices, project: str, agent_dir: str
) -> None:
    manager = SessionManager.create(project, agent_dir=agent_dir)
    earlier = faux_message("earlier")
    earlier.model = "retired-model"
    manager.append_message(earlier)
    services.settings_manager.set_default_model_and_provider("faux", "faux-think")
    result = create_agent_session(services=services, session_manager=manager)
    assert result.session.model is not None and result.session.model.id == "faux-think"
    assert result.model_fallback_message is not None
    assert "faux/retired-model" in result.model_fallback_message
    assert "faux/faux-think" in result.model_fallback_message


def test_without_any_usable_model_the_session_has_none_and_says_why(
    project: str, agent_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = create_agent_session_services(cwd=project, agent_dir=agent_dir)
    for provider in services.model_registry.get_providers():
        for name in env_var_names(provider):
            monkeypatch.delenv(name, raising=False)
    if services.model_registry.get_available():
        pytest.skip("ambient cloud credentials make a built-in provider available")
    result = create_agent_session(services=services, session_manager=SessionManager.in_memory(project))
    assert result.session.model is None and result.session.thinking_level == "off"
    assert result.model_fallback_message == NO_MODELS_MESSAGE


def test_default_tools_are_read_bash_edit_write_plus_custom_tools(make_session: SessionFactory) -> None:
    session = make_session(custom_tools=[_custom_tool()])
    assert session.get_active_tool_names() == ["read", "bash", "edit", "write", "deploy"]
    assert {t.name for t in session.get_all_tools()} >= {"grep", "find", "ls", "deploy"}
    session.set_active_tools(["grep", "read"])
    assert session.get_active_tool_names() == ["grep", "read"]


def test_custom_tools_follow_their_exposure(make_session: SessionFactory) -> None:
    from msgspec.structs import replace

    tools = [
        replace(_custom_tool("scripted"), exposure="codemode"),
        replace(_custom_tool("found"), exposure="deferred"),
        replace(_custom_tool("gone"), exposure="hidden"),
        replace(_custom_tool("asker"), exposure="model-only"),
    ]
    session = make_session(custom_tools=tools)
    # Only direct and model-only tools are active from the start; hidden ones never become so.
    assert session.get_active_tool_names() == ["read", "bash", "edit", "write", "asker"]
    session.set_active_tools(["read", "scripted", "gone"])
    assert session.get_active_tool_names() == ["read", "scripted"]
    # What other tools may call besides the declared ones: the inactive codemode/deferred tools.
    assert [t.name for t in session.agent.state.callable_tools] == ["found"]


def test_a_tools_allowlist_is_all_that_can_ever_be_active(make_session: SessionFactory) -> None:
    session = make_session(tools=["read"], custom_tools=[_custom_tool()])
    assert session.get_active_tool_names() == ["read"]
    session.set_active_tools(["read", "bash", "deploy"])
    assert session.get_active_tool_names() == ["read"]


def test_no_tools_builtin_keeps_custom_tools_and_all_removes_everything(make_session: SessionFactory) -> None:
    builtin_off = make_session(no_tools="builtin", custom_tools=[_custom_tool()])
    assert builtin_off.get_active_tool_names() == ["deploy"]
    builtin_off.set_active_tools(["deploy", "read"])
    assert builtin_off.get_active_tool_names() == ["deploy", "read"]
    nothing = make_session(no_tools="all", custom_tools=[_custom_tool()])
    assert nothing.get_active_tool_names() == [] and nothing.agent.state.tools == []
    assert "Available tools:\n(none)" in nothing.system_prompt


def test_a_custom_tool_with_a_built_in_name_replaces_it(make_session: SessionFactory) -> None:
    replacement = _custom_tool("read")
    session = make_session(custom_tools=[replacement])
    assert session.get_active_tool_names() == ["read", "bash", "edit", "write"]
    assert session.agent.state.tools[0] is replacement


def test_defaults_come_from_the_cwd_and_agent_dir(project: str, agent_dir: str) -> None:
    result = create_agent_session(cwd=project, agent_dir=agent_dir)
    session = result.session
    assert session.cwd == project
    assert session.services.agent_dir == agent_dir
    file = session.session_file
    assert file is not None and file.startswith(os.path.join(agent_dir, "sessions"))
    session._spill.close()


def test_services_collect_problems_instead_of_printing(
    project: str, agent_dir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path(agent_dir, "models.json").write_text("{not json")
    Path(agent_dir, "settings.json").write_text("[1, 2")
    services = create_agent_session_services(cwd=project, agent_dir=agent_dir)
    warnings = [d.message for d in services.diagnostics if d.type == "warning"]
    assert any("models.json" in m for m in warnings) and any("settings.json" in m for m in warnings)
    assert services.model_registry.get_all()  # built-in models are still there
    assert capsys.readouterr() == ("", "")


def test_the_sdk_entry_is_reachable_lazily_from_tau() -> None:
    code = (
        "import sys, tau, tau.runtime\n"
        "assert not any(m.startswith('tau.runtime.') for m in sys.modules), sorted(sys.modules)\n"
        "from tau import create_agent_session\n"
        "from tau.runtime import AgentSession, create_agent_session as again, session_event_to_json\n"
        "assert create_agent_session is again\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


def test_the_sdk_takes_the_max_level_and_clamps_it_to_what_the_model_offers(
    services: AgentSessionServices, project: str, agent_dir: str
) -> None:
    levels = []
    for model_id in ("faux-think-map", "faux-think", "faux-1"):  # offers up to xhigh / high / none
        manager = SessionManager.create(project, agent_dir=agent_dir)
        model = faux_model(services, model_id)
        created = create_agent_session(
            services=services, session_manager=manager, model=model, thinking_level="max"
        )
        levels.append(created.session.thinking_level)
    assert levels == ["xhigh", "high", "off"]

"""AgentSessionRuntime: new, resume (with services of the target cwd), fork, dispose (spec 30 §2.2)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tau.runtime.agent_session import AgentSession
from tau.runtime.errors import MissingSessionCwdError
from tau.runtime.runtime import (
    AgentSessionRuntime,
    CreatedRuntime,
    ForkTargetError,
    create_agent_session_runtime,
)
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message

from .conftest import file_lines, register_faux_models, user_entries


@pytest.fixture
def runtime(project: str, agent_dir: str, faux: FauxProvider) -> AgentSessionRuntime:
    def factory(*, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime:
        services = create_agent_session_services(cwd=cwd, agent_dir=agent_dir)
        register_faux_models(services, faux)
        model = services.model_registry.find("faux", "faux-1")
        result = create_agent_session(services=services, session_manager=session_manager, model=model)
        return CreatedRuntime(
            result.session, services, list(services.diagnostics), result.model_fallback_message
        )

    return create_agent_session_runtime(
        factory,
        cwd=project,
        agent_dir=agent_dir,
        session_manager=SessionManager.create(project, agent_dir=agent_dir),
    )


async def _converse(runtime: AgentSessionRuntime, faux: FauxProvider, *questions: str) -> None:
    faux.set_responses([faux_message(f"answer to {q}") for q in questions])
    for question in questions:
        await runtime.session.prompt(question)


async def test_new_session_starts_an_empty_file_next_to_the_old_one(
    runtime: AgentSessionRuntime, faux: FauxProvider
) -> None:
    await _converse(runtime, faux, "hello")
    old = runtime.session
    old_file = old.session_file
    rebound: list[AgentSession] = []
    runtime.set_rebind_session(rebound.append)

    await runtime.new_session()
    assert runtime.session is not old and rebound == [runtime.session]
    assert runtime.session.messages == [] and runtime.session.session_id != old.session_id
    assert os.path.dirname(str(runtime.session.session_file)) == os.path.dirname(str(old_file))
    await _converse(runtime, faux, "again")
    assert file_lines(old_file)[-1]["message"]["content"][0]["text"] == "answer to hello"
    await runtime.dispose()


async def test_switching_to_a_session_of_another_folder_rebuilds_its_services(
    runtime: AgentSessionRuntime, faux: FauxProvider, tmp_path: Path, agent_dir: str
) -> None:
    other = tmp_path / "other"
    (other / ".tau").mkdir(parents=True)
    (other / "AGENTS.md").write_text("Other project rules.")
    (other / ".tau" / "settings.json").write_text('{"shellCommandPrefix": "export FROM_OTHER=1"}')
    manager = SessionManager.create(str(other), agent_dir=agent_dir)
    manager.append_message(faux_message("stored reply"))
    stored_file = str(manager.get_session_file())

    assert "Other project rules." not in runtime.session.system_prompt
    await runtime.switch_session(stored_file)
    session = runtime.session
    assert runtime.services.cwd == str(other) and session.cwd == str(other)
    assert "Other project rules." in session.system_prompt
    assert runtime.services.settings_manager.shell_command_prefix == "export FROM_OTHER=1"
    assert [m.role for m in session.messages] == ["assistant"]
    result = await session.execute_bash("echo $FROM_OTHER; pwd")
    assert result.output == f"1\n{other}\n"
    await runtime.dispose()


async def test_a_session_whose_folder_is_gone_needs_a_cwd_override(
    runtime: AgentSessionRuntime, tmp_path: Path, agent_dir: str, project: str
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    manager = SessionManager.create(str(gone), agent_dir=agent_dir)
    manager.append_message(faux_message("stored reply"))
    stored_file = str(manager.get_session_file())
    shutil.rmtree(gone)
    current = runtime.session

    with pytest.raises(MissingSessionCwdError, match=str(gone)) as raised:
        await runtime.switch_session(stored_file)
    assert "cwd override" in str(raised.value)
    assert runtime.session is current  # nothing was torn down

    await runtime.switch_session(stored_file, cwd_override=project)
    assert runtime.session.cwd == project
    await runtime.dispose()


def test_creating_a_runtime_for_a_missing_folder_fails(tmp_path: Path, agent_dir: str) -> None:
    def factory(*, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime:
        raise AssertionError("not reached")

    missing = str(tmp_path / "missing")
    with pytest.raises(MissingSessionCwdError, match="missing"):
        create_agent_session_runtime(
            factory, cwd=missing, agent_dir=agent_dir, session_manager=SessionManager.in_memory(missing)
        )


async def test_fork_before_a_user_message_returns_its_text_and_leaves_it_out(
    runtime: AgentSessionRuntime, faux: FauxProvider
) -> None:
    await _converse(runtime, faux, "first", "second")
    manager = runtime.session.session_manager
    users = user_entries(manager)
    assistant = next(
        e for e in manager.get_entries() if e.type == "message" and e.id not in {u.id for u in users}
    )
    old_file = runtime.session.session_file

    with pytest.raises(ForkTargetError):
        await runtime.fork(assistant.id, "before")
    forked = await runtime.fork(users[1].id, "before")
    assert forked.selected_text == "second"
    session = runtime.session
    assert session.session_file != old_file
    assert [m.role for m in session.messages] == ["user", "assistant"]
    assert session.session_manager.get_header().parent_session == old_file
    await runtime.dispose()


async def test_fork_at_an_entry_keeps_it(runtime: AgentSessionRuntime, faux: FauxProvider) -> None:
    await _converse(runtime, faux, "first", "second")
    users = user_entries(runtime.session.session_manager)
    forked = await runtime.fork(users[1].id, "at")
    assert forked.selected_text is None
    assert [m.role for m in runtime.session.messages] == ["user", "assistant", "user"]
    await runtime.dispose()


async def test_fork_before_the_first_message_starts_afresh_with_a_parent(
    runtime: AgentSessionRuntime, faux: FauxProvider
) -> None:
    await _converse(runtime, faux, "only")
    old_file = runtime.session.session_file
    first_user = user_entries(runtime.session.session_manager)[0]
    forked = await runtime.fork(first_user.id, "before")
    assert forked.selected_text == "only"
    assert runtime.session.messages == []
    assert runtime.session.session_manager.get_header().parent_session == old_file
    await runtime.dispose()


async def test_an_in_memory_session_forks_in_place(project: str, agent_dir: str, faux: FauxProvider) -> None:
    def factory(*, cwd: str, agent_dir: str, session_manager: SessionManager) -> CreatedRuntime:
        services = create_agent_session_services(cwd=cwd, agent_dir=agent_dir)
        register_faux_models(services, faux)
        model = services.model_registry.find("faux", "faux-1")
        result = create_agent_session(services=services, session_manager=session_manager, model=model)
        return CreatedRuntime(result.session, services)

    manager = SessionManager.in_memory(project)
    runtime = create_agent_session_runtime(factory, cwd=project, agent_dir=agent_dir, session_manager=manager)
    await _converse(runtime, faux, "first", "second")
    count = len(manager.get_entries())
    users = user_entries(manager)
    forked = await runtime.fork(users[1].id, "before")
    assert forked.selected_text == "second"
    assert runtime.session.session_manager is manager and runtime.session.session_file is None
    assert len(manager.get_entries()) == count  # the abandoned branch is still in the tree
    assert [m.role for m in runtime.session.messages] == ["user", "assistant"]
    await runtime.dispose()

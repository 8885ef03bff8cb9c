"""The ``skills``, ``prompts`` and ``extensions`` arrays of settings.json: extra paths, and the
``!glob`` / ``+path`` / ``-path`` entries that switch discovered resources off and on (pi's
resource-loader rules), through the real ``tau`` command and the services API; and what tau says
about a resource file it cannot parse."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.runtime.services import AgentSessionServices, ResourceOptions, create_agent_session_services
from tau.testing.fake_llm import Turn

from .conftest import SessionFactory

MARKER_EXTENSION = """
    def setup(tau):
        @tau.on("before_agent_start")
        def mark(event, ctx):
            return {{"systemPrompt": event.system_prompt + "\\nloaded: {name}"}}
"""


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    for command in tau_command(tmp_path):
        (command.work / ".git").mkdir()  # .agents discovery stops at the test's folder
        # These tests are about loading a project's resources: the folder is trusted (see test_project_trust_cli).
        (command.agent_dir / "trust.json").write_text(json.dumps({str(command.work.resolve()): True}))
        yield command


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def skill(folder: Path, name: str) -> Path:
    return write(
        folder / name / "SKILL.md", f"---\nname: {name}\ndescription: The {name} skill\n---\nSteps.\n"
    )


def settings(path: Path, **values: object) -> None:
    write(path, json.dumps(values))


def system_prompt(tau: TauCommand) -> str:
    first = tau.server.last_request.body["messages"][0]
    return str(first["content"])


def last_user_text(tau: TauCommand) -> str:
    last = tau.server.last_request.body["messages"][-1]
    assert last["role"] == "user"
    content = last["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def services_for(tau: TauCommand, **options: bool) -> AgentSessionServices:
    return create_agent_session_services(
        cwd=str(tau.work), agent_dir=tau.agent_dir, resource_options=ResourceOptions(**options)
    )


def skill_names(services: AgentSessionServices) -> list[str]:
    return [s.name for s in services.resource_loader.skills]


def template_names(services: AgentSessionServices) -> list[str]:
    return [t.name for t in services.resource_loader.prompt_templates]


# -- extra paths (item 11) ----------------------------------------------------------------------


def test_project_settings_skills_load_relative_to_the_project_tau_folder(tau: TauCommand) -> None:
    skill(tau.work / "team-skills", "review")
    settings(tau.work / ".tau" / "settings.json", skills=["../team-skills"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "<name>review</name>" in system_prompt(tau)


def test_user_settings_prompts_expand_a_leading_tilde(tau: TauCommand) -> None:
    write(Path(os.environ["HOME"]) / "shared" / "fix.md", "Fix $1 carefully.\n")
    settings(tau.agent_dir / "settings.json", prompts=["~/shared/fix.md"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "/fix parser")
    assert result.returncode == 0, result.stderr
    assert last_user_text(tau) == "Fix parser carefully.\n"  # no frontmatter: used as written (pi 1.6)


def test_user_settings_skills_load_relative_to_the_agent_dir(tau: TauCommand) -> None:
    skill(tau.agent_dir / "library", "deploy")
    settings(tau.agent_dir / "settings.json", skills=["library/deploy/SKILL.md"])
    assert skill_names(services_for(tau)) == ["deploy"]


def test_project_settings_prompt_folders_load_before_the_users_templates(tau: TauCommand) -> None:
    write(tau.work / "prompts-here" / "plan.md", "The project's plan.\n")
    write(tau.agent_dir / "prompts" / "plan.md", "The user's plan.\n")
    settings(tau.work / ".tau" / "settings.json", prompts=["../prompts-here"])
    services = services_for(tau)
    [plan] = services.resource_loader.prompt_templates
    assert plan.content == "The project's plan.\n"
    assert [d.type for d in services.resource_loader.diagnostics] == ["collision"]


def test_a_settings_path_that_does_not_exist_is_a_warning(tau: TauCommand) -> None:
    settings(tau.agent_dir / "settings.json", skills=["missing-skills"])
    services = services_for(tau)
    assert [d.message for d in services.diagnostics] == [
        f"{tau.agent_dir / 'missing-skills'}: skill path does not exist"
    ]


def test_no_skills_leaves_out_the_settings_skills_too(tau: TauCommand) -> None:
    skill(tau.work / "team-skills", "review")
    settings(tau.work / ".tau" / "settings.json", skills=["../team-skills"])
    assert skill_names(services_for(tau, no_skills=True)) == []


async def test_a_session_reload_reads_the_settings_arrays_again(
    make_session: SessionFactory, agent_dir: str
) -> None:
    session = make_session()
    skill(Path(agent_dir) / "library", "deploy")
    settings(Path(agent_dir) / "settings.json", skills=["library"])
    assert [s.name for s in session.services.resource_loader.skills] == []
    await session.reload()
    assert [s.name for s in session.services.resource_loader.skills] == ["deploy"]


# -- switching resources off and on (item 12) ---------------------------------------------------


def test_a_minus_path_keeps_a_discovered_extension_from_loading(tau: TauCommand) -> None:
    write(tau.work / ".tau" / "extensions" / "noisy.py", MARKER_EXTENSION.format(name="noisy"))
    write(tau.work / ".tau" / "extensions" / "quiet.py", MARKER_EXTENSION.format(name="quiet"))
    settings(tau.work / ".tau" / "settings.json", extensions=["-extensions/noisy.py"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    prompt = system_prompt(tau)
    assert "loaded: quiet" in prompt
    assert "loaded: noisy" not in prompt


def test_a_bang_glob_switches_off_discovered_extensions_by_file_name(tau: TauCommand) -> None:
    write(tau.agent_dir / "extensions" / "draft_one.py", MARKER_EXTENSION.format(name="draft one"))
    write(tau.agent_dir / "extensions" / "kept.py", MARKER_EXTENSION.format(name="kept"))
    settings(tau.agent_dir / "settings.json", extensions=["!draft_*.py"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    prompt = system_prompt(tau)
    assert "loaded: kept" in prompt and "loaded: draft one" not in prompt


def test_a_plus_path_brings_back_one_skill_a_bang_glob_switched_off(tau: TauCommand) -> None:
    for name in ("alpha", "beta", "gamma"):
        skill(tau.agent_dir / "skills", name)
    settings(tau.agent_dir / "settings.json", skills=["!skills/*", "+skills/beta"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    prompt = system_prompt(tau)
    assert "<name>beta</name>" in prompt
    assert "<name>alpha</name>" not in prompt and "<name>gamma</name>" not in prompt


def test_a_minus_path_wins_over_a_plus_path(tau: TauCommand) -> None:
    skill(tau.work / ".tau" / "skills", "alpha")
    settings(tau.work / ".tau" / "settings.json", skills=["+skills/alpha", "-skills/alpha/SKILL.md"])
    assert skill_names(services_for(tau)) == []


def test_a_minus_path_switches_off_a_discovered_prompt_template(tau: TauCommand) -> None:
    write(tau.work / ".tau" / "prompts" / "old.md", "Old.\n")
    write(tau.work / ".tau" / "prompts" / "new.md", "New.\n")
    settings(tau.work / ".tau" / "settings.json", prompts=["-./prompts/old.md"])
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "/old")
    assert result.returncode == 0, result.stderr
    assert last_user_text(tau) == "/old"
    assert template_names(services_for(tau)) == ["new"]


def test_switches_also_apply_to_the_settings_own_paths(tau: TauCommand) -> None:
    home = Path(os.environ["HOME"])
    skill(home / "lib", "fresh")
    skill(home / "lib", "stale")
    settings(tau.agent_dir / "settings.json", skills=["~/lib", "-~/lib/stale"])
    assert skill_names(services_for(tau)) == ["fresh"]


def test_the_projects_switches_leave_the_users_resources_alone(tau: TauCommand) -> None:
    write(tau.work / ".tau" / "prompts" / "mine.md", "Mine.\n")
    write(tau.agent_dir / "prompts" / "theirs.md", "Theirs.\n")
    settings(tau.work / ".tau" / "settings.json", prompts=["!*.md"])
    assert template_names(services_for(tau)) == ["theirs"]


def test_project_switches_reach_agents_skills_relative_to_their_agents_folder(tau: TauCommand) -> None:
    skill(tau.work / ".agents" / "skills", "shared")
    skill(tau.work / ".agents" / "skills", "local")
    settings(tau.work / ".tau" / "settings.json", skills=["-skills/shared"])
    assert skill_names(services_for(tau)) == ["local"]


# -- a broken resource file (item 13) -----------------------------------------------------------


def test_a_skill_with_broken_frontmatter_is_reported_with_its_file_line_and_column(tau: TauCommand) -> None:
    path = write(
        tau.work / ".tau" / "skills" / "lint" / "SKILL.md", "---\nname: lint\ndescription: Use: it\n---\n"
    )
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"tau: warning: {path}: skill not loaded: invalid frontmatter at line 3, column 17: "
        "mapping values are not allowed here\n"
    )

"""ResourceLoader: one load of a cwd's resources, SYSTEM.md / APPEND_SYSTEM.md precedence, switches,
diagnostics, and the prompt built from it (spec 30 §10 cases 24, 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.context import ResourceLoader, build_system_prompt, default_agent_dir
from tau.tools import create_coding_tools


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    return project


def loader(tmp_path: Path, cwd: Path, **kwargs: object) -> ResourceLoader:
    return ResourceLoader(str(cwd), str(tmp_path / "agent"), home=str(tmp_path / "home"), **kwargs)  # type: ignore[arg-type]


def test_everything_is_loaded_once_and_exposed(tmp_path: Path, cwd: Path) -> None:
    write(tmp_path / "agent" / "AGENTS.md", "global rules")
    write(cwd / "AGENTS.md", "project rules")
    write(cwd / ".tau" / "skills" / "lint" / "SKILL.md", "---\ndescription: Lint things\n---\nbody")
    write(cwd / ".tau" / "prompts" / "review.md", "Review $@")
    resources = loader(tmp_path, cwd)
    assert [f.content for f in resources.context_files if f.path.startswith(str(tmp_path))] == [
        "global rules",
        "project rules",
    ]
    assert [s.name for s in resources.skills] == ["lint"]
    assert [t.name for t in resources.prompt_templates] == ["review"]
    assert resources.system_prompt is None and resources.append_system_prompt is None
    assert resources.diagnostics == []


def test_files_changed_on_disk_are_seen_only_after_reload(tmp_path: Path, cwd: Path) -> None:
    resources = loader(tmp_path, cwd)
    write(cwd / ".tau" / "prompts" / "late.md", "late")
    assert resources.prompt_templates == []
    resources.reload()
    assert [t.name for t in resources.prompt_templates] == ["late"]


def test_project_system_md_wins_over_the_global_one(tmp_path: Path, cwd: Path) -> None:
    write(tmp_path / "agent" / "SYSTEM.md", "global system")
    assert loader(tmp_path, cwd).system_prompt == "global system"
    write(cwd / ".tau" / "SYSTEM.md", "project system\n")
    assert loader(tmp_path, cwd).system_prompt == "project system"


def test_project_append_system_md_wins_over_the_global_one(tmp_path: Path, cwd: Path) -> None:  # case 25
    write(tmp_path / "agent" / "APPEND_SYSTEM.md", "global append")
    write(cwd / ".tau" / "APPEND_SYSTEM.md", "project append")
    assert loader(tmp_path, cwd).append_system_prompt == "project append"


def test_cli_appends_are_joined_by_a_blank_line_and_replace_the_files(
    tmp_path: Path, cwd: Path
) -> None:  # case 25
    write(cwd / ".tau" / "APPEND_SYSTEM.md", "project append")
    write(cwd / "extra.md", "from a file\n")
    resources = loader(tmp_path, cwd, append_system_prompts=["literal text", "extra.md"])
    assert resources.append_system_prompt == "literal text\n\nfrom a file"


def test_system_prompt_option_reads_a_file_or_takes_the_text(tmp_path: Path, cwd: Path) -> None:
    write(cwd / ".tau" / "SYSTEM.md", "project system")
    write(cwd / "mine.md", "from file")
    assert loader(tmp_path, cwd, system_prompt="mine.md").system_prompt == "from file"
    assert loader(tmp_path, cwd, system_prompt="Be a pirate.").system_prompt == "Be a pirate."


def test_switches_turn_discovery_off_but_keep_explicit_paths(tmp_path: Path, cwd: Path) -> None:
    write(cwd / "AGENTS.md", "rules")
    write(cwd / ".tau" / "skills" / "auto" / "SKILL.md", "---\ndescription: d\n---\n")
    write(cwd / ".tau" / "prompts" / "auto.md", "x")
    write(tmp_path / "extra" / "SKILL.md", "---\nname: extra\ndescription: d\n---\n")
    write(tmp_path / "p.md", "y")
    resources = loader(
        tmp_path,
        cwd,
        no_context_files=True,
        no_skills=True,
        no_prompt_templates=True,
        skill_paths=[str(tmp_path / "extra")],
        prompt_template_paths=[str(tmp_path / "p.md")],
    )
    assert resources.context_files == []
    assert [s.name for s in resources.skills] == ["extra"]
    assert [t.name for t in resources.prompt_templates] == ["p"]


def test_problems_are_collected_as_diagnostics(tmp_path: Path, cwd: Path) -> None:
    (cwd / "AGENTS.md").write_bytes(b"\xff\xfe")
    write(cwd / ".tau" / "skills" / "nodesc" / "SKILL.md", "---\nname: nodesc\n---\n")
    resources = loader(tmp_path, cwd)
    assert {d.path for d in resources.diagnostics} == {
        str(cwd / "AGENTS.md"),
        str(cwd / ".tau" / "skills" / "nodesc" / "SKILL.md"),
    }
    assert all(d.type == "warning" for d in resources.diagnostics)


def test_the_prompt_built_from_loaded_resources_keeps_the_block_order(tmp_path: Path, cwd: Path) -> None:
    write(tmp_path / "agent" / "AGENTS.md", "GLOBAL RULES")
    write(cwd / "CLAUDE.md", "PROJECT RULES")
    write(cwd / ".tau" / "APPEND_SYSTEM.md", "APPENDED")
    write(cwd / ".tau" / "skills" / "lint" / "SKILL.md", "---\ndescription: Lint things\n---\nbody")
    resources = loader(tmp_path, cwd)
    options = resources.system_prompt_options(create_coding_tools(str(cwd)))
    prompt = build_system_prompt(options)
    markers = [
        "Available tools:",
        "Guidelines:",
        "APPENDED",
        "GLOBAL RULES",
        "PROJECT RULES",
        "<name>lint</name>",
    ]
    positions = [prompt.index(m) for m in markers]
    assert positions == sorted(positions)
    assert prompt.endswith(f"\n\nCurrent working directory: {cwd}")
    assert build_system_prompt(resources.system_prompt_options(create_coding_tools(str(cwd)))) == prompt


def test_system_md_switches_the_prompt_to_the_custom_branch(tmp_path: Path, cwd: Path) -> None:  # case 24
    write(cwd / ".tau" / "SYSTEM.md", "You are a reviewer.")
    write(cwd / "AGENTS.md", "PROJECT RULES")
    resources = loader(tmp_path, cwd)
    prompt = build_system_prompt(resources.system_prompt_options(create_coding_tools(str(cwd))))
    assert prompt.startswith("You are a reviewer.\n\n<project_context>")
    assert "Available tools:" not in prompt and "Guidelines:" not in prompt
    assert "PROJECT RULES" in prompt and "Current working directory" in prompt


def test_agent_dir_comes_from_the_environment_or_defaults_under_home() -> None:
    assert default_agent_dir({"TAU_AGENT_DIR": "/opt/agent"}) == "/opt/agent"
    assert default_agent_dir({}) == str(Path.home() / ".tau" / "agent")
    assert default_agent_dir({"TAU_AGENT_DIR": "~/x"}) == str(Path.home() / "x")

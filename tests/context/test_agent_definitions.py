"""Agent definition files (issue #35): pi's and Claude Code's frontmatter, precedence, trust."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tau.context.agent_definitions import agent_definition_dirs, load_agent_definition, load_agent_definitions


def _write(folder: Path, name: str, text: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return str(path)


def test_pi_format_with_a_comma_list_of_tools(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "scout", "---\nname: scout\ndescription: Recon\ntools: read, grep\nmodel: m\n---\nBody.\n"
    )
    definition, problems = load_agent_definition(path, "user")
    assert problems == [] and definition is not None
    assert (definition.name, definition.tools, definition.model, definition.prompt) == (
        "scout",
        ["read", "grep"],
        "m",
        "Body.",
    )


def test_claude_code_capitalised_tool_names_become_taus(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "rev", "---\nname: rev\ndescription: Reviews\ntools: Read, Grep, Bash\n---\nReview.\n"
    )
    definition, _ = load_agent_definition(path, "project")
    assert definition is not None and definition.tools == ["read", "grep", "bash"]


def test_yaml_list_of_tools_and_thinking(tmp_path: Path) -> None:
    path = _write(tmp_path, "w", "---\ndescription: Works\ntools: [read, edit]\nthinking: high\n---\nGo.\n")
    definition, _ = load_agent_definition(path, "user")
    assert definition is not None
    assert (definition.name, definition.tools, definition.thinking) == ("w", ["read", "edit"], "high")


def test_definition_without_description_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, "x", "---\nname: x\n---\nBody.\n")
    definition, problems = load_agent_definition(path, "user")
    assert definition is None
    assert [p.message for p in problems] == ["agent definition not loaded: it has no description"]


def test_project_definition_wins_over_the_users_and_untrusted_projects_are_not_read(tmp_path: Path) -> None:
    cwd, agent_dir = tmp_path / "project", tmp_path / "agent"
    _write(agent_dir / "agents", "scout", "---\ndescription: user scout\n---\nU.\n")
    _write(cwd / ".pi" / "agents", "scout", "---\ndescription: project scout\n---\nP.\n")
    trusted = load_agent_definitions(agent_definition_dirs(str(cwd), str(agent_dir), project_trusted=True))
    untrusted = load_agent_definitions(agent_definition_dirs(str(cwd), str(agent_dir), project_trusted=False))
    assert [a.description for a in trusted.agents] == ["project scout"]
    assert [a.description for a in untrusted.agents] == ["user scout"]


@given(st.text(max_size=200))
def test_any_text_loads_or_warns_without_raising(text: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), "any", text)
        definition, problems = load_agent_definition(path, "user")
        assert (definition is None) != (problems == [])

"""Agent Skills: scanning, validation, precedence, the prompt index and /skill: expansion
(spec 30 §10 cases 10–18)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tau.context import (
    Skill,
    default_skill_dirs,
    expand_skill_command,
    format_skills_for_prompt,
    load_skill_file,
    load_skills,
    load_skills_from_dir,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def skill_md(
    folder: Path, name: str | None = None, description: str | None = "Does things", extra: str = ""
) -> Path:
    header = [f"name: {name}"] if name is not None else []
    if description is not None:
        header.append(f"description: {description}")
    if extra:
        header.append(extra)
    return write(folder / "SKILL.md", "---\n" + "\n".join(header) + "\n---\n\n# Body\nStep one.\n")


def load(tmp_path: Path, **kwargs: object) -> tuple[list[Skill], list[str]]:
    """Skills for cwd ``tmp_path/proj``, agent dir ``tmp_path/agent``, home ``tmp_path/home``."""
    result = load_skills(
        cwd=str(tmp_path / "proj"),
        agent_dir=str(tmp_path / "agent"),
        home=str(tmp_path / "home"),
        **kwargs,  # type: ignore[arg-type]
    )
    return result.skills, [f"{d.type}: {d.message}" for d in result.diagnostics]


@pytest.fixture(autouse=True)
def git_root(tmp_path: Path) -> None:
    """Make tmp_path/proj a repository so discovery never walks above the test's folder."""
    (tmp_path / "proj" / ".git").mkdir(parents=True)


def test_a_valid_skill_loads_with_its_fields(tmp_path: Path) -> None:
    path = skill_md(tmp_path / "proj" / ".tau" / "skills" / "pdf", name="pdf", description="Read PDFs")
    skills, warnings = load(tmp_path)
    assert skills == [Skill("pdf", "Read PDFs", str(path), str(path.parent), "project")]
    assert warnings == []


def test_missing_description_is_not_loaded(tmp_path: Path) -> None:  # case 11
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "x", name="x", description=None)
    skills, warnings = load(tmp_path)
    assert skills == []
    assert any("description is required" in w for w in warnings)


def test_name_not_matching_its_folder_loads_with_a_warning(tmp_path: Path) -> None:  # case 11
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "folder", name="other")
    skills, warnings = load(tmp_path)
    assert [s.name for s in skills] == ["other"]
    assert any('does not match "folder"' in w for w in warnings)


def test_name_defaults_to_the_folder_name(tmp_path: Path) -> None:
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "from-dir")
    skills, warnings = load(tmp_path)
    assert [s.name for s in skills] == ["from-dir"] and warnings == []


def test_bad_characters_and_double_hyphens_warn_but_load(tmp_path: Path) -> None:  # case 12
    path = skill_md(tmp_path / "s" / "Bad--Name", name="Bad--Name")
    skill, diagnostics = load_skill_file(str(path), "path")
    assert skill is not None and skill.name == "Bad--Name"
    messages = " | ".join(d.message for d in diagnostics)
    assert "lowercase letters" in messages and "two hyphens in a row" in messages


def test_long_name_leading_hyphen_and_long_description_warn(tmp_path: Path) -> None:
    name = "-" + "a" * 70
    path = skill_md(tmp_path / "s" / name, name=name, description="d" * 1100)
    skill, diagnostics = load_skill_file(str(path), "path")
    assert skill is not None
    messages = " | ".join(d.message for d in diagnostics)
    assert "longer than 64" in messages and "start or end with a hyphen" in messages
    assert "longer than 1024" in messages


def test_unparsable_frontmatter_is_not_loaded(tmp_path: Path) -> None:
    path = write(tmp_path / "s" / "broken" / "SKILL.md", "---\ndescription: [oops\n---\nbody\n")
    skill, diagnostics = load_skill_file(str(path), "path")
    assert skill is None and [d.type for d in diagnostics] == ["warning"]


def test_the_unparsable_frontmatter_warning_names_the_file_line_and_column(tmp_path: Path) -> None:
    text = '---\nname: broken\ndescription: "never closed\n---\nbody\n'
    path = write(tmp_path / "s" / "broken" / "SKILL.md", text)
    _, [warning] = load_skill_file(str(path), "path")
    assert warning.path == str(path)
    assert warning.message == (
        "skill not loaded: invalid frontmatter at line 4, column 1: "
        "found unexpected end of stream while scanning a quoted scalar (from line 3, column 14)"
    )


def test_unknown_frontmatter_keys_are_ignored(tmp_path: Path) -> None:
    path = skill_md(tmp_path / "s" / "ok", extra="license: MIT\nfavourite-colour: blue")
    skill, diagnostics = load_skill_file(str(path), "path")
    assert skill is not None and diagnostics == []


def test_first_skill_of_a_name_wins_and_the_collision_names_both(tmp_path: Path) -> None:  # case 13
    project = skill_md(tmp_path / "proj" / ".tau" / "skills" / "dup")
    user = skill_md(tmp_path / "agent" / "skills" / "dup")
    result = load_skills(
        cwd=str(tmp_path / "proj"), agent_dir=str(tmp_path / "agent"), home=str(tmp_path / "home")
    )
    assert [s.file_path for s in result.skills] == [str(project)]
    [collision] = [d for d in result.diagnostics if d.type == "collision"]
    assert collision.collision is not None
    assert (collision.collision.winner_path, collision.collision.loser_path) == (str(project), str(user))


def test_the_same_file_reached_through_a_symlink_is_skipped_silently(tmp_path: Path) -> None:
    real = skill_md(tmp_path / "proj" / ".tau" / "skills" / "once")
    (tmp_path / "agent" / "skills").mkdir(parents=True)
    os.symlink(real.parent, tmp_path / "agent" / "skills" / "once")
    skills, warnings = load(tmp_path)
    assert [s.file_path for s in skills] == [str(real)] and warnings == []


def test_hidden_skill_is_loaded_but_left_out_of_the_index(tmp_path: Path) -> None:  # case 14
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "manual", extra="disable-model-invocation: true")
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "auto")
    skills, _ = load(tmp_path)
    assert {s.name: s.disable_model_invocation for s in skills} == {"auto": False, "manual": True}
    index = format_skills_for_prompt(skills)
    assert "<name>auto</name>" in index and "manual" not in index
    assert expand_skill_command("/skill:manual", skills).startswith('<skill name="manual"')


def test_index_is_empty_without_visible_skills_and_escapes_xml() -> None:  # case 15
    assert format_skills_for_prompt([]) == ""
    odd = Skill("q", 'Say "hi" & <wave>', "/s/q/SKILL.md", "/s/q", "user")
    assert "<description>Say &quot;hi&quot; &amp; &lt;wave&gt;</description>" in format_skills_for_prompt(
        [odd]
    )


def test_a_folder_with_skill_md_is_not_searched_deeper(tmp_path: Path) -> None:  # case 16
    root = tmp_path / "proj" / ".tau" / "skills"
    skill_md(root / "parent")
    skill_md(root / "parent" / "child")
    skills, _ = load(tmp_path)
    assert [s.name for s in skills] == ["parent"]


def test_loose_markdown_is_a_skill_in_tau_skills_but_not_in_agents_skills(tmp_path: Path) -> None:  # case 17
    write(tmp_path / "proj" / ".tau" / "skills" / "notes.md", "---\ndescription: My notes\n---\nbody")
    write(tmp_path / "proj" / ".agents" / "skills" / "loose.md", "---\ndescription: Loose\n---\nbody")
    skills, warnings = load(tmp_path)
    assert [(s.name, s.source) for s in skills] == [("notes", "project")]
    assert warnings == []


def test_agents_skills_are_found_from_cwd_up_to_the_git_root_only(tmp_path: Path) -> None:  # case 18
    skill_md(tmp_path / ".agents" / "skills" / "above")
    skill_md(tmp_path / "proj" / ".agents" / "skills" / "at-root")
    skill_md(tmp_path / "proj" / "sub" / ".agents" / "skills" / "in-cwd")
    result = load_skills(
        cwd=str(tmp_path / "proj" / "sub"), agent_dir=str(tmp_path / "agent"), home=str(tmp_path / "home")
    )
    assert [s.name for s in result.skills] == ["in-cwd", "at-root"]


def test_default_dirs_run_project_before_user(tmp_path: Path) -> None:
    cwd, agent, home = tmp_path / "proj", tmp_path / "agent", tmp_path / "home"
    assert default_skill_dirs(str(cwd), str(agent), home=str(home)) == [
        (str(cwd / ".tau" / "skills"), "project", True),
        (str(cwd / ".pi" / "skills"), "project", True),
        (str(cwd / ".agents" / "skills"), "project", False),
        (str(agent / "skills"), "user", True),
        (str(home / ".agents" / "skills"), "user", False),
    ]


def test_user_skills_come_from_the_agent_dir_and_home(tmp_path: Path) -> None:
    skill_md(tmp_path / "agent" / "skills" / "mine")
    skill_md(tmp_path / "home" / ".agents" / "skills" / "shared")
    skills, _ = load(tmp_path)
    assert [(s.name, s.source) for s in skills] == [("mine", "user"), ("shared", "user")]


def test_dot_entries_node_modules_and_ignored_folders_are_skipped(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    skill_md(root / "kept")
    skill_md(root / ".hidden")
    skill_md(root / "node_modules" / "dep")
    skill_md(root / "build" / "generated")
    skill_md(root / "group" / "scratch")
    skill_md(root / "group" / "nested")
    write(root / ".gitignore", "build/\n")
    write(root / "group" / ".ignore", "scratch\n")
    result = load_skills_from_dir(str(root), "path", include_root_files=True)
    assert sorted(s.name for s in result.skills) == ["kept", "nested"]


def test_explicit_skill_paths_win_and_work_without_discovery(tmp_path: Path) -> None:
    explicit = skill_md(tmp_path / "extra" / "dup")
    skill_md(tmp_path / "proj" / ".tau" / "skills" / "dup")
    skills, _ = load(tmp_path, skill_paths=[str(explicit.parent)])
    assert [(s.file_path, s.source) for s in skills] == [(str(explicit), "path")]
    alone, _ = load(tmp_path, skill_paths=["../extra/dup/SKILL.md"], include_defaults=False)
    assert [s.file_path for s in alone] == [str(explicit)]
    _, warnings = load(tmp_path, skill_paths=["missing"])
    assert warnings == ["warning: skill path does not exist"]


def test_skill_command_expands_to_the_body_block_then_the_args(tmp_path: Path) -> None:  # case 10
    path = skill_md(tmp_path / "s" / "foo")
    skill, _ = load_skill_file(str(path), "path")
    assert skill is not None
    expected_block = (
        f'<skill name="foo" location="{path}">\n'
        f"Paths in this skill are relative to {path.parent}.\n\n"
        "# Body\nStep one.\n</skill>"
    )
    assert expand_skill_command("/skill:foo", [skill]) == expected_block
    assert expand_skill_command("/skill:foo  extra words ", [skill]) == expected_block + "\n\nextra words"


def test_unknown_skill_command_is_left_unchanged(tmp_path: Path) -> None:  # case 10
    assert expand_skill_command("/skill:nope do it", []) == "/skill:nope do it"
    assert expand_skill_command("please /skill:foo", []) == "please /skill:foo"

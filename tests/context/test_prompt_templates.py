"""Prompt templates: loading, descriptions, collisions, argument parsing and substitution
(spec 30 §10 cases 7–9)."""

from __future__ import annotations

from pathlib import Path

from tau.context import (
    PromptTemplate,
    expand_prompt_template,
    load_prompt_templates,
    parse_command_args,
    substitute_arguments,
)


def template(name: str, content: str) -> PromptTemplate:
    return PromptTemplate(name=name, description="", content=content, file_path=f"/{name}.md", source="user")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_positional_all_and_slice_placeholders_are_filled() -> None:  # case 7
    tpl = template("t", "$1-$2 [$@] ${@:2}")
    assert expand_prompt_template('/t a "b c" d', [tpl]) == "a-b c [a b c d] b c d"


def test_a_missing_positional_argument_becomes_empty() -> None:  # case 7
    assert substitute_arguments("<$5>", ["a"]) == "<>"


def test_slice_from_zero_counts_as_one_and_length_limits_the_slice() -> None:  # case 8
    assert substitute_arguments("${@:0}", ["a", "b"]) == substitute_arguments("${@:1}", ["a", "b"]) == "a b"
    assert substitute_arguments("${@:2:1}", ["a", "b", "c"]) == "b"


def test_substituted_values_are_not_scanned_again() -> None:  # case 8
    assert substitute_arguments("$1 $2", ["$2", "x"]) == "$2 x"
    assert substitute_arguments("$1|$ARGUMENTS", ["$@"]) == "$@|$@"


def test_arguments_placeholder_is_all_args_joined() -> None:
    assert expand_prompt_template("/t one 'two three'", [template("t", "[$ARGUMENTS]")]) == "[one two three]"


def test_unknown_name_or_leading_space_leaves_text_unchanged() -> None:  # case 9
    tpl = template("t", "expanded")
    assert expand_prompt_template("/nope a b", [tpl]) == "/nope a b"
    assert expand_prompt_template(" /t a", [tpl]) == " /t a"
    assert expand_prompt_template("t a", [tpl]) == "t a"
    assert expand_prompt_template("/t", [tpl]) == "expanded"


def test_quotes_group_words_and_are_removed() -> None:
    assert parse_command_args("""a "b c" 'd "e"' x"y z"w  """) == ["a", "b c", 'd "e"', "xy zw"]


def test_templates_load_from_project_then_user_with_descriptions(tmp_path: Path) -> None:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    write(
        cwd / ".tau" / "prompts" / "review.md",
        "---\ndescription: Review code\nargument-hint: <file>\n---\nReview $1\n",
    )
    write(
        agent / "prompts" / "fix.md", "\n\n" + "Fix the failing test in the module " + "x" * 40 + "\nmore\n"
    )
    write(agent / "prompts" / "nested" / "deep.md", "---\ndescription: ignored\n---\nbody")
    write(agent / "prompts" / "notes.txt", "not a template")
    result = load_prompt_templates(cwd=str(cwd), agent_dir=str(agent))
    by_name = {t.name: t for t in result.templates}
    assert list(by_name) == ["review", "fix"]
    assert by_name["review"].description == "Review code"
    assert by_name["review"].argument_hint == "<file>"
    assert by_name["review"].content == "Review $1"
    assert by_name["review"].source == "project"
    assert by_name["fix"].description == ("Fix the failing test in the module " + "x" * 40)[:60] + "..."
    assert result.diagnostics == []


def test_first_template_of_a_name_wins_with_a_collision_diagnostic(tmp_path: Path) -> None:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    project = write(cwd / ".tau" / "prompts" / "go.md", "project version")
    user = write(agent / "prompts" / "go.md", "user version")
    result = load_prompt_templates(cwd=str(cwd), agent_dir=str(agent))
    assert [t.content for t in result.templates] == ["project version"]
    [diagnostic] = result.diagnostics
    assert diagnostic.type == "collision" and diagnostic.collision is not None
    assert (diagnostic.collision.winner_path, diagnostic.collision.loser_path) == (str(project), str(user))


def test_explicit_paths_come_first_and_survive_disabled_discovery(tmp_path: Path) -> None:
    cwd, agent = tmp_path / "proj", tmp_path / "agent"
    write(cwd / ".tau" / "prompts" / "go.md", "project")
    extra = write(tmp_path / "extra" / "go.md", "explicit")
    result = load_prompt_templates(cwd=str(cwd), agent_dir=str(agent), template_paths=[str(extra)])
    assert [(t.content, t.source) for t in result.templates] == [("explicit", "path")]
    alone = load_prompt_templates(
        cwd=str(cwd), agent_dir=str(agent), template_paths=["../extra"], include_defaults=False
    )
    assert [t.content for t in alone.templates] == ["explicit"]
    missing = load_prompt_templates(cwd=str(cwd), agent_dir=str(agent), template_paths=["nope.md"])
    assert [d.type for d in missing.diagnostics] == ["warning"]


def test_a_template_with_broken_frontmatter_is_skipped_with_a_warning(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "prompts" / "bad.md", "---\ndescription: [unclosed\n---\nbody")
    result = load_prompt_templates(cwd=str(tmp_path), agent_dir=str(agent))
    assert result.templates == []
    assert [d.type for d in result.diagnostics] == ["warning"]


def test_the_broken_frontmatter_warning_names_the_file_line_and_column(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = write(
        agent / "prompts" / "bad.md", "---\nargument-hint: <file>\ndescription: Fix: it: now\n---\nbody"
    )
    [warning] = load_prompt_templates(cwd=str(tmp_path), agent_dir=str(agent)).diagnostics
    assert warning.path == str(path)
    assert warning.message == (
        "prompt template not loaded: invalid frontmatter at line 3, column 17: mapping values are not allowed here"
    )

"""Reading one settings resource array: paths to load, and the ``!glob`` / ``+path`` / ``-path``
switches (pi's resource-loader rules)."""

from __future__ import annotations

from pathlib import Path

from tau.context import SettingsEntries

BASE = "/project/.tau"


def enabled(entries: list[str], path: str) -> bool:
    return SettingsEntries.parse(entries, BASE).enables(path)


def test_plain_entries_are_paths_relative_to_the_base_and_switches_are_not() -> None:
    parsed = SettingsEntries.parse(["../shared", "/abs/x.py", "!*.py", "+a", "-b"], BASE)
    assert parsed.paths == ("/project/shared", "/abs/x.py")


def test_glob_entries_expand_to_their_matches(tmp_path: Path) -> None:
    for name in ("one.py", "two.py", "notes.md"):
        (tmp_path / name).write_text("")
    parsed = SettingsEntries.parse(["*.py"], str(tmp_path))
    assert parsed.paths == (str(tmp_path / "one.py"), str(tmp_path / "two.py"))


def test_without_switches_everything_stays_on() -> None:
    assert enabled(["../shared"], "/project/.tau/extensions/x.py")


def test_a_bang_glob_matches_the_relative_path_the_file_name_or_the_absolute_path() -> None:
    path = "/project/.tau/extensions/draft.py"
    assert not enabled(["!extensions/*.py"], path)
    assert not enabled(["!draft.*"], path)
    assert not enabled(["!/project/**/draft.py"], path)
    assert enabled(["!other/*.py"], path)


def test_a_single_star_stays_within_one_folder_and_a_double_star_crosses_them() -> None:
    path = "/project/.tau/skills/group/deep/SKILL.md"
    assert enabled(["!skills/*/SKILL.md"], path)
    assert not enabled(["!skills/**/SKILL.md"], path)


def test_a_skill_file_answers_to_its_folder() -> None:
    path = "/project/.tau/skills/review/SKILL.md"
    assert not enabled(["-skills/review"], path)
    assert not enabled(["!review"], path)
    assert not enabled(["-./skills/review/"], path)


def test_exact_switches_do_not_match_a_bare_file_name() -> None:
    assert enabled(["-draft.py"], "/project/.tau/extensions/draft.py")


def test_a_plus_path_overrides_a_bang_glob_and_a_minus_path_overrides_both() -> None:
    path = "/project/.tau/prompts/keep.md"
    assert enabled(["!prompts/*", "+prompts/keep.md"], path)
    assert not enabled(["!prompts/*", "+prompts/keep.md", "-/project/.tau/prompts/keep.md"], path)


def test_relative_switches_can_start_from_another_folder() -> None:
    entries = SettingsEntries.parse(["-skills/shared"], BASE)
    assert not entries.enables("/project/.agents/skills/shared/SKILL.md", "/project/.agents")
    assert entries.enables("/project/.agents/skills/shared/SKILL.md")

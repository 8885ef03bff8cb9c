"""Agent Skills: ``SKILL.md`` files whose name and description are indexed in the system prompt.

The model sees only the index (name, description, location) and reads a skill's file with the
``read`` tool when a task matches; ``/skill:<name>`` lets the user paste one into a prompt.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from tau.context._frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from tau.context._ignore import IgnoreRules
from tau.context._xml import escape_xml
from tau.context.diagnostics import ResourceCollision, ResourceDiagnostic
from tau.context.settings_entries import SettingsEntries
from tau.context.skill_dirs import SkillSource, default_skill_dirs

SKILL_FILE_NAME = "SKILL.md"
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024

_VALID_NAME = r"[a-z0-9-]+"
_SKILL_COMMAND = r"(?s)/skill:(\S+)(?:\s+(.*))?"


class Skill(Struct, frozen=True):
    """A loaded skill. ``disable_model_invocation`` keeps it out of the prompt index only."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source: SkillSource
    disable_model_invocation: bool = False


class LoadSkillsResult(Struct):
    skills: list[Skill] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def load_skill_file(path: str, source: SkillSource) -> tuple[Skill | None, list[ResourceDiagnostic]]:
    """One skill file, with warnings for what breaks the Agent Skills rules.

    A name that breaks the rules still loads; a missing description or unparsable frontmatter does
    not. The expected name is the folder's for a ``SKILL.md`` and the file stem for any other file.
    """
    diagnostics: list[ResourceDiagnostic] = []

    def warn(message: str) -> None:
        diagnostics.append(ResourceDiagnostic("warning", message, path))

    try:
        with open(path, encoding="utf-8") as f:
            frontmatter, _ = parse_frontmatter(f.read())
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:
        warn(f"skill not loaded: {exc}")
        return None, diagnostics

    base_dir = os.path.dirname(path)
    file_name = os.path.basename(path)
    expected = os.path.basename(base_dir) if file_name == SKILL_FILE_NAME else Path(file_name).stem
    name = _as_text(frontmatter.get("name")).strip() or expected
    for problem in _name_problems(name, expected):
        warn(problem)

    description = _as_text(frontmatter.get("description")).strip()
    if not description:
        warn("skill not loaded: description is required")
        return None, diagnostics
    if len(description) > MAX_DESCRIPTION_LENGTH:
        warn(f"description is longer than {MAX_DESCRIPTION_LENGTH} characters ({len(description)})")

    skill = Skill(
        name=name,
        description=description,
        file_path=path,
        base_dir=base_dir,
        source=source,
        disable_model_invocation=frontmatter.get("disable-model-invocation") is True,
    )
    return skill, diagnostics


def load_skills_from_dir(
    folder: str,
    source: SkillSource,
    *,
    include_root_files: bool,
    allows: Callable[[str], bool] | None = None,
) -> LoadSkillsResult:
    """Every skill under ``folder`` (that ``allows``, given a skill file's path, lets through).

    A folder holding ``SKILL.md`` is one skill and is not searched further; other folders are
    searched recursively, skipping dot-entries, ``node_modules`` and ignored paths. Loose ``*.md``
    files directly in ``folder`` are skills only when ``include_root_files`` is set.
    """
    result = LoadSkillsResult()
    _scan(folder, source, include_root_files, IgnoreRules(), set(), allows or _everything, result)
    return result


def _everything(path: str) -> bool:
    return True


def _scan(
    folder: str,
    source: SkillSource,
    include_root_files: bool,
    rules: IgnoreRules,
    visited: set[str],
    allows: Callable[[str], bool],
    result: LoadSkillsResult,
) -> None:
    real = os.path.realpath(folder)
    if real in visited:  # a symlink loop
        return
    visited.add(real)
    skill_file = os.path.join(folder, SKILL_FILE_NAME)
    if os.path.isfile(skill_file):
        if allows(skill_file):
            _add_loaded(result, *load_skill_file(skill_file, source))
        return
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    rules = rules.enter(folder)
    for name in names:
        if name.startswith(".") or name == "node_modules":
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            if not rules.is_ignored(path, is_dir=True):
                _scan(path, source, False, rules, visited, allows, result)
        elif (
            include_root_files
            and name.endswith(".md")
            and os.path.isfile(path)
            and not rules.is_ignored(path, is_dir=False)
            and allows(path)
        ):
            _add_loaded(result, *load_skill_file(path, source))


def _add_loaded(result: LoadSkillsResult, skill: Skill | None, diagnostics: list[ResourceDiagnostic]) -> None:
    result.diagnostics.extend(diagnostics)
    if skill is not None:
        result.skills.append(skill)


def load_skills(
    *,
    cwd: str,
    agent_dir: str,
    skill_paths: Sequence[str] = (),
    include_defaults: bool = True,
    home: str | None = None,
    project_entries: SettingsEntries | None = None,
    user_entries: SettingsEntries | None = None,
    include_project: bool = True,
) -> LoadSkillsResult:
    """Skills from every location, first-loaded winning a name.

    Order: explicit ``skill_paths`` (files or folders, kept even when ``include_defaults`` is off),
    then the project's (its settings' ``skills`` paths, ``<cwd>/.tau/skills``, ``<cwd>/.pi/skills``, then ``.agents/skills``
    from cwd up to the git root), then the user's (its settings' paths, ``<agent_dir>/skills``,
    ``~/.agents/skills``). Each scope's settings entries also switch off (and on) what is found in
    that scope. A same-named later skill gives a ``collision`` diagnostic; the same file reached
    twice (via a symlink) is skipped silently. ``include_project=False`` (a folder not trusted)
    leaves the project scope out.
    """
    merged = _SkillMerger()
    for raw in skill_paths:
        _load_path(merged, _resolve(raw, cwd), "path", _everything)
    if include_defaults:
        dirs = default_skill_dirs(cwd, agent_dir, home=home)
        scopes: list[tuple[SkillSource, SettingsEntries]] = [
            ("project", project_entries or SettingsEntries(os.path.join(os.path.abspath(cwd), ".tau"))),
            ("user", user_entries or SettingsEntries(os.path.abspath(agent_dir))),
        ]
        for source, entries in scopes:
            if source == "project" and not include_project:
                continue
            for path in entries.paths:
                _load_path(merged, path, source, entries.enables)
            for folder, folder_source, root_files in dirs:
                if folder_source == source and os.path.isdir(folder):
                    base = os.path.dirname(folder)
                    allows = functools.partial(_enabled_in, entries, base)
                    merged.add(
                        load_skills_from_dir(folder, source, include_root_files=root_files, allows=allows)
                    )
    return merged.result()


def _enabled_in(entries: SettingsEntries, base_dir: str, path: str) -> bool:
    return entries.enables(path, base_dir)


def _load_path(merged: _SkillMerger, path: str, source: SkillSource, allows: Callable[[str], bool]) -> None:
    """A skill file, or a folder of skills, named by the user."""
    if os.path.isdir(path):
        merged.add(load_skills_from_dir(path, source, include_root_files=True, allows=allows))
    elif os.path.isfile(path) and path.endswith(".md"):
        if allows(path):
            merged.add(LoadSkillsResult(*_single(load_skill_file(path, source))))
    elif os.path.exists(path):
        merged.warn("skill path is not a markdown file or a folder", path)
    else:
        merged.warn("skill path does not exist", path)


def _single(
    loaded: tuple[Skill | None, list[ResourceDiagnostic]],
) -> tuple[list[Skill], list[ResourceDiagnostic]]:
    skill, diagnostics = loaded
    return ([skill] if skill else []), diagnostics


class _SkillMerger:
    def __init__(self) -> None:
        self._by_name: dict[str, Skill] = {}
        self._real_paths: set[str] = set()
        self._diagnostics: list[ResourceDiagnostic] = []
        self._collisions: list[ResourceDiagnostic] = []

    def warn(self, message: str, path: str) -> None:
        self._diagnostics.append(ResourceDiagnostic("warning", message, path))

    def add(self, loaded: LoadSkillsResult) -> None:
        self._diagnostics.extend(loaded.diagnostics)
        for skill in loaded.skills:
            real = os.path.realpath(skill.file_path)
            if real in self._real_paths:
                continue
            winner = self._by_name.get(skill.name)
            if winner is None:
                self._by_name[skill.name] = skill
                self._real_paths.add(real)
                continue
            collision = ResourceCollision("skill", skill.name, winner.file_path, skill.file_path)
            self._collisions.append(
                ResourceDiagnostic(
                    "collision", f'skill name "{skill.name}" already taken', skill.file_path, collision
                )
            )

    def result(self) -> LoadSkillsResult:
        return LoadSkillsResult(list(self._by_name.values()), self._diagnostics + self._collisions)


def format_skills_for_prompt(skills: Iterable[Skill]) -> str:
    """The skills index for the system prompt (empty when no skill is visible to the model)."""
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "The following skills give specialised instructions for particular tasks.",
        "When a task matches a skill's description, load its file with the read tool first.",
        "Relative paths in a skill file are relative to the skill's folder (the one holding the file).",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines += [
            "  <skill>",
            f"    <name>{escape_xml(skill.name)}</name>",
            f"    <description>{escape_xml(skill.description)}</description>",
            f"    <location>{escape_xml(skill.file_path)}</location>",
            "  </skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill_command(text: str, skills: Iterable[Skill]) -> str:
    """``/skill:<name> [args]`` replaced by the skill's body in a ``<skill>`` block, args after it.

    Text that is not such a command, or names no loaded skill, comes back unchanged. Raises
    ``OSError`` / ``UnicodeDecodeError`` if the skill file cannot be read (the caller reports it).
    """
    match = re.fullmatch(_SKILL_COMMAND, text) if text.startswith("/skill:") else None
    if match is None:
        return text
    name, args = match.group(1), match.group(2) or ""
    skill = next((s for s in skills if s.name == name), None)
    if skill is None:
        return text
    with open(skill.file_path, encoding="utf-8") as f:
        body = strip_frontmatter(f.read()).strip()
    block = (
        f'<skill name="{escape_xml(skill.name)}" location="{escape_xml(skill.file_path)}">\n'
        f"Paths in this skill are relative to {skill.base_dir}.\n\n"
        f"{body}\n</skill>"
    )
    args = args.strip()
    return f"{block}\n\n{args}" if args else block


def _name_problems(name: str, expected: str) -> list[str]:
    problems = []
    if name != expected:
        problems.append(f'name "{name}" does not match "{expected}"')
    if len(name) > MAX_NAME_LENGTH:
        problems.append(f"name is longer than {MAX_NAME_LENGTH} characters ({len(name)})")
    if not re.fullmatch(_VALID_NAME, name):
        problems.append("name may contain only lowercase letters a-z, digits 0-9 and hyphens")
    if name.startswith("-") or name.endswith("-"):
        problems.append("name must not start or end with a hyphen")
    if "--" in name:
        problems.append("name must not contain two hyphens in a row")
    return problems


def _as_text(value: Any) -> str:
    """A frontmatter scalar as text; YAML may read ``name: 2024`` as a number."""
    if value is None or isinstance(value, (dict, list)):
        return ""
    return str(value)


def _resolve(raw: str, cwd: str) -> str:
    return os.path.abspath(os.path.join(cwd, os.path.expanduser(raw.strip())))

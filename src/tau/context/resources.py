"""``ResourceLoader``: a working directory's context files, skills, templates and prompt overrides.

The runtime builds one per cwd and reads everything from it, so disk is touched only in
``reload()``; rebuilding the system prompt never re-reads files. Problems are collected in
``diagnostics``, never printed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tau.agent.tool import AgentTool
from tau.context.context_files import ContextFile, load_context_files
from tau.context.diagnostics import ResourceDiagnostic
from tau.context.project_dirs import PROJECT_DIR_NAME, project_dirs
from tau.context.prompt_templates import PromptTemplate, load_prompt_templates
from tau.context.settings_entries import EntriesSource, ResourceKind, SettingsEntries, SettingsScope
from tau.context.skills import Skill, load_skills
from tau.context.system_prompt import SystemPromptOptions

AGENT_DIR_ENV = "TAU_AGENT_DIR"
SYSTEM_PROMPT_FILE = "SYSTEM.md"
APPEND_SYSTEM_PROMPT_FILE = "APPEND_SYSTEM.md"


def default_agent_dir(environ: Mapping[str, str] | None = None) -> str:
    """``$TAU_AGENT_DIR`` (``~`` expanded) or ``~/.tau/agent``."""
    env = os.environ if environ is None else environ
    configured = env.get(AGENT_DIR_ENV, "").strip()
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return str(Path.home() / ".tau" / "agent")


class ResourceLoader:
    """Loads once (and again on ``reload()``) what a session in ``cwd`` draws on.

    ``system_prompt`` and each of ``append_system_prompts`` are CLI values: a readable file's path
    (relative to ``cwd``) means its text, anything else is the text itself. Without them,
    ``SYSTEM.md`` / ``APPEND_SYSTEM.md`` of the project (``.tau/``, else pi's ``.pi/``) win over the
    agent dir's. The ``no_*``
    switches turn discovery off but keep explicit paths. ``settings_entries`` gives the settings'
    ``skills`` and ``prompts`` arrays, asked again on every ``reload()``. ``include_project=False``
    (a folder not trusted) reads nothing of ``<cwd>/.tau``, ``<cwd>/.pi`` or ``.agents/skills``; context files
    (AGENTS.md) still load: they are text for the model, not configuration.
    """

    def __init__(
        self,
        cwd: str,
        agent_dir: str | None = None,
        *,
        home: str | None = None,
        system_prompt: str | None = None,
        append_system_prompts: Sequence[str] = (),
        skill_paths: Sequence[str] = (),
        prompt_template_paths: Sequence[str] = (),
        no_context_files: bool = False,
        no_skills: bool = False,
        no_prompt_templates: bool = False,
        settings_entries: EntriesSource | None = None,
        include_project: bool = True,
    ) -> None:
        self.include_project = include_project
        self.cwd = os.path.abspath(cwd)
        self.agent_dir = os.path.abspath(agent_dir) if agent_dir is not None else default_agent_dir()
        self._home = home
        self._system_prompt_arg = system_prompt
        self._append_args = tuple(append_system_prompts)
        self._skill_paths = tuple(skill_paths)
        self._template_paths = tuple(prompt_template_paths)
        self._no_context_files = no_context_files
        self._no_skills = no_skills
        self._no_prompt_templates = no_prompt_templates
        self._settings_entries = settings_entries
        self._extension_skill_paths: tuple[str, ...] = ()
        self._extension_template_paths: tuple[str, ...] = ()

        self.context_files: list[ContextFile] = []
        self.skills: list[Skill] = []
        self.prompt_templates: list[PromptTemplate] = []
        self.system_prompt: str | None = None
        self.append_system_prompt: str | None = None
        self.diagnostics: list[ResourceDiagnostic] = []
        self.reload()

    def reload(self) -> None:
        """Read everything from disk again, replacing the previous state and diagnostics."""
        diagnostics: list[ResourceDiagnostic] = []
        context_files: list[ContextFile] = []
        if not self._no_context_files:
            context_files, found = load_context_files(self.cwd, self.agent_dir)
            diagnostics += found
        skills = load_skills(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            skill_paths=(*self._skill_paths, *self._extension_skill_paths),
            include_defaults=not self._no_skills,
            home=self._home,
            project_entries=self.settings_entries("skills", "project"),
            user_entries=self.settings_entries("skills", "user"),
            include_project=self.include_project,
        )
        templates = load_prompt_templates(
            cwd=self.cwd,
            agent_dir=self.agent_dir,
            template_paths=(*self._template_paths, *self._extension_template_paths),
            include_defaults=not self._no_prompt_templates,
            project_entries=self.settings_entries("prompts", "project"),
            user_entries=self.settings_entries("prompts", "user"),
            include_project=self.include_project,
        )
        diagnostics += skills.diagnostics + templates.diagnostics

        if self._system_prompt_arg is not None:
            system_prompt = self._text_or_file(self._system_prompt_arg, diagnostics)
        else:
            system_prompt = self._prompt_file(SYSTEM_PROMPT_FILE, diagnostics)
        if self._append_args:
            appended = [self._text_or_file(value, diagnostics) for value in self._append_args]
            append = "\n\n".join(a for a in appended if a) or None
        else:
            append = self._prompt_file(APPEND_SYSTEM_PROMPT_FILE, diagnostics)

        self.context_files = context_files
        self.skills = skills.skills
        self.prompt_templates = templates.templates
        self.system_prompt = system_prompt
        self.append_system_prompt = append
        self.diagnostics = diagnostics

    def settings_entries(self, kind: ResourceKind, scope: SettingsScope) -> SettingsEntries:
        """One scope's settings array of ``kind``, its paths resolved against that settings' folder
        (``<cwd>/.tau`` for the project, the agent dir for the user)."""
        base = os.path.join(self.cwd, PROJECT_DIR_NAME) if scope == "project" else self.agent_dir
        entries = self._settings_entries(kind, scope) if self._settings_entries is not None else ()
        return SettingsEntries.parse(entries, base)

    def set_extension_paths(
        self, skill_paths: Sequence[str] = (), prompt_template_paths: Sequence[str] = ()
    ) -> None:
        """Skill and template paths extensions found (``resources_discover``), loaded like explicit
        paths from the next ``reload()`` on; each call replaces the previous ones."""
        self._extension_skill_paths = tuple(skill_paths)
        self._extension_template_paths = tuple(prompt_template_paths)

    def system_prompt_options(self, tools: Iterable[AgentTool]) -> SystemPromptOptions:
        """Options for ``build_system_prompt`` from the active ``tools`` and the loaded resources."""
        return SystemPromptOptions.for_tools(
            tools,
            cwd=self.cwd,
            custom_prompt=self.system_prompt,
            append_system_prompt=self.append_system_prompt,
            context_files=self.context_files,
            skills=self.skills,
        )

    def _prompt_file(self, name: str, diagnostics: list[ResourceDiagnostic]) -> str | None:
        """The project's copy of ``name`` (``.tau/``'s, else ``.pi/``'s) if it exists, else the agent
        dir's, else None."""
        folders = project_dirs(self.cwd) if self.include_project else []
        for folder in (*folders, self.agent_dir):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return _read_prompt_text(path, diagnostics)
        return None

    def _text_or_file(self, value: str, diagnostics: list[ResourceDiagnostic]) -> str | None:
        path = os.path.join(self.cwd, os.path.expanduser(value))
        if os.path.isfile(path):
            return _read_prompt_text(path, diagnostics)
        return value.strip() or None


def _read_prompt_text(path: str, diagnostics: list[ResourceDiagnostic]) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    except (OSError, UnicodeDecodeError) as exc:
        diagnostics.append(ResourceDiagnostic("warning", f"could not read prompt file: {exc}", path))
        return None

"""tau.context: what a model call is made of besides the conversation.

    from tau.context import ResourceLoader, build_system_prompt, convert_to_llm

    resources = ResourceLoader(cwd)                     # AGENTS.md, skills, templates, SYSTEM.md
    prompt = build_system_prompt(resources.system_prompt_options(active_tools))
    llm_messages = convert_to_llm(session_messages, block_images=False)

The system prompt follows a fixed block order (role, tools, guidelines, documentation, appended
text, ``<project_context>``, skills, cwd) and is byte-identical for identical inputs.

Names are imported on first access, so that a module needing one part (the settings entries, say)
does not load the others (skills, ignore rules and with them the tools).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.context.context_files import (
        CONTEXT_FILE_NAMES,
        ContextFile,
        find_context_file,
        load_context_files,
    )
    from tau.context.convert import (
        BRANCH_SUMMARY_PREAMBLE,
        COMPACTION_SUMMARY_PREAMBLE,
        IMAGE_PLACEHOLDER,
        convert_to_llm,
        format_bash_execution,
    )
    from tau.context.diagnostics import DiagnosticType, ResourceCollision, ResourceDiagnostic, ResourceType
    from tau.context.prompt_templates import (
        LoadPromptTemplatesResult,
        PromptTemplate,
        TemplateSource,
        expand_prompt_template,
        load_prompt_template,
        load_prompt_templates,
        parse_command_args,
        substitute_arguments,
    )
    from tau.context.resources import ResourceLoader, default_agent_dir
    from tau.context.settings_entries import SettingsEntries
    from tau.context.skill_dirs import SkillSource, default_skill_dirs
    from tau.context.skills import (
        LoadSkillsResult,
        Skill,
        expand_skill_command,
        format_skills_for_prompt,
        load_skill_file,
        load_skills,
        load_skills_from_dir,
    )
    from tau.context.system_prompt import (
        SystemPromptOptions,
        build_system_prompt,
        format_project_context,
        prompt_guidelines,
        tau_docs_path,
        tau_readme_path,
    )

__all__ = [
    "BRANCH_SUMMARY_PREAMBLE",
    "COMPACTION_SUMMARY_PREAMBLE",
    "CONTEXT_FILE_NAMES",
    "IMAGE_PLACEHOLDER",
    "ContextFile",
    "DiagnosticType",
    "LoadPromptTemplatesResult",
    "LoadSkillsResult",
    "PromptTemplate",
    "ResourceCollision",
    "ResourceDiagnostic",
    "ResourceLoader",
    "ResourceType",
    "SettingsEntries",
    "Skill",
    "SkillSource",
    "SystemPromptOptions",
    "TemplateSource",
    "build_system_prompt",
    "convert_to_llm",
    "default_agent_dir",
    "default_skill_dirs",
    "expand_prompt_template",
    "expand_skill_command",
    "find_context_file",
    "format_bash_execution",
    "format_project_context",
    "format_skills_for_prompt",
    "load_context_files",
    "load_prompt_template",
    "load_prompt_templates",
    "load_skill_file",
    "load_skills",
    "load_skills_from_dir",
    "parse_command_args",
    "prompt_guidelines",
    "substitute_arguments",
    "tau_docs_path",
    "tau_readme_path",
]

_HOMES: dict[str, str] = {
    "CONTEXT_FILE_NAMES": "context_files",
    "ContextFile": "context_files",
    "find_context_file": "context_files",
    "load_context_files": "context_files",
    "BRANCH_SUMMARY_PREAMBLE": "convert",
    "COMPACTION_SUMMARY_PREAMBLE": "convert",
    "IMAGE_PLACEHOLDER": "convert",
    "convert_to_llm": "convert",
    "format_bash_execution": "convert",
    "DiagnosticType": "diagnostics",
    "ResourceCollision": "diagnostics",
    "ResourceDiagnostic": "diagnostics",
    "ResourceType": "diagnostics",
    "LoadPromptTemplatesResult": "prompt_templates",
    "PromptTemplate": "prompt_templates",
    "TemplateSource": "prompt_templates",
    "expand_prompt_template": "prompt_templates",
    "load_prompt_template": "prompt_templates",
    "load_prompt_templates": "prompt_templates",
    "parse_command_args": "prompt_templates",
    "substitute_arguments": "prompt_templates",
    "ResourceLoader": "resources",
    "default_agent_dir": "resources",
    "SettingsEntries": "settings_entries",
    "LoadSkillsResult": "skills",
    "Skill": "skills",
    "SkillSource": "skill_dirs",
    "default_skill_dirs": "skill_dirs",
    "expand_skill_command": "skills",
    "format_skills_for_prompt": "skills",
    "load_skill_file": "skills",
    "load_skills": "skills",
    "load_skills_from_dir": "skills",
    "SystemPromptOptions": "system_prompt",
    "build_system_prompt": "system_prompt",
    "format_project_context": "system_prompt",
    "prompt_guidelines": "system_prompt",
    "tau_docs_path": "system_prompt",
    "tau_readme_path": "system_prompt",
}

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

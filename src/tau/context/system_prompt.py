"""The system prompt: who the model is, its tools and rules, the project's instructions, skills, cwd.

The prompt is named sections in a fixed order (``build_system_prompt_sections``): role, tools,
guidelines, tau documentation, appended text, ``<project_context>``, skills index (only with
``read``), working directory, then extensions' own sections. The same options always give the same
bytes, and nothing in it changes by itself (no date, no clock), so the prompt stays byte-stable
and a provider's prompt cache keeps hitting; a section that does change is sent alone, appended
to the conversation (issue #31).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

from msgspec import Struct, field

from tau.agent.tool import AgentTool
from tau.context._xml import escape_xml
from tau.context.context_files import ContextFile
from tau.context.skills import Skill, format_skills_for_prompt
from tau.errors import TauError
from tau.tools import CODING_TOOL_NAMES

ROLE = (
    "You are an expert coding assistant working inside tau, a coding-agent harness. You help users "
    "by reading files, running commands, editing code and writing new files."
)
OTHER_TOOLS_NOTE = "Other custom tools may also be available, depending on the project."
USE_BASH_FOR_FILES = "Use bash for file operations such as ls, rg and find."
PREFER_FILE_TOOLS = (
    "Prefer the grep, find and ls tools to bash for exploring files (faster, and they respect .gitignore)."
)
ALWAYS_GUIDELINES = ("Be concise in your responses.", "Show file paths clearly when working with files.")
_FILE_TOOLS = ("grep", "find", "ls")


class SystemPromptOptions(Struct, frozen=True, kw_only=True):
    """Everything the prompt is built from.

    ``selected_tools`` are the active tool names in order (None: the default read, bash, edit,
    write); ``tool_snippets`` maps a name to its one-line description;
    ``prompt_guidelines`` are the active tools' guidelines in tool order. ``custom_prompt``
    (SYSTEM.md or ``--system-prompt``) replaces role, tools, guidelines and documentation.
    There is no date: a new session on another day then shares the whole prompt with the
    sessions before it (issue #31, measured in ``bench/bench_cache_reuse.py``), as in pi 1.6.
    """

    cwd: str
    selected_tools: Sequence[str] | None = None
    tool_snippets: Mapping[str, str] = field(default_factory=dict)
    prompt_guidelines: Sequence[str] = ()
    custom_prompt: str | None = None
    append_system_prompt: str | None = None
    context_files: Sequence[ContextFile] = ()
    skills: Sequence[Skill] = ()
    readme_path: str | None = None
    docs_path: str | None = None
    """tau's README and its folder of topic pages, named in the documentation section (``None``:
    those of this install, ``tau_readme_path()`` and ``tau_docs_path()``)."""
    sandbox: str | None = None
    """The sandbox's one line (mode, writable folders, network), after the cwd; ``None`` when off."""
    sections: dict[str, str] = field(default_factory=dict)
    """Extensions' own sections, by name: each goes last, in ``<name>`` tags; an empty one is
    left out. A ``before_agent_start`` handler sets them; one that changes is sent alone."""

    @classmethod
    def for_tools(
        cls,
        tools: Iterable[AgentTool],
        *,
        cwd: str,
        custom_prompt: str | None = None,
        append_system_prompt: str | None = None,
        context_files: Sequence[ContextFile] = (),
        skills: Sequence[Skill] = (),
        readme_path: str | None = None,
        docs_path: str | None = None,
    ) -> SystemPromptOptions:
        """Options whose tool list, snippets and guidelines come from the active ``tools``."""
        active = list(tools)
        snippets = {t.name: _one_line(t.prompt_snippet) for t in active if t.prompt_snippet}
        return cls(
            cwd=cwd,
            selected_tools=[t.name for t in active],
            tool_snippets={name: s for name, s in snippets.items() if s},
            prompt_guidelines=[g for t in active for g in t.prompt_guidelines],
            custom_prompt=custom_prompt,
            append_system_prompt=append_system_prompt,
            context_files=context_files,
            skills=skills,
            readme_path=readme_path,
            docs_path=docs_path,
        )


def build_system_prompt(options: SystemPromptOptions) -> str:
    """The system prompt for ``options``: blocks separated by a blank line, the cwd last."""
    return render_sections(build_system_prompt_sections(options))


def build_system_prompt_sections(options: SystemPromptOptions) -> dict[str, str]:
    """The prompt as named sections, in order (joined by a blank line they are the prompt). A
    change to one (the tools, the skills, an extension's own section) is sent as that section
    alone, appended to the conversation, instead of a new prompt (issue #31)."""
    tools = list(CODING_TOOL_NAMES if options.selected_tools is None else options.selected_tools)
    sections: dict[str, str] = {}
    if options.custom_prompt:
        sections["preamble"] = options.custom_prompt
    else:
        sections["preamble"] = ROLE
        sections["tools"] = _tools_block(tools, options.tool_snippets)
        sections["rules"] = _guidelines_block(tools, options.prompt_guidelines)
        sections["docs"] = _documentation_block(
            options.readme_path or tau_readme_path(), options.docs_path or tau_docs_path()
        )
    if options.append_system_prompt:
        sections["addendum"] = options.append_system_prompt
    if options.context_files:
        sections["project_context"] = format_project_context(options.context_files)
    if "read" in tools and (skills_index := format_skills_for_prompt(options.skills)):
        sections["skills"] = skills_index
    sections["cwd"] = "Current working directory: " + options.cwd.replace("\\", "/")
    if options.sandbox:
        sections["sandbox"] = options.sandbox
    for name, content in options.sections.items():
        check_section_name(name, sections)
        if content:
            sections[name] = f"<{name}>\n{content}\n</{name}>"
    return sections


_SECTION_NAME = r"[a-z][a-z0-9_-]*"
BUILT_IN_SECTIONS = frozenset(
    {"preamble", "tools", "rules", "docs", "addendum", "project_context", "skills", "cwd", "sandbox"}
)


class SectionNameError(TauError, ValueError):
    """An extension's prompt section has a name tau cannot use."""


def check_section_name(name: str, taken: Mapping[str, str] = {}) -> None:
    """Raise ``SectionNameError`` unless ``name`` is lowercase letters, digits, ``_`` and ``-``
    (starting with a letter) and not one of tau's own sections."""
    if not isinstance(name, str) or not re.fullmatch(_SECTION_NAME, name):
        raise SectionNameError(
            f"Invalid system prompt section name {name!r}: use lowercase letters, digits, _ and -"
        )
    if name in BUILT_IN_SECTIONS:
        raise SectionNameError(f"System prompt section {name!r} is tau's own: pick another name")


def render_sections(sections: Mapping[str, str]) -> str:
    """Sections as one prompt: each non-empty one, a blank line apart."""
    return "\n\n".join(text for text in sections.values() if text)


def _tools_block(tools: Sequence[str], snippets: Mapping[str, str]) -> str:
    lines = [f"- {name}: {_one_line(snippets[name])}" for name in tools if _one_line(snippets.get(name))]
    return "Available tools:\n" + ("\n".join(lines) if lines else "(none)") + "\n\n" + OTHER_TOOLS_NOTE


def prompt_guidelines(tools: Sequence[str], tool_guidelines: Iterable[str]) -> list[str]:
    """The guideline bullets: the file-exploration rule for the tools at hand, the tools' own
    guidelines, then the ones that always apply; trimmed, blank ones dropped, each text once."""
    candidates: list[str] = []
    if "bash" in tools:
        has_file_tools = any(t in tools for t in _FILE_TOOLS)
        candidates.append(PREFER_FILE_TOOLS if has_file_tools else USE_BASH_FOR_FILES)
    candidates += tool_guidelines
    candidates += ALWAYS_GUIDELINES
    unique: dict[str, None] = {}
    for text in candidates:
        if text.strip():
            unique.setdefault(text.strip(), None)
    return list(unique)


def _guidelines_block(tools: Sequence[str], tool_guidelines: Iterable[str]) -> str:
    return "Guidelines:\n" + "\n".join(f"- {g}" for g in prompt_guidelines(tools, tool_guidelines))


# The pages the documentation section names (a test holds that each exists); the README's table
# lists them all.
DOCS_PAGES: tuple[str, ...] = (
    "settings.md",
    "configuration.md",
    "models.md",
    "providers.md",
    "extensions.md",
    "skills.md",
    "prompt-templates.md",
    "themes.md",
    "keybindings.md",
    "usage.md",
    "packages.md",
    "mcp.md",
    "sdk.md",
    "rpc.md",
    "pi-compatibility.md",
)


def _documentation_block(readme_path: str, docs_path: str) -> str:
    """Where tau's own documentation is. The same text for every run of one install, so it never
    breaks the cached prefix."""
    return (
        "tau documentation (read it only when the user asks about tau itself, its settings, extensions, "
        "skills, prompt templates, themes or SDK):\n"
        f"- README: {readme_path} (its table lists every page)\n"
        f"- Topic pages, where the README's docs/... links lead: {docs_path} "
        f"({', '.join(DOCS_PAGES)}, ...)\n"
        "- Command-line options: run `tau --help`"
    )


def format_project_context(files: Iterable[ContextFile]) -> str:
    """The ``<project_context>`` block: one ``<project_instructions>`` per file, in the given order."""
    parts = ["<project_context>"]
    for file in files:
        parts.append(
            f'<project_instructions path="{escape_xml(file.path)}">\n'
            f"{file.content.strip()}\n</project_instructions>"
        )
    parts.append("</project_context>")
    return "\n".join(parts)


def tau_readme_path() -> str:
    """tau's README inside the package (``tau/README.md``: a link to the checkout's README in a
    source tree, the file itself in an installed wheel); ``TAU_PACKAGE_DIR`` names another folder
    (Nix/Guix store paths; pi's ``PI_PACKAGE_DIR`` names pi's own and is not read)."""
    from tau._env_twins import tau_only

    moved = tau_only("PACKAGE_DIR")
    if moved:
        readme = Path(moved) / "README.md"
        return str(readme if readme.is_file() else moved)
    return str(_package_dir() / "README.md")


def tau_docs_path() -> str:
    """The folder of tau's topic pages inside the package (``tau/docs``), one Markdown file each."""
    return str(_package_dir() / "docs")


@cache  # resolving the path walks its links: ten times per start-up otherwise
def _package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())

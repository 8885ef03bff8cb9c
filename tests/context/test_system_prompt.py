"""build_system_prompt: block order, tools list, guidelines, custom branch, determinism
(spec 30 §10 cases 15, 20–24; spec 60 §13 case 52)."""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import pytest

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.context import (
    ContextFile,
    Skill,
    SystemPromptOptions,
    build_system_prompt,
    prompt_guidelines,
)
from tau.context.system_prompt import (
    PREFER_FILE_TOOLS,
    USE_BASH_FOR_FILES,
    SectionNameError,
    build_system_prompt_sections,
)
from tau.tools import create_coding_tools

CWD = "/work/proj"
CONTEXT_FILES = [
    ContextFile("/home/u/.tau/agent/AGENTS.md", "Global rule.\n"),
    ContextFile("/work/proj/AGENTS.md", "# Project\nUse uv & pytest.\n"),
]
SKILL = Skill(
    name="pdf-tools",
    description="Extract text & tables from PDFs",
    file_path="/work/proj/.tau/skills/pdf-tools/SKILL.md",
    base_dir="/work/proj/.tau/skills/pdf-tools",
    source="project",
)

GOLDEN = """\
You are an expert coding assistant working inside tau, a coding-agent harness. You help users by \
reading files, running commands, editing code and writing new files.

Available tools:
- read: Read file contents
- bash: Execute bash commands (ls, grep, find, etc.)
- edit: Make precise file edits with exact text replacement, several disjoint edits per call
- write: Create or overwrite files

Other custom tools may also be available, depending on the project.

Guidelines:
- Use bash for file operations such as ls, rg and find.
- Use read to examine files instead of cat or sed.
- Use edit for precise changes: oldText must match the file exactly, including whitespace.
- When changing several places in one file, make one edit call with several entries in edits.
- Edits are matched against the original file and must not overlap or nest; merge nearby changes into one edit.
- Keep each oldText as short as possible while still unique in the file.
- Use write only for new files or complete rewrites.
- Be concise in your responses.
- Show file paths clearly when working with files.

tau documentation (read it only when the user asks about tau itself, its settings, extensions, skills, \
prompt templates, themes or SDK):
- README: /opt/tau/README.md (its table lists every page)
- Topic pages, where the README's docs/... links lead: /opt/tau/docs (settings.md, configuration.md, \
models.md, providers.md, extensions.md, skills.md, prompt-templates.md, themes.md, keybindings.md, usage.md, \
packages.md, mcp.md, sdk.md, rpc.md, pi-compatibility.md, ...)
- Command-line options: run `tau --help`

<project_context>
<project_instructions path="/home/u/.tau/agent/AGENTS.md">
Global rule.
</project_instructions>
<project_instructions path="/work/proj/AGENTS.md">
# Project
Use uv & pytest.
</project_instructions>
</project_context>

The following skills give specialised instructions for particular tasks.
When a task matches a skill's description, load its file with the read tool first.
Relative paths in a skill file are relative to the skill's folder (the one holding the file).

<available_skills>
  <skill>
    <name>pdf-tools</name>
    <description>Extract text &amp; tables from PDFs</description>
    <location>/work/proj/.tau/skills/pdf-tools/SKILL.md</location>
  </skill>
</available_skills>

Current working directory: /work/proj"""


async def _never(
    tool_call_id: str, args: dict[str, Any], signal: AbortSignal | None, on_update: ToolUpdate | None
) -> AgentToolResult:
    raise AssertionError("not called")


def tool(name: str, snippet: str | None = None, guidelines: list[str] | None = None) -> AgentTool:
    return AgentTool(
        name=name,
        description=name,
        parameters={"type": "object"},
        execute=_never,
        prompt_snippet=snippet,
        prompt_guidelines=guidelines or [],
    )


def options(tools: list[AgentTool], **kwargs: object) -> SystemPromptOptions:
    kwargs.setdefault("cwd", CWD)
    kwargs.setdefault("readme_path", "/opt/tau/README.md")
    kwargs.setdefault("docs_path", "/opt/tau/docs")
    return SystemPromptOptions.for_tools(tools, **kwargs)  # type: ignore[arg-type]


def coding_prompt(**kwargs: object) -> str:
    return build_system_prompt(options(create_coding_tools(CWD), **kwargs))


def test_the_default_prompt_for_a_fixed_input_matches_the_golden_text() -> None:
    assert coding_prompt(context_files=CONTEXT_FILES, skills=[SKILL]) == GOLDEN


def test_blocks_come_in_the_seed_order() -> None:  # case 20
    prompt = coding_prompt(context_files=CONTEXT_FILES, skills=[SKILL], append_system_prompt="APPENDED TEXT")
    markers = [
        "You are an expert coding assistant",
        "Available tools:",
        "Guidelines:",
        "tau documentation",
        "APPENDED TEXT",
        "<project_context>",
        "<available_skills>",
        "Current working directory: /work/proj",
    ]
    positions = [prompt.index(marker) for marker in markers]
    assert positions == sorted(positions)
    assert prompt.endswith("\n\nCurrent working directory: /work/proj")


def test_context_files_keep_their_order_inside_project_context() -> None:
    prompt = coding_prompt(context_files=CONTEXT_FILES)
    first = prompt.index('<project_instructions path="/home/u/.tau/agent/AGENTS.md">')
    assert first < prompt.index('<project_instructions path="/work/proj/AGENTS.md">')
    assert "<project_context>" not in coding_prompt()


def test_the_same_inputs_give_byte_identical_prompts() -> None:
    first = coding_prompt(context_files=CONTEXT_FILES, skills=[SKILL])
    assert coding_prompt(context_files=list(CONTEXT_FILES), skills=[SKILL]) == first


def test_the_prompt_holds_no_date_so_sessions_on_other_days_share_it() -> None:  # issue #31
    prompt = build_system_prompt(SystemPromptOptions(cwd=CWD))
    assert datetime.date.today().isoformat() not in prompt and "date" not in prompt.lower().split("\n")[-1]


def test_the_prompt_is_its_sections_joined_and_extension_sections_come_last_in_tags() -> None:
    opts = options(create_coding_tools(CWD), skills=[SKILL])
    sections = build_system_prompt_sections(
        msgspec.structs.replace(opts, sections={"task_status": "2 open", "empty": ""})
    )
    assert list(sections) == ["preamble", "tools", "rules", "docs", "skills", "cwd", "task_status"]
    assert sections["task_status"] == "<task_status>\n2 open\n</task_status>"
    assert build_system_prompt(opts) == "\n\n".join(build_system_prompt_sections(opts).values())


@pytest.mark.parametrize("name", ["Bad", "1x", "has space", "tools", "cwd", ""])
def test_a_section_name_must_be_lowercase_and_not_one_of_taus_own(name: str) -> None:
    with pytest.raises(SectionNameError):
        build_system_prompt_sections(SystemPromptOptions(cwd=CWD, sections={name: "x"}))


def test_tools_list_shows_only_active_tools_with_a_snippet() -> None:  # cases 21, 52
    prompt = build_system_prompt(options([tool("read", "Read files"), tool("custom_thing")]))
    assert "- read: Read files" in prompt
    assert "custom_thing" not in prompt
    assert "- bash" not in prompt


def test_tools_list_says_none_when_no_tool_has_a_snippet() -> None:  # cases 21, 52
    prompt = build_system_prompt(options([tool("custom_thing")]))
    assert "Available tools:\n(none)\n" in prompt


def test_snippets_are_collapsed_to_one_line() -> None:
    prompt = build_system_prompt(options([tool("read", "  Read\n   files  ")]))
    assert "- read: Read files\n" in prompt


def test_bash_without_file_tools_gets_the_use_bash_rule() -> None:  # case 22
    guidelines = prompt_guidelines(["read", "bash"], [])
    assert USE_BASH_FOR_FILES in guidelines and PREFER_FILE_TOOLS not in guidelines


def test_bash_with_grep_gets_the_prefer_file_tools_rule() -> None:  # case 22
    guidelines = prompt_guidelines(["bash", "grep"], [])
    assert PREFER_FILE_TOOLS in guidelines and USE_BASH_FOR_FILES not in guidelines


def test_no_exploration_rule_without_bash() -> None:  # case 22
    guidelines = prompt_guidelines(["read", "grep", "find", "ls"], [])
    assert USE_BASH_FOR_FILES not in guidelines and PREFER_FILE_TOOLS not in guidelines


def test_guidelines_follow_the_active_tools_trimmed_and_deduplicated() -> None:  # cases 23, 52
    tools = [
        tool("a", "A", ["  Shared rule.  ", "Only A."]),
        tool("b", "B", ["Shared rule.", "   ", "Be concise in your responses."]),
    ]
    prompt = build_system_prompt(options(tools))
    guidelines = prompt.split("Guidelines:\n")[1].split("\n\n")[0].splitlines()
    assert guidelines == [
        "- Shared rule.",
        "- Only A.",
        "- Be concise in your responses.",
        "- Show file paths clearly when working with files.",
    ]


def test_tool_specific_guidelines_appear_only_when_the_tool_is_active() -> None:
    prompt = build_system_prompt(options(create_coding_tools(CWD)[:1]))  # read only
    assert "Use read to examine files" in prompt
    assert "Use write only" not in prompt and "oldText" not in prompt


def test_skills_index_needs_the_read_tool_and_escapes_xml() -> None:  # case 15
    without_read = build_system_prompt(options([tool("bash", "Run")], skills=[SKILL]))
    assert "<available_skills>" not in without_read
    with_read = build_system_prompt(options([tool("read", "Read")], skills=[SKILL]))
    assert "<description>Extract text &amp; tables from PDFs</description>" in with_read


def test_skills_hidden_from_the_model_leave_no_index() -> None:  # case 14 (prompt side)
    hidden = Skill("secret", "d", "/s/secret/SKILL.md", "/s/secret", "user", disable_model_invocation=True)
    prompt = build_system_prompt(options([tool("read", "Read")], skills=[hidden]))
    assert "secret" not in prompt and "<available_skills>" not in prompt


def test_custom_prompt_replaces_role_tools_guidelines_and_docs() -> None:  # case 24
    prompt = coding_prompt(
        custom_prompt="You are a pirate.",
        append_system_prompt="Say arr.",
        context_files=CONTEXT_FILES,
        skills=[SKILL],
    )
    assert prompt.startswith("You are a pirate.\n\nSay arr.\n\n<project_context>")
    for absent in ("expert coding assistant", "Available tools:", "Guidelines:", "tau documentation"):
        assert absent not in prompt
    assert "<available_skills>" in prompt
    assert prompt.endswith("\n\nCurrent working directory: /work/proj")


def test_custom_prompt_lists_skills_only_when_read_is_active_or_tools_are_unknown() -> None:  # case 24
    no_read = build_system_prompt(options([tool("bash", "Run")], custom_prompt="P", skills=[SKILL]))
    assert "<available_skills>" not in no_read
    unknown = build_system_prompt(SystemPromptOptions(cwd=CWD, custom_prompt="P", skills=[SKILL]))
    assert "<available_skills>" in unknown


def test_windows_cwd_is_shown_with_forward_slashes() -> None:
    prompt = build_system_prompt(SystemPromptOptions(cwd="C:\\work\\proj"))
    assert prompt.endswith("Current working directory: C:/work/proj")

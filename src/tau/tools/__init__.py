"""tau.tools: the built-in tools a coding agent works with.

    from tau.tools import create_coding_tools, SpillDirectory

    with SpillDirectory() as spill:
        tools = create_coding_tools("/path/to/project", spill=spill)   # read, bash, edit, write

Every factory takes the working directory and, optionally, an operations object replacing its file
or process access (to run the same tools over SSH or in a container). Output is budgeted to 2000
lines / 50 KB per result; bash spills full output to files in the tool set's spill folder.
"""

from __future__ import annotations

from tau._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from tau.agent.tool import AgentTool
    from tau.tools.bash import SessionEnvironment, SpawnContext, SpawnHook, create_bash_tool
    from tau.tools.edit import create_edit_tool, plan_edit, prepare_edit_arguments
    from tau.tools.edit_diff import EditDiff, generate_diff
    from tau.tools.edit_match import Replacement, apply_replacements, normalize_for_match
    from tau.tools.errors import ToolAborted, ToolError
    from tau.tools.find import LocalFindOperations, create_find_tool
    from tau.tools.grep import create_grep_tool
    from tau.tools.images import ImageResizer, ResizedImage
    from tau.tools.ls import create_ls_tool
    from tau.tools.operations import (
        BashOperations,
        CommandAborted,
        CommandTimedOut,
        EditOperations,
        FindOperations,
        GrepOperations,
        LocalEditOperations,
        LocalFileOperations,
        LocalGrepOperations,
        LsOperations,
        ReadOperations,
        WriteOperations,
    )
    from tau.tools.output_spill import SpillDirectory, default_spill_directory
    from tau.tools.paths import expand_path, resolve_read_path, resolve_to_cwd
    from tau.tools.read import create_read_tool
    from tau.tools.ripgrep import find_rg
    from tau.tools.shell_exec import LocalBashOperations
    from tau.tools.terminal_text import sanitize_terminal_output
    from tau.tools.truncate import (
        DEFAULT_MAX_BYTES,
        DEFAULT_MAX_LINES,
        GREP_MAX_LINE_LENGTH,
        TruncationResult,
        format_size,
        truncate_head,
        truncate_line,
        truncate_tail,
    )
    from tau.tools.write import create_write_tool

CODING_TOOL_NAMES = ("read", "bash", "edit", "write")
READ_ONLY_TOOL_NAMES = ("read", "grep", "find", "ls")
ALL_TOOL_NAMES = ("read", "bash", "edit", "write", "grep", "find", "ls")


def create_coding_tools(cwd: str, *, spill: SpillDirectory | None = None) -> list[AgentTool]:
    """The default active set: read, bash, edit, write."""
    from tau.tools.bash import create_bash_tool
    from tau.tools.edit import create_edit_tool
    from tau.tools.read import create_read_tool
    from tau.tools.write import create_write_tool

    return [
        create_read_tool(cwd),
        create_bash_tool(cwd, spill=spill),
        create_edit_tool(cwd),
        create_write_tool(cwd),
    ]


def create_read_only_tools(cwd: str) -> list[AgentTool]:
    """Tools that cannot change anything: read, grep, find, ls."""
    from tau.tools.find import create_find_tool
    from tau.tools.grep import create_grep_tool
    from tau.tools.ls import create_ls_tool
    from tau.tools.read import create_read_tool

    return [create_read_tool(cwd), create_grep_tool(cwd), create_find_tool(cwd), create_ls_tool(cwd)]


def create_all_tools(cwd: str, *, spill: SpillDirectory | None = None) -> list[AgentTool]:
    """Every built-in tool: read, bash, edit, write, grep, find, ls."""
    from tau.tools.find import create_find_tool
    from tau.tools.grep import create_grep_tool
    from tau.tools.ls import create_ls_tool

    return [
        *create_coding_tools(cwd, spill=spill),
        create_grep_tool(cwd),
        create_find_tool(cwd),
        create_ls_tool(cwd),
    ]


__all__ = [
    "ALL_TOOL_NAMES",
    "CODING_TOOL_NAMES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "READ_ONLY_TOOL_NAMES",
    "BashOperations",
    "CommandAborted",
    "CommandTimedOut",
    "EditDiff",
    "EditOperations",
    "FindOperations",
    "GrepOperations",
    "ImageResizer",
    "LocalBashOperations",
    "LocalEditOperations",
    "LocalFileOperations",
    "LocalFindOperations",
    "LocalGrepOperations",
    "LsOperations",
    "ReadOperations",
    "Replacement",
    "ResizedImage",
    "SessionEnvironment",
    "SpawnContext",
    "SpawnHook",
    "SpillDirectory",
    "ToolAborted",
    "ToolError",
    "TruncationResult",
    "WriteOperations",
    "apply_replacements",
    "create_all_tools",
    "create_bash_tool",
    "create_coding_tools",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_only_tools",
    "create_read_tool",
    "create_write_tool",
    "default_spill_directory",
    "expand_path",
    "find_rg",
    "format_size",
    "generate_diff",
    "normalize_for_match",
    "plan_edit",
    "prepare_edit_arguments",
    "resolve_read_path",
    "resolve_to_cwd",
    "sanitize_terminal_output",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]

# Each name is imported from its module on first access: importing the package (as every module
# under it does) loads no tool, and a run loads only the tools it makes.
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "SessionEnvironment": "bash",
        "SpawnContext": "bash",
        "SpawnHook": "bash",
        "create_bash_tool": "bash",
        "create_edit_tool": "edit",
        "plan_edit": "edit",
        "prepare_edit_arguments": "edit",
        "EditDiff": "edit_diff",
        "generate_diff": "edit_diff",
        "Replacement": "edit_match",
        "apply_replacements": "edit_match",
        "normalize_for_match": "edit_match",
        "ToolAborted": "errors",
        "ToolError": "errors",
        "LocalFindOperations": "find",
        "create_find_tool": "find",
        "create_grep_tool": "grep",
        "ImageResizer": "images",
        "ResizedImage": "images",
        "create_ls_tool": "ls",
        "BashOperations": "operations",
        "CommandAborted": "operations",
        "CommandTimedOut": "operations",
        "EditOperations": "operations",
        "FindOperations": "operations",
        "GrepOperations": "operations",
        "LocalEditOperations": "operations",
        "LocalFileOperations": "operations",
        "LocalGrepOperations": "operations",
        "LsOperations": "operations",
        "ReadOperations": "operations",
        "WriteOperations": "operations",
        "SpillDirectory": "output_spill",
        "default_spill_directory": "output_spill",
        "expand_path": "paths",
        "resolve_read_path": "paths",
        "resolve_to_cwd": "paths",
        "create_read_tool": "read",
        "find_rg": "ripgrep",
        "LocalBashOperations": "shell_exec",
        "sanitize_terminal_output": "terminal_text",
        "DEFAULT_MAX_BYTES": "truncate",
        "DEFAULT_MAX_LINES": "truncate",
        "GREP_MAX_LINE_LENGTH": "truncate",
        "TruncationResult": "truncate",
        "format_size": "truncate",
        "truncate_head": "truncate",
        "truncate_line": "truncate",
        "truncate_tail": "truncate",
        "create_write_tool": "write",
    },
)

"""The ``grep`` tool: ripgrep's matches as ``path:line: text``, with optional context lines.

Beyond pi: a basename glob (``*.ts``) is passed as a ripgrep file type, which keeps .gitignore in
force (a ``--glob`` whitelist overrides ignore files in ripgrep); ``.git`` is never searched;
.gitignore files apply outside a git repository too (as find's do in pi 0.73); and
when rg reports errors (an unreadable file, say) alongside matches, the matches are kept and the
errors noted instead of failing the call.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.tools.errors import ToolError, raise_if_aborted
from tau.tools.listing_output import ListingOutput
from tau.tools.operations import GrepOperations, LocalGrepOperations, NotRegularFileError
from tau.tools.paths import resolve_to_cwd
from tau.tools.ripgrep import require_rg, run_rg
from tau.tools.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    truncate_line,
)

DEFAULT_GREP_LIMIT = 100

GREP_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {
            "type": "number",
            "description": f"Maximum number of matches to return (default: {DEFAULT_GREP_LIMIT})",
        },
    },
    "required": ["pattern"],
}

GREP_DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_GREP_LIMIT} matches or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first). Long lines are truncated to "
    f"{GREP_MAX_LINE_LENGTH} chars."
)


def _json_text(field: Any) -> str:
    """rg's ``{"text": ...}`` or ``{"bytes": base64}`` (for data that is not UTF-8)."""
    if not isinstance(field, dict):
        return ""
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field.get("bytes", "")).decode("utf-8", "replace")


def _glob_args(glob: str) -> list[str]:
    if "/" in glob or ":" in glob or glob.startswith("!"):
        return ["--glob", glob]
    return ["--type-add", f"tauglob:{glob}", "--type", "tauglob"]


def create_grep_tool(
    cwd: str, operations: GrepOperations | None = None, *, bin_dir: str | None = None
) -> AgentTool:
    """The grep tool for ``cwd``."""
    ops: GrepOperations = operations or LocalGrepOperations()

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        rg = require_rg(bin_dir)
        pattern = str(args["pattern"])
        root = resolve_to_cwd(str(args.get("path") or "."), cwd)
        context = max(0, int(args.get("context") or 0))
        limit = max(1, int(args.get("limit") or DEFAULT_GREP_LIMIT))
        try:
            is_dir = await ops.is_directory(root)
        except NotRegularFileError as error:
            raise ToolError(f"Cannot search {root}: {error}") from error
        except OSError as error:
            raise ToolError(f"Path not found: {root}") from error

        argv = [
            rg,
            "--json",
            "--line-number",
            "--color=never",
            "--hidden",
            "--no-require-git",
            "--glob",
            "!.git",
        ]
        if args.get("ignoreCase"):
            argv.append("--ignore-case")
        if args.get("literal"):
            argv.append("--fixed-strings")
        if args.get("glob"):
            argv += _glob_args(str(args["glob"]))
        argv += ["--", pattern, root]

        matches: list[tuple[str, int, str]] = []  # (file path, line number, line text)

        def on_line(raw: bytes) -> bool:
            if b'"type":"match"' not in raw[:24]:
                return True
            event = json.loads(raw)
            data = event.get("data") or {}
            matches.append(
                (
                    _json_text(data.get("path")),
                    int(data.get("line_number") or 0),
                    _json_text(data.get("lines")),
                )
            )
            return len(matches) < limit

        outcome = await run_rg(argv, root if is_dir else os.path.dirname(root) or ".", on_line, signal)
        rg_failed = outcome.exit_code not in (0, 1) and not outcome.stopped
        if rg_failed and not matches:
            raise ToolError(outcome.stderr or f"ripgrep exited with code {outcome.exit_code}")
        if not matches:
            return text_result("No matches found")

        def display(path: str) -> str:
            if not is_dir:
                return os.path.basename(path)
            relative = os.path.relpath(path, root)
            return path if relative.startswith("..") else relative.replace(os.sep, "/")

        file_lines: dict[str, list[str] | None] = {}
        lines_cut = False
        out: list[str] = []

        def emit(name: str, number: int, text: str, separator: str) -> None:
            nonlocal lines_cut
            shown, cut = truncate_line(text)
            lines_cut = lines_cut or cut
            out.append(f"{name}{separator}{number}{separator} {shown}")

        from tau.tools.edit_match import to_lf  # imported with context lines only, not at start-up

        for path, number, text in matches:
            name = display(path)
            if context == 0:
                emit(name, number, text.rstrip("\r\n"), ":")
                continue
            if path not in file_lines:
                try:
                    file_lines[path] = to_lf(await ops.read_file(path)).split("\n")
                except Exception:
                    file_lines[path] = None
            lines = file_lines[path]
            if lines is None:
                out.append(f"{name}:{number}: (unable to read file)")
                continue
            for n in range(max(1, number - context), min(len(lines), number + context) + 1):
                emit(name, n, lines[n - 1], ":" if n == number else "-")

        limit_notice = f"{limit} matches limit reached. Use limit={limit * 2} for more, or refine pattern"
        output = ListingOutput(
            out, limit_reached=(limit_notice, "matchLimitReached", limit) if outcome.stopped else None
        )
        if lines_cut:
            output.note(
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",
                "linesTruncated",
                True,
            )
        if rg_failed:
            output.note(
                f"ripgrep reported errors: {outcome.stderr.splitlines()[0] if outcome.stderr else ''}"
            )
        return output.result()

    return AgentTool(
        name="grep",
        label="grep",
        description=GREP_DESCRIPTION,
        parameters=GREP_PARAMETERS,
        execute=execute,
        prompt_snippet="Search file contents for patterns (respects .gitignore)",
        prompt_guidelines=[],
    )

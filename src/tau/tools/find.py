"""The ``find`` tool: files (and folders) whose names match a glob, .gitignore respected.

pi runs fd; tau lists files with ``rg --files`` (the ripgrep wheel is a dependency, fd is not) and
matches the glob itself with fd's rules: a pattern without ``/`` matches the file name, one with
``/`` matches the full path (as ``**/<pattern>``). Folders are derived from the files listed, so an
empty or wholly ignored folder is not reported. Beyond pi: results are sorted by path, and
``node_modules`` and ``.git`` are always skipped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from msgspec import Struct

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.tools.errors import ToolError, raise_if_aborted
from tau.tools.glob_match import compile_glob
from tau.tools.listing_output import ListingOutput
from tau.tools.operations import FindOperations
from tau.tools.paths import resolve_to_cwd
from tau.tools.ripgrep import require_rg, run_rg
from tau.tools.truncate import DEFAULT_MAX_BYTES

DEFAULT_FIND_LIMIT = 1000
DEFAULT_IGNORE = ("**/node_modules/**", "**/.git/**")

FIND_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {
            "type": "number",
            "description": f"Maximum number of results (default: {DEFAULT_FIND_LIMIT})",
        },
    },
    "required": ["pattern"],
}

FIND_DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search directory. "
    f"Respects .gitignore. Output is truncated to {DEFAULT_FIND_LIMIT} results or "
    f"{DEFAULT_MAX_BYTES // 1024}KB (whichever is hit first)."
)


def _full_path_pattern(pattern: str) -> str:
    if pattern.startswith(("/", "**/")) or pattern == "**":
        return pattern
    return "**/" + pattern


def _rg_excludes(ignore: Sequence[str]) -> list[str]:
    args: list[str] = []
    for pattern in ignore:
        args += ["--glob", "!" + pattern]
        if pattern.endswith("/**"):  # also prune the folder itself, so rg never walks into it
            args += ["--glob", "!" + pattern[: -len("/**")]]
    return args


class LocalFindOperations(Struct, dict=True):
    """Walks local folders with ``rg --files``; ``bin_dir`` is searched first for rg."""

    bin_dir: str | None = None
    signal: AbortSignal | None = None

    async def exists(self, path: str) -> bool:
        return os.path.exists(path)

    async def glob(self, pattern: str, cwd: str, *, ignore: Sequence[str], limit: int) -> list[str]:
        full_path = "/" in pattern
        matcher = compile_glob(_full_path_pattern(pattern) if full_path else pattern)
        root = cwd.rstrip("/") or "/"
        if not os.path.isdir(root):
            raise ToolError(f"Not a directory: {root}; find searches folders (use ls or read for a file)")
        prefix = "/" if root == "/" else root + "/"

        def matches(relative: str) -> bool:
            subject = prefix + relative if full_path else relative.rsplit("/", 1)[-1]
            return matcher.fullmatch(subject) is not None

        results: list[str] = []
        seen_dirs: set[str] = set()

        def on_line(raw: bytes) -> bool:
            relative = raw.decode("utf-8", "replace").rstrip("\r").removeprefix("./")
            if not relative:
                return True
            parts = relative.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(parts[:depth])
                if folder not in seen_dirs:
                    seen_dirs.add(folder)
                    if matches(folder):
                        results.append(folder + "/")
            if matches(relative):
                results.append(relative)
            return len(results) < limit

        argv = [
            require_rg(self.bin_dir),
            "--files",
            "--hidden",
            "--no-require-git",
            "--color=never",
            "--sort=path",
            *_rg_excludes(ignore),
        ]
        outcome = await run_rg(argv, root, on_line, self.signal)
        if outcome.exit_code not in (0, 1) and not outcome.stopped and not results:
            raise ToolError(outcome.stderr or f"rg --files exited with code {outcome.exit_code}")
        return results[:limit]


def _relative(path: str, root: str) -> str:
    folder = path.endswith("/")
    path = path.rstrip("/")
    if os.path.isabs(path):
        path = os.path.relpath(path, root)
    path = path.replace(os.sep, "/")
    return path + "/" if folder else path


def create_find_tool(
    cwd: str, operations: FindOperations | None = None, *, bin_dir: str | None = None
) -> AgentTool:
    """The find tool for ``cwd``."""

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        pattern = str(args["pattern"])
        root = resolve_to_cwd(str(args.get("path") or "."), cwd)
        limit = max(1, int(args.get("limit") or DEFAULT_FIND_LIMIT))
        ops: FindOperations = operations or LocalFindOperations(bin_dir=bin_dir, signal=signal)
        if not await ops.exists(root):
            raise ToolError(f"Path not found: {root}")
        found = await ops.glob(pattern, root, ignore=DEFAULT_IGNORE, limit=limit)
        raise_if_aborted(signal)
        if not found:
            return text_result("No files found matching pattern")

        limit_notice = f"{limit} results limit reached. Use limit={limit * 2} for more, or refine pattern"
        output = ListingOutput(
            [_relative(p, root) for p in found],
            limit_reached=(limit_notice, "resultLimitReached", limit) if len(found) >= limit else None,
        )
        return output.result()

    return AgentTool(
        name="find",
        label="find",
        description=FIND_DESCRIPTION,
        parameters=FIND_PARAMETERS,
        execute=execute,
        prompt_snippet="Find files by glob pattern (respects .gitignore)",
        prompt_guidelines=[],
    )

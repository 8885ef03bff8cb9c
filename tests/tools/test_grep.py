"""Tests for the grep tool (real ripgrep over real files)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.tools import ToolError, create_grep_tool


def make_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


async def test_a_single_file_search_prints_file_line_and_text(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"src/a.txt": "one\nneedle here\nthree\n"})
    result = await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "path": "src/a.txt"})
    assert text_of(result) == "a.txt:2: needle here"


async def test_a_directory_search_prints_paths_relative_to_the_root(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"src/a.txt": "needle\n", "src/deep/b.txt": "x\nneedle\n"})
    text = text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "path": "src"}))
    assert sorted(text.split("\n")) == ["a.txt:1: needle", "deep/b.txt:2: needle"]


async def test_context_lines_surround_the_match_and_the_limit_is_reported(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"f.txt": "before\nmatch one\nafter\nfiller\nmatch two\nend\n"})
    result = await run(
        create_grep_tool(str(tmp_path)), {"pattern": "match", "path": "f.txt", "context": 1, "limit": 1}
    )
    body, note = text_of(result).split("\n\n")
    assert body.split("\n") == ["f.txt-1- before", "f.txt:2: match one", "f.txt-3- after"]
    assert "1 matches" in note and "limit=2" in note
    assert "match two" not in text_of(result)
    assert result.details["matchLimitReached"] == 1


async def test_a_pattern_starting_with_a_dash_is_a_pattern_not_a_flag(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"f.txt": "use --force here\n"})
    assert (
        text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "--force"}))
        == "f.txt:1: use --force here"
    )


async def test_literal_mode_matches_regex_metacharacters_literally(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"f.txt": "a.b\naxb\n"})
    tool = create_grep_tool(str(tmp_path))
    assert text_of(await run(tool, {"pattern": "a.b", "literal": True})) == "f.txt:1: a.b"
    assert len(text_of(await run(tool, {"pattern": "a.b"})).split("\n")) == 2


async def test_ignore_case_finds_other_cases(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, {"f.txt": "NEEDLE\n"})
    assert text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "ignoreCase": True})) == (
        "f.txt:1: NEEDLE"
    )


async def test_lines_over_500_characters_are_cut_with_a_notice(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"f.txt": "needle" + "z" * 1000 + "\n"})
    result = await run(create_grep_tool(str(tmp_path)), {"pattern": "needle"})
    line, note = text_of(result).split("\n\n")
    assert line.endswith("... [truncated]") and len(line) == len("f.txt:1: ") + 500 + len("... [truncated]")
    assert "500" in note and result.details["linesTruncated"] is True


async def test_no_match_says_so(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, {"f.txt": "hay\n"})
    assert text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "needle"})) == "No matches found"


async def test_an_invalid_regex_is_an_error_from_ripgrep(tmp_path: Path, run: Any) -> None:
    make_tree(tmp_path, {"f.txt": "hay\n"})
    with pytest.raises(ToolError, match="regex"):
        await run(create_grep_tool(str(tmp_path)), {"pattern": "(unclosed"})


async def test_a_missing_path_is_an_error(tmp_path: Path, run: Any) -> None:
    with pytest.raises(ToolError, match="Path not found"):
        await run(create_grep_tool(str(tmp_path)), {"pattern": "x", "path": "nope"})


async def test_gitignored_files_and_the_git_folder_are_skipped_but_hidden_files_are_searched(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(
        tmp_path,
        {
            ".git/config": "needle\n",
            ".gitignore": "ignored.txt\n",
            "ignored.txt": "needle\n",
            ".hidden": "needle\n",
        },
    )
    assert text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "needle"})) == ".hidden:1: needle"


async def test_a_basename_glob_filters_files_without_bringing_back_ignored_ones(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(
        tmp_path,
        {
            ".git/HEAD": "",
            ".gitignore": "build/\n",
            "a.ts": "needle\n",
            "a.js": "needle\n",
            "build/b.ts": "needle\n",
        },
    )
    assert text_of(await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "glob": "*.ts"})) == (
        "a.ts:1: needle"
    )


async def test_a_path_glob_filters_by_folder(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    make_tree(tmp_path, {"src/x/a.ts": "needle\n", "lib/a.ts": "needle\n"})
    result = await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "glob": "src/**/*.ts"})
    assert text_of(result) == "src/x/a.ts:1: needle"


async def test_output_over_50kb_is_cut_with_a_notice(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    make_tree(tmp_path, {"f.txt": ("needle " + "w" * 480 + "\n") * 150})
    result = await run(create_grep_tool(str(tmp_path)), {"pattern": "needle", "limit": 1000})
    assert "50.0KB limit reached" in text_of(result)
    assert result.details["truncation"]["truncatedBy"] == "bytes"

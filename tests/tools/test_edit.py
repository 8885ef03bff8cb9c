"""Tests for the edit tool: matching, uniqueness, line endings, BOM, legacy arguments, the queue."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.tools import ToolError, create_edit_tool, prepare_edit_arguments


def edit_args(path: str, *pairs: tuple[str, str]) -> dict[str, Any]:
    return {"path": path, "edits": [{"oldText": old, "newText": new} for old, new in pairs]}


async def test_a_single_replacement_applies_and_the_diff_shows_the_new_line(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    result = await run(create_edit_tool(str(tmp_path)), edit_args("f.py", ("b = 2", "b = 20")))
    assert (tmp_path / "f.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert "1 block" in text_of(result) and "f.py" in text_of(result)
    assert "+2 b = 20" in result.details["diff"] and "-2 b = 2" in result.details["diff"]
    assert result.details["firstChangedLine"] == 2


async def test_absent_text_is_a_not_found_error(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    with pytest.raises(ToolError, match="Could not find"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("bye", "x")))


async def test_text_present_three_times_is_an_error_counting_them(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError, match="Found 3 occurrences"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("x = 1", "y")))
    assert (tmp_path / "f.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


@pytest.mark.parametrize(
    ("in_file", "old_text"),
    [
        ("value = 1   \nnext\n", "value = 1\nnext"),  # trailing whitespace
        ("say(\u2018hi\u2019)\n", "say('hi')"),  # smart single quotes
        ("say(\u201chi\u201d)\n", 'say("hi")'),  # smart double quotes
        ("a \u2014 b \u2013 c\n", "a - b - c"),  # em and en dashes
        ("x\u00a0=\u00a01\n", "x = 1"),  # no-break spaces
        ("key\uff1a value\uff0c more\n", "key: value, more"),  # full-width punctuation
    ],
)
async def test_typographic_variants_in_the_file_match_ascii_old_text(
    tmp_path: Path, run: Any, in_file: str, old_text: str
) -> None:
    (tmp_path / "f.txt").write_text(in_file)
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", (old_text, "REPLACED")))
    assert "REPLACED" in (tmp_path / "f.txt").read_text()


async def test_an_exact_match_leaves_the_rest_of_the_file_byte_identical(tmp_path: Path, run: Any) -> None:
    original = "keep   \nquote \u2018x\u2019 \u2014 dash\ntarget\n"
    (tmp_path / "f.txt").write_text(original)
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("target", "done")))
    assert (tmp_path / "f.txt").read_text() == original.replace("target", "done")


async def test_a_fuzzy_match_normalises_the_whole_file(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("keep   \nquote \u2018x\u2019\ntarget  \n")
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("target\n", "done\n")))
    assert (tmp_path / "f.txt").read_text() == "keep\nquote 'x'\ndone\n"


async def test_text_duplicated_only_after_normalisation_is_ambiguous(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("a = 'x'\nb = \u2018x\u2019\n")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("'x'", "'y'")))


async def test_lf_old_text_matches_a_crlf_file_and_the_file_stays_crlf(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("one\ntwo", "uno\ndos")))
    assert (tmp_path / "f.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_an_lf_file_stays_lf(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\ntwo\n")
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("one\r\ntwo", "uno\r\ndos")))
    assert (tmp_path / "f.txt").read_bytes() == b"uno\ndos\n"


async def test_crlf_and_lf_spellings_of_the_same_text_count_as_duplicates(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\nmiddle\na\nb\n")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("a\nb", "c")))


async def test_a_utf8_bom_is_preserved(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"\xef\xbb\xbfhello\n")
    await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("hello", "bye")))
    assert (tmp_path / "f.txt").read_bytes() == b"\xef\xbb\xbfbye\n"


async def test_several_disjoint_edits_apply_against_the_original(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\ngamma\n")
    # The second edit's oldText only exists in the original, not after the first edit.
    result = await run(
        create_edit_tool(str(tmp_path)), edit_args("f.txt", ("alpha", "beta2"), ("beta\n", "BETA\n"))
    )
    assert (tmp_path / "f.txt").read_text() == "beta2\nBETA\ngamma\n"
    assert "2 blocks" in text_of(result)


async def test_overlapping_edits_are_an_error_naming_both(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("one two three\n")
    with pytest.raises(ToolError, match=r"edits\[0\] and edits\[1\] overlap"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("one two", "x"), ("two three", "y")))


async def test_empty_old_text_is_an_error(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ToolError, match="empty"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("", "y")))
    with pytest.raises(ToolError, match=r"edits\[1\]"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("x", "y"), ("", "z")))


async def test_no_edits_at_all_is_an_error(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(ToolError, match="at least one replacement"):
        await run(create_edit_tool(str(tmp_path)), {"path": "f.txt"})


async def test_legacy_top_level_old_and_new_text_are_accepted(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    await run(create_edit_tool(str(tmp_path)), {"path": "f.txt", "oldText": "hello", "newText": "bye"})
    assert (tmp_path / "f.txt").read_text() == "bye\n"


async def test_edits_sent_as_a_json_string_are_accepted(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("hello\n")
    args = {"path": "f.txt", "edits": '[{"oldText": "hello", "newText": "bye"}]'}
    await run(create_edit_tool(str(tmp_path)), args)
    assert (tmp_path / "f.txt").read_text() == "bye\n"


def test_prepare_arguments_appends_the_legacy_pair_after_the_edits_list() -> None:
    prepared = prepare_edit_arguments(
        {"path": "p", "edits": [{"oldText": "a", "newText": "b"}], "oldText": "c", "newText": "d"}
    )
    assert prepared == {
        "path": "p",
        "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}],
    }


def test_prepare_arguments_leaves_an_unparseable_string_for_validation_to_reject() -> None:
    assert prepare_edit_arguments({"path": "p", "edits": "not json"})["edits"] == "not json"


async def test_a_replacement_that_changes_nothing_is_an_error_and_the_file_is_untouched(
    tmp_path: Path, run: Any
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("same\n")
    before = target.stat().st_mtime_ns
    with pytest.raises(ToolError, match="No changes"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("same", "same")))
    assert target.stat().st_mtime_ns == before


async def test_a_missing_file_is_an_error_with_the_path_and_enoent(tmp_path: Path, run: Any) -> None:
    with pytest.raises(ToolError, match="ENOENT") as caught:
        await run(create_edit_tool(str(tmp_path)), edit_args("nope.txt", ("a", "b")))
    assert "nope.txt" in str(caught.value)


async def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_bytes(b"caf\xe9 au lait\n")
    with pytest.raises(ToolError, match="UTF-8"):
        await run(create_edit_tool(str(tmp_path)), edit_args("f.txt", ("au", "with")))


async def test_parallel_edits_of_one_file_both_apply(tmp_path: Path, run: Any) -> None:
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(20)))
    tool = create_edit_tool(str(tmp_path))
    await asyncio.gather(*(run(tool, edit_args("f.txt", (f"line {i}\n", f"LINE {i}\n"))) for i in range(20)))
    assert (tmp_path / "f.txt").read_text() == "".join(f"LINE {i}\n" for i in range(20))

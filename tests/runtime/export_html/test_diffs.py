"""Edit diffs of the HTML export: the tool's numbered diff coloured, or one computed from the call."""

from __future__ import annotations

from tau.export.diffs import diff_from_arguments, render_diff
from tau.tools.edit_diff import generate_diff


def test_a_recorded_diff_is_coloured_line_by_line_and_escaped() -> None:
    diff = generate_diff("a\n<b>\nc\n", "a\n<B>\nc\n").diff
    html = render_diff(diff)
    assert '<span class="d-del">-2 &lt;b&gt;\n</span>' in html
    assert '<span class="d-add">+2 &lt;B&gt;\n</span>' in html
    assert '<span class="d-ctx"> 1 a\n</span>' in html


def test_a_diff_is_computed_from_the_edits_of_a_call() -> None:
    diff = diff_from_arguments({"path": "x", "edits": [{"oldText": "one\ntwo", "newText": "one\n2"}]})
    assert diff.splitlines() == [" one", "-two", "+2"]


def test_legacy_and_string_encoded_edits_are_understood() -> None:
    legacy = diff_from_arguments({"path": "x", "oldText": "a", "newText": "b"})
    encoded = diff_from_arguments({"path": "x", "edits": '[{"oldText": "a", "newText": "b"}]'})
    assert legacy.splitlines() == encoded.splitlines() == ["-a", "+b"]


def test_several_edits_are_separated_and_junk_is_ignored() -> None:
    diff = diff_from_arguments(
        {"edits": [{"oldText": "a", "newText": "b"}, "junk", {"oldText": "c", "newText": "d"}]}
    )
    assert diff.splitlines() == ["-a", "+b", "  ...", "-c", "+d"]
    assert diff_from_arguments({"edits": 5}) == ""

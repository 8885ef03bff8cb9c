"""Tool calls and results in the HTML export: each built-in tool's summary, highlighting, diffs,
long outputs, and escaping of arguments and outputs."""

from __future__ import annotations

from export_session import PAYLOAD, PNG, audit_html

from tau.ai.types import ImageContent, TextContent, ToolCall, ToolResultMessage
from tau.export.markup import CodeHighlighter
from tau.export.tool_html import ToolHtml, line_count, strip_ansi

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def renderer(*pairs: tuple[ToolCall, ToolResultMessage | None]) -> ToolHtml:
    calls = {call.id: call for call, _ in pairs}
    results = {call.id: result for call, result in pairs if result is not None}
    return ToolHtml(CodeHighlighter(), calls, results)


def result(call: ToolCall, text: str, **fields: object) -> ToolResultMessage:
    return ToolResultMessage(call.id, call.name, [TextContent(text)], **fields)  # type: ignore[arg-type]


def test_each_built_in_call_has_a_one_line_summary() -> None:
    calls = [
        ToolCall("1", "bash", {"command": "ls -la"}),
        ToolCall("2", "read", {"path": "a.py", "offset": 10, "limit": 5}),
        ToolCall("3", "grep", {"pattern": "def", "path": "src", "glob": "*.py", "ignoreCase": True}),
        ToolCall("4", "find", {"pattern": "*.md"}),
        ToolCall("5", "ls", {}),
    ]
    tools = renderer(*((c, None) for c in calls))
    html = [tools.call(c) for c in calls]
    assert "$ ls -la" in html[0]
    assert "a.py:10-14" in html[1]
    assert "/def/i in src (*.py)" in html[2]
    assert "*.md in ." in html[3]
    assert '<span class="tool-target">.</span>' in html[4]


def test_a_read_result_is_highlighted_for_the_file_read() -> None:
    call = ToolCall("r", "read", {"path": "src/app.py"})
    html = renderer((call, None)).result(result(call, "def f():\n    pass\n"))
    assert "<span class=k>def</span>" in html and "src/app.py" in html


def test_a_write_call_shows_the_content_highlighted_by_extension() -> None:
    call = ToolCall("w", "write", {"path": "x.ts", "content": "const a = 1;\n"})
    html = renderer((call, None)).call(call)
    assert "<span class=k>const</span>" in html and "(1 line)" in html


def test_an_edit_call_shows_the_diff_its_result_recorded() -> None:
    call = ToolCall("e", "edit", {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]})
    done = result(call, "ok", details={"diff": "-3 old line\n+3 new line", "firstChangedLine": 3})
    html = renderer((call, done)).call(call)
    assert '<span class="d-del">-3 old line' in html and '<span class="d-add">+3 new line' in html


def test_an_edit_without_a_result_shows_the_diff_of_its_arguments() -> None:
    call = ToolCall("e", "edit", {"path": "a.py", "edits": [{"oldText": "x", "newText": "y"}]})
    html = renderer((call, None)).call(call)
    assert '<span class="d-del">-x' in html and '<span class="d-add">+y' in html


def test_bash_output_loses_terminal_escapes_and_long_output_can_be_expanded() -> None:
    call = ToolCall("b", "bash", {"command": "make"})
    output = "\x1b[31mred\x1b[0m\n" + "line\n" * 30
    html = renderer((call, None)).result(result(call, output))
    assert "\x1b" not in html and "red\n" in html
    assert '<div class="output long">' in html and "Show all 31 lines" in html


def test_errors_images_and_unknown_tools() -> None:
    call = ToolCall("s", "shot", {"target": PAYLOAD})
    shot = ToolResultMessage("s", "shot", [TextContent("bad"), ImageContent(PNG, "image/png")], is_error=True)
    tools = renderer((call, shot))
    call_html, result_html = tools.call(call), tools.result(shot)
    assert ESCAPED in call_html and "arguments" in call_html
    assert "status-error" in result_html
    assert audit_html(result_html).image_sources == [f"data:image/png;base64,{PNG}"]


def test_script_in_tool_names_arguments_paths_and_outputs_is_escaped() -> None:
    calls = [
        ToolCall("1", PAYLOAD, {"x": PAYLOAD}),
        ToolCall("2", "read", {"path": f"{PAYLOAD}.py"}),
        ToolCall("3", "bash", {"command": PAYLOAD}),
        ToolCall("4", "edit", {"path": PAYLOAD, "edits": [{"oldText": PAYLOAD, "newText": "x"}]}),
        ToolCall("5", "write", {"path": f"{PAYLOAD}.html", "content": PAYLOAD}),
        ToolCall("6", "grep", {"pattern": PAYLOAD, "path": PAYLOAD, "glob": PAYLOAD}),
    ]
    tools = renderer(*((c, result(c, PAYLOAD)) for c in calls))
    for call in calls:
        for html in (tools.call(call), tools.result(result(call, PAYLOAD))):
            audit = audit_html(html)
            assert audit.scripts == 0 and audit.event_handlers == [] and "img" not in audit.tags, html
            assert "&lt;script&gt;" in html


def test_helpers() -> None:
    assert strip_ansi("\x1b]0;title\x07a\x1b[1;32mb") == "ab"
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb")] == [0, 1, 1, 2]

"""Tests for BlockRenderer: every kind of chat block, extension renderers, width and safety."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from tau.ai.types import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.extensions.types import RenderOptions
from tau.modes.interactive.render.blocks import BlockRenderer
from tau.modes.interactive.render.markdown import render_markdown
from tau.modes.interactive.render.theme import DARK
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)
from tau.tools.edit_diff import generate_diff

Plain = Callable[[str], str]


def rgb(colour: str, *, background: bool = False) -> str:
    """The truecolor SGR parameters of ``#rrggbb``."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"{48 if background else 38};2;{red};{green};{blue}"


def result(
    text: str, *, is_error: bool = False, details: Any = None, name: str = "read"
) -> ToolResultMessage:
    return ToolResultMessage("call-1", name, [TextContent(text)], is_error=is_error, details=details)


def numbered(count: int) -> str:
    return "\n".join(f"line {i}" for i in range(1, count + 1))


@pytest.fixture
def renderer() -> BlockRenderer:
    return BlockRenderer(DARK, 60)


def test_a_user_message_is_markdown_on_the_user_background(renderer: BlockRenderer, plain: Plain) -> None:
    out = renderer.user(UserMessage("fix **this**"))
    assert rgb(DARK.user_bg, background=True) in out
    assert "fix this" in plain(out)


def test_a_user_image_is_a_placeholder_with_type_and_size(renderer: BlockRenderer, plain: Plain) -> None:
    image = ImageContent("A" * 16384, "image/png")
    out = plain(renderer.user(UserMessage([TextContent("look"), image])))
    assert "[image: image/png, 12 KB]" in out


def test_assistant_text_is_the_markdown_render_inside_the_output_padding(renderer: BlockRenderer) -> None:
    padded = "\n".join(" " + line for line in render_markdown("# Hi\n\ntext", 58, DARK).split("\n"))
    assert renderer.assistant_text("# Hi\n\ntext") == padded
    unpadded = BlockRenderer(DARK, 60, output_pad=0)
    assert unpadded.assistant_text("# Hi\n\ntext") == render_markdown("# Hi\n\ntext", 60, DARK)


def test_output_pad_0_draws_every_block_from_the_first_column(plain: Plain) -> None:
    """As pi 1.6's ``"outputPad": 0``: no side padding on boxes or text (the boxes keep their blank
    line above and below)."""
    padded, flush = BlockRenderer(DARK, 40), BlockRenderer(DARK, 40, output_pad=0)
    for draw in (
        lambda r: r.user(UserMessage("question")),
        lambda r: r.assistant_text("answer"),
        lambda r: r.thinking("hmm", expanded=False),
        lambda r: r.notice("a notice"),
        lambda r: r.tool(ToolCall("c", "bash", {"command": "ls"}), None, expanded=False),
    ):
        text_lines = [line for line in plain(draw(flush)).split("\n") if line.strip()]
        assert text_lines and all(not line.startswith(" ") for line in text_lines)
        padded_lines = [line for line in plain(draw(padded)).split("\n") if line.strip()]
        assert all(line.startswith(" ") for line in padded_lines)


def test_collapsed_thinking_is_one_line_with_its_word_count(renderer: BlockRenderer, plain: Plain) -> None:
    assert plain(renderer.thinking("one two three", expanded=False)) == " Thinking… (Ctrl+T to show, 3 words)"


def test_expanded_thinking_is_the_text_in_the_thinking_style(renderer: BlockRenderer, plain: Plain) -> None:
    out = renderer.thinking("one two three", expanded=True)
    assert plain(out) == " one two three"
    assert "\x1b[3;" + rgb("#808080") in out


@pytest.mark.parametrize(
    ("stop_reason", "error", "shown"),
    [
        ("error", "overloaded", "Error: overloaded"),
        ("aborted", "Request was aborted", "Aborted"),
        ("stop", None, ""),
    ],
)
def test_a_failed_or_aborted_reply_ends_in_a_red_line(
    renderer: BlockRenderer, plain: Plain, stop_reason: Any, error: str | None, shown: str
) -> None:
    message = AssistantMessage([], "api", "provider", "model", stop_reason=stop_reason, error_message=error)
    assert plain(renderer.assistant_error(message)) == (f" {shown}" if shown else "")


@pytest.mark.parametrize(
    ("name", "args", "title"),
    [
        ("read", {"path": "src/a.py", "offset": 10, "limit": 20}, "read src/a.py:10-29"),
        ("read", {"path": "src/a.py", "offset": 5}, "read src/a.py:5"),
        ("write", {"path": "a.txt", "content": "x\ny\n"}, "write a.txt (2 lines)"),
        ("edit", {"path": "a.txt", "edits": []}, "edit a.txt"),
        ("bash", {"command": "make test"}, "$ make test"),
        ("bash", {"command": "cat <<EOF\nx\nEOF"}, "$ cat <<EOF … (+2 lines)"),
        ("grep", {"pattern": "TODO", "path": "src", "glob": "*.py"}, "grep /TODO/ in src (*.py)"),
        ("find", {"pattern": "*.md"}, "find *.md in ."),
        ("ls", {}, "ls ."),
        ("lookup", {"q": "x"}, 'lookup {"q":"x"}'),
    ],
)
def test_the_title_names_the_tool_and_its_key_arguments(
    renderer: BlockRenderer, plain: Plain, name: str, args: dict[str, Any], title: str
) -> None:
    out = plain(renderer.tool(ToolCall("c", name, args), None, expanded=False))
    assert out.split("\n")[1].strip() == title


def test_an_unknown_tools_arguments_are_cut_to_one_line(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "lookup", {"query": "word " * 50}), None, expanded=False))
    title = out.split("\n")[1].strip()
    assert title.startswith('lookup {"query":"word word')
    assert title.endswith("…")


def test_the_background_tells_pending_done_and_failed_apart(renderer: BlockRenderer) -> None:
    call = ToolCall("c", "ls", {"path": "."})
    assert rgb(DARK.tool_pending_bg, background=True) in renderer.tool(call, None, expanded=False)
    assert rgb(DARK.tool_success_bg, background=True) in renderer.tool(call, result("a"), expanded=False)
    assert rgb(DARK.tool_error_bg, background=True) in renderer.tool(
        call, result("no", is_error=True), expanded=False
    )


def test_collapsed_bash_output_shows_its_last_lines(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "bash", {"command": "x"}), result(numbered(12)), expanded=False))
    lines = [line.strip() for line in out.split("\n")]
    assert "… (7 earlier lines, Ctrl+O to expand)" in lines
    assert lines[lines.index("line 8") : lines.index("line 12") + 1] == [f"line {i}" for i in range(8, 13)]
    assert "line 7" not in lines


def test_expanded_output_shows_every_line(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "bash", {"command": "x"}), result(numbered(12)), expanded=True))
    assert all(f"line {i}" in out for i in range(1, 13))
    assert "Ctrl+O" not in out


def test_collapsed_read_output_shows_its_first_ten_lines(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "read", {"path": "a.txt"}), result(numbered(25)), expanded=False))
    assert "line 10" in out
    assert "line 11" not in out
    assert "… (15 more lines, Ctrl+O to expand)" in out


def test_collapsed_output_lines_are_cut_rather_than_wrapped(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "ls", {}), result("x" * 500), expanded=False))
    assert len(out.split("\n")) == 4  # padding, title, the output line, padding: no wrapped rows
    assert "…" in out


def test_read_output_is_highlighted_by_file_extension(renderer: BlockRenderer) -> None:
    out = renderer.tool(
        ToolCall("c", "read", {"path": "a.py"}), result("def f():\n    return 1"), expanded=False
    )
    assert rgb("#66d9ef") in out  # monokai's keyword colour


def test_a_trailing_note_from_the_tool_is_shown_dim_even_when_collapsed(renderer: BlockRenderer) -> None:
    text = numbered(30) + "\n\n[Showing lines 1-30 of 900. Use offset=31 to continue.]"
    out = renderer.tool(ToolCall("c", "read", {"path": "a.txt"}), result(text), expanded=False)
    line = next(line for line in out.split("\n") if "Showing lines" in line)
    assert rgb(DARK.dim) in line


def test_an_edit_result_shows_its_diff_in_colour(renderer: BlockRenderer) -> None:
    diff = generate_diff("a\nold\nc\n", "a\nnew\nc\n").diff
    out = renderer.tool(
        ToolCall("c", "edit", {"path": "f.txt", "edits": [{"oldText": "old", "newText": "new"}]}),
        result(
            "Successfully replaced 1 block in f.txt.",
            details={"diff": diff, "firstChangedLine": 2},
            name="edit",
        ),
        expanded=False,
    )
    lines = out.split("\n")
    assert rgb(DARK.diff_removed) in next(line for line in lines if "-2 old" in line)
    assert rgb(DARK.diff_added) in next(line for line in lines if "+2 new" in line)
    assert rgb(DARK.diff_context) in next(line for line in lines if " 1 a" in line)
    assert "Successfully" not in out


def test_a_pending_edit_previews_its_diff_from_the_arguments(renderer: BlockRenderer, plain: Plain) -> None:
    call = ToolCall("c", "edit", {"path": "f.txt", "edits": [{"oldText": "a\nold", "newText": "a\nnew"}]})
    out = plain(renderer.tool(call, None, expanded=False))
    assert "-2 old" in out
    assert "+2 new" in out


def test_a_pending_edit_in_the_legacy_shape_previews_too(renderer: BlockRenderer, plain: Plain) -> None:
    call = ToolCall("c", "edit", {"path": "f.txt", "oldText": "old", "newText": "new"})
    assert "+1 new" in plain(renderer.tool(call, None, expanded=False))


def test_a_failed_edit_shows_the_error_not_a_diff(renderer: BlockRenderer, plain: Plain) -> None:
    call = ToolCall("c", "edit", {"path": "f.txt", "edits": [{"oldText": "old", "newText": "new"}]})
    out = renderer.tool(call, result("oldText not found", is_error=True, name="edit"), expanded=False)
    assert "oldText not found" in plain(out)
    assert "+1 new" not in plain(out)


def test_write_shows_the_first_lines_of_its_content_highlighted(
    renderer: BlockRenderer, plain: Plain
) -> None:
    content = "".join(f"x{i} = {i}\n" for i in range(15))
    out = renderer.tool(ToolCall("c", "write", {"path": "a.py", "content": content}), None, expanded=False)
    assert "x9 = 9" in plain(out)
    assert "x10 = 10" not in plain(out)
    assert "… (5 more lines, Ctrl+O to expand)" in plain(out)
    assert rgb("#ae81ff") in out  # monokai's number colour


def test_running_bash_shows_the_tail_of_its_output_so_far(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(
        renderer.tool(ToolCall("c", "bash", {"command": "x"}), None, expanded=False, partial_text=numbered(9))
    )
    assert "line 9" in out
    assert "line 4" not in out


def test_an_image_in_a_result_is_a_placeholder(renderer: BlockRenderer, plain: Plain) -> None:
    message = ToolResultMessage(
        "c", "read", [TextContent("Read image file"), ImageContent("QUJD", "image/jpeg")]
    )
    assert "[image: image/jpeg, 3 B]" in plain(
        renderer.tool(ToolCall("c", "read", {"path": "a.jpg"}), message, expanded=False)
    )


def test_markup_in_tool_output_is_shown_literally(renderer: BlockRenderer, plain: Plain) -> None:
    out = plain(renderer.tool(ToolCall("c", "ls", {}), result("[bold]x[/bold] :smile:"), expanded=False))
    assert "[bold]x[/bold] :smile:" in out


def test_escape_sequences_in_tool_output_cannot_clear_the_screen_or_set_the_title(
    renderer: BlockRenderer, terminal: Callable[[str, int], pyte.Screen]
) -> None:
    nasty = "a\x1b[2Jb\x1b[Hc\x1b]0;pwned\x07d\x9b2Je\x07f\x08g"
    call = ToolCall("c", "bash", {"command": "echo \x1b]2;pwned\x07"})
    out = renderer.tool(call, result(nasty), expanded=False)
    screen = terminal("before\n" + out, 60)
    assert screen.display[0].rstrip() == "before"
    assert screen.title == "untouched"
    assert any("abcd2Jefg" in line for line in screen.display)


def _definition(**hooks: Any) -> Any:
    return type("Definition", (), {name: staticmethod(hook) for name, hook in hooks.items()})()


def test_an_extension_title_and_body_replace_the_default(renderer: BlockRenderer, plain: Plain) -> None:
    seen: list[Any] = []

    def render_result(message: ToolResultMessage, options: RenderOptions, theme: Any) -> Text:
        seen.append((options, theme))
        return Text("custom body")

    definition = _definition(
        render_call=lambda args, theme: f"custom {args['q']}", render_result=render_result
    )
    out = plain(
        renderer.tool(
            ToolCall("c", "lookup", {"q": "x"}), result("raw"), expanded=True, definition=definition
        )
    )
    assert "custom x" in out
    assert "custom body" in out
    assert "raw" not in out
    assert seen == [(RenderOptions(expanded=True), DARK)]


def test_an_extension_renderer_returning_none_or_raising_gets_the_default(
    renderer: BlockRenderer, plain: Plain
) -> None:
    def fail(*args: Any) -> Any:
        raise RuntimeError("broken")

    definition = _definition(render_call=fail, render_result=lambda *args: None)
    out = plain(
        renderer.tool(
            ToolCall("c", "ls", {"path": "src"}), result("file.txt"), expanded=False, definition=definition
        )
    )
    assert "ls src" in out
    assert "file.txt" in out


def test_a_renderable_that_fails_while_rendering_gets_the_default(
    renderer: BlockRenderer, plain: Plain
) -> None:
    class Broken:
        def __rich_console__(self, console: Any, options: Any) -> Any:
            raise ValueError("boom")

    definition = _definition(render_call=lambda args, theme: Broken())
    assert "ls src" in plain(
        renderer.tool(ToolCall("c", "ls", {"path": "src"}), None, expanded=False, definition=definition)
    )


def test_an_extension_string_keeps_its_colours_and_loses_other_escapes(renderer: BlockRenderer) -> None:
    definition = _definition(render_call=lambda args, theme: "\x1b[31mred\x1b[0m\x1b[2J\x1b]0;t\x07")
    out = renderer.tool(ToolCall("c", "lookup", {}), None, expanded=False, definition=definition)
    assert f"\x1b[31;{rgb(DARK.tool_pending_bg, background=True)}mred" in out
    assert "\x1b[2J" not in out
    assert "\x1b]" not in out


def test_a_user_shell_command_not_sent_to_the_model_says_so(renderer: BlockRenderer, plain: Plain) -> None:
    message = BashExecutionMessage("ls", "a\nb", 0, exclude_from_context=True)
    out = plain(renderer.bash_execution(message, expanded=False))
    assert "$ ls (not sent to the model)" in out


def test_a_failed_user_shell_command_shows_its_exit_code_on_red(
    renderer: BlockRenderer, plain: Plain
) -> None:
    out = renderer.bash_execution(BashExecutionMessage("false", "", 1), expanded=False)
    assert "(exit code 1)" in plain(out)
    assert rgb(DARK.tool_error_bg, background=True) in out


def test_a_cancelled_or_truncated_user_shell_command_says_so(renderer: BlockRenderer, plain: Plain) -> None:
    message = BashExecutionMessage(
        "yes", numbered(20), None, cancelled=True, truncated=True, full_output_path="/tmp/o"
    )
    out = plain(renderer.bash_execution(message, expanded=False))
    assert "(cancelled)" in out
    assert "[Output truncated. Full output: /tmp/o]" in out
    assert "… (15 earlier lines, Ctrl+O to expand)" in out


def test_a_running_user_shell_command_is_on_the_pending_background(renderer: BlockRenderer) -> None:
    out = renderer.bash_execution(BashExecutionMessage("sleep 9", "", None), expanded=False)
    assert rgb(DARK.tool_pending_bg, background=True) in out


def test_compaction_shows_the_tokens_it_replaced_and_the_summary_when_expanded(
    renderer: BlockRenderer, plain: Plain
) -> None:
    message = CompactionSummaryMessage("## Goal\nShip it", 123456)
    collapsed = plain(renderer.compaction(message, expanded=False))
    assert "Compacted from 123,456 tokens (Ctrl+O to show summary)" in collapsed
    assert "Ship it" not in collapsed
    assert "Ship it" in plain(renderer.compaction(message, expanded=True))


def test_a_branch_summary_shows_its_summary_when_expanded(renderer: BlockRenderer, plain: Plain) -> None:
    message = BranchSummaryMessage("Tried X, it failed", "entry-1")
    assert "Branch summary" in plain(renderer.branch_summary(message, expanded=False))
    assert "Tried X, it failed" in plain(renderer.branch_summary(message, expanded=True))


def test_a_custom_message_defaults_to_its_type_label_over_its_content(
    renderer: BlockRenderer, plain: Plain
) -> None:
    out = plain(renderer.custom(CustomMessage("reminder", "Run *tests*"), None))
    assert "[reminder]" in out
    assert "Run tests" in out


def test_a_hidden_custom_message_renders_nothing(renderer: BlockRenderer) -> None:
    assert renderer.custom(CustomMessage("reminder", "x", display=False), None) == ""


def test_a_custom_message_renderer_is_used_when_it_returns_something(
    renderer: BlockRenderer, plain: Plain
) -> None:
    def render(message: CustomMessage, options: RenderOptions, theme: Any) -> str:
        return f"{message.custom_type} expanded={options.expanded}"

    assert plain(renderer.custom(CustomMessage("note", "x"), render, expanded=True)) == "note expanded=True"


@pytest.mark.parametrize("level", ["info", "warning", "error"])
def test_notices_are_coloured_by_level(renderer: BlockRenderer, level: Any) -> None:
    colour = {"info": DARK.notice_info, "warning": DARK.notice_warning, "error": DARK.notice_error}[level]
    assert rgb(colour) in renderer.notice("hello", level)


def test_any_rich_renderable_can_be_rendered(renderer: BlockRenderer, plain: Plain) -> None:
    table = Table("name")
    table.add_row("tau")
    assert "tau" in plain(renderer.render_renderable(table))


def test_a_renderable_that_fails_becomes_an_error_line(renderer: BlockRenderer, plain: Plain) -> None:
    class Broken:
        def __rich_console__(self, console: Any, options: Any) -> Any:
            raise ValueError("boom")

    assert "could not be rendered" in plain(renderer.render_renderable(Broken()))


def test_rendering_is_deterministic() -> None:
    call = ToolCall("c", "read", {"path": "a.py"})
    message = result("def f():\n    return 1")
    first = BlockRenderer(DARK, 70).tool(call, message, expanded=True)
    assert BlockRenderer(DARK, 70).tool(call, message, expanded=True) == first


def _all_blocks(renderer: BlockRenderer) -> list[str]:
    long = "word " * 40 + "日本語" * 20 + "x" * 200
    diff = generate_diff("a\n" + long + "\n", "b\n" + long + "\n").diff
    return [
        renderer.user(UserMessage(long)),
        renderer.assistant_text(f"# {long}\n\n- {long}\n\n```\n{long}\n```"),
        renderer.thinking(long, expanded=False),
        renderer.thinking(long, expanded=True),
        renderer.tool(ToolCall("c", "bash", {"command": long}), result(long), expanded=True),
        renderer.tool(ToolCall("c", "read", {"path": long}), result(long), expanded=False),
        renderer.tool(ToolCall("c", "lookup", {"q": long}), None, expanded=False),
        renderer.tool(
            ToolCall("c", "edit", {"path": "a"}),
            result("ok", details={"diff": diff}, name="edit"),
            expanded=True,
        ),
        renderer.bash_execution(BashExecutionMessage(long, long, 3), expanded=False),
        renderer.compaction(CompactionSummaryMessage(long, 10**9), expanded=True),
        renderer.custom(CustomMessage(long, long), None),
        renderer.notice(long, "error"),
    ]


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=150))
def test_no_line_of_any_block_is_wider_than_the_width(width: int) -> None:
    from tau.modes.interactive.render.format import visible_width

    for block in _all_blocks(BlockRenderer(DARK, width)):
        assert all(visible_width(line) <= width for line in block.split("\n"))
        assert not block.endswith("\n")


def test_an_edit_result_without_a_diff_shows_its_text(renderer: BlockRenderer, plain: Plain) -> None:
    call = ToolCall("c", "edit", {"path": "f.txt", "edits": []})
    assert "Replaced by an extension" in plain(
        renderer.tool(call, result("Replaced by an extension", name="edit"), expanded=False)
    )


def test_a_successful_write_shows_its_content_not_its_result_text(
    renderer: BlockRenderer, plain: Plain
) -> None:
    call = ToolCall("c", "write", {"path": "a.txt", "content": "hello"})
    out = plain(
        renderer.tool(call, result("Successfully wrote 5 bytes to a.txt", name="write"), expanded=False)
    )
    assert "hello" in out
    assert "Successfully" not in out

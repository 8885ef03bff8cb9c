"""What a tool block shows for each built-in tool: the title line and the body.

Every string that comes from the model or a tool passes through ``terminal_safe`` and goes into a
``rich.text.Text`` (never console markup), so ``[bold]`` or an escape sequence shows as text or not at all.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from tau.ai.types import ImageContent, TextContent, ToolCall, ToolResultMessage
from tau.modes.interactive.render.format import format_bytes, terminal_safe, truncate_to_width
from tau.modes.interactive.render.highlight import highlight_lines, lexer_for_path
from tau.modes.interactive.render.images import image_renderable
from tau.modes.interactive.render.theme import Theme
from tau.tools.edit import prepare_edit_arguments
from tau.tools.edit_diff import generate_diff

_COLLAPSED_LINES = {"bash": 5, "edit": 20}
"""Lines a collapsed body shows: bash shows its last lines (where errors are), other tools their first."""
_DEFAULT_COLLAPSED_LINES = 10
_MAX_HIGHLIGHTED_LINES = 1000
"""Longer contents are shown plain: pygments takes about 0.1 ms a line."""
# The bracketed note the built-in tools end their output with when they cut it or hit a limit.
_NOTICE = re.compile(r"\n\n(\[[^\n]*\])\s*$")


def _string(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    return terminal_safe(value) if isinstance(value, str) else ""


def _one_line(text: str) -> str:
    return text.replace("\n", "↵")


def _number(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def display_path(path: str) -> str:
    """``path`` with the home directory shown as ``~``."""
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def tool_title(call: ToolCall, theme: Theme, *, expanded: bool, width: int) -> Text:
    """The title line: the tool's name and its key arguments."""
    args = call.arguments
    name = terminal_safe(call.name)
    title = Text(name, style=theme.tool_title)
    path = display_path(_one_line(_string(args, "path")))
    if name == "read":
        title.append(f" {path}", style=theme.accent)
        offset, limit = _number(args, "offset"), _number(args, "limit")
        if offset is not None or limit is not None:
            first = offset or 1
            title.append(
                f":{first}" + (f"-{first + limit - 1}" if limit is not None else ""), style=theme.warning
            )
    elif name == "write":
        title.append(f" {path}", style=theme.accent)
        content = args.get("content")
        if isinstance(content, str):
            title.append(f" ({_line_count(content)} lines)", style=theme.muted)
    elif name == "edit":
        title.append(f" {path}", style=theme.accent)
    elif name == "bash":
        return _bash_title(_string(args, "command"), _number(args, "timeout"), theme, expanded=expanded)
    elif name == "grep":
        title.append(f" /{_one_line(_string(args, 'pattern'))}/", style=theme.accent)
        title.append(f" in {path or '.'}", style=theme.muted)
        glob = _one_line(_string(args, "glob"))
        if glob:
            title.append(f" ({glob})", style=theme.muted)
    elif name == "find":
        title.append(f" {_one_line(_string(args, 'pattern'))}", style=theme.accent)
        title.append(f" in {path or '.'}", style=theme.muted)
    elif name == "ls":
        title.append(f" {path or '.'}", style=theme.accent)
    else:
        compact = terminal_safe(json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=str))
        title.append(" " + truncate_to_width(compact, max(0, width - title.cell_len - 1)), style=theme.muted)
    return title


def _bash_title(command: str, timeout: int | None, theme: Theme, *, expanded: bool) -> Text:
    first, *more = command.split("\n")
    title = Text("$ ", style=theme.bash_mode)
    title.append(command if expanded else first, style=theme.tool_title)
    if more and not expanded:
        title.append(f" … (+{len(more)} lines)", style=theme.muted)
    if timeout is not None:
        title.append(f" (timeout {timeout}s)", style=theme.muted)
    return title


def _clip(lines: Sequence[str], limit: int, *, expanded: bool, tail: bool) -> tuple[Sequence[str], int]:
    """The lines a body shows, and how many it hides."""
    if expanded or len(lines) <= limit:
        return lines, 0
    return (lines[-limit:] if tail else lines[:limit]), len(lines) - limit


def _lines(lines: Sequence[str] | list[Text], style: str, *, expanded: bool) -> Text:
    """Body lines as one text: collapsed, each line is cut at the edge instead of wrapping."""
    texts = [line if isinstance(line, Text) else Text(line) for line in lines]
    # The separator's style and wrapping become the joined text's own.
    return Text("\n", style=style, no_wrap=not expanded, overflow="fold" if expanded else "ellipsis").join(
        texts
    )


def _hint(hidden: int, theme: Theme, *, tail: bool) -> Text:
    which = "earlier" if tail else "more"
    return Text(f"… ({hidden} {which} lines, Ctrl+O to expand)", style=theme.muted)


def _plain_body(
    text: str, style: str, limit: int, theme: Theme, *, expanded: bool, tail: bool
) -> list[RenderableType]:
    if not text:
        return []
    shown, hidden = _clip(text.split("\n"), limit, expanded=expanded, tail=tail)
    body: list[RenderableType] = [_lines(shown, style, expanded=expanded)]
    if hidden:
        body.insert(0 if tail else 1, _hint(hidden, theme, tail=tail))
    return body


def _code_body(text: str, path: str, limit: int, theme: Theme, *, expanded: bool) -> list[RenderableType]:
    """File contents highlighted by the file's extension; the first ``limit`` lines when collapsed."""
    if not text:
        return []
    shown, hidden = _clip(text.split("\n"), limit, expanded=expanded, tail=False)
    lexer = lexer_for_path(path) if len(shown) <= _MAX_HIGHLIGHTED_LINES else None
    lines = highlight_lines("\n".join(shown), lexer, theme.code_theme)
    body: list[RenderableType] = [_lines(lines, theme.tool_output, expanded=expanded)]
    if hidden:
        body.append(_hint(hidden, theme, tail=False))
    return body


def _diff_body(diff: str, limit: int, theme: Theme, *, expanded: bool) -> list[RenderableType]:
    """A numbered edit diff: added lines green, removed red, context dim."""
    if not diff:
        return []
    colours = {"+": theme.diff_added, "-": theme.diff_removed}
    shown, hidden = _clip(diff.split("\n"), limit, expanded=expanded, tail=False)
    lines = [Text(line, style=colours.get(line[:1], theme.diff_context)) for line in shown]
    body: list[RenderableType] = [_lines(lines, "", expanded=expanded)]
    if hidden:
        body.append(_hint(hidden, theme, tail=False))
    return body


def _preview_diff(args: dict[str, Any]) -> str:
    """The diff of an edit not yet applied, from its arguments (line numbers count within each edit)."""
    edits = prepare_edit_arguments(args).get("edits")
    diffs: list[str] = []
    for edit in edits if isinstance(edits, list) else []:
        if (
            isinstance(edit, dict)
            and isinstance(edit.get("oldText"), str)
            and isinstance(edit.get("newText"), str)
        ):
            diffs.append(generate_diff(edit["oldText"], edit["newText"]).diff)
    return terminal_safe("\n   …\n".join(diff for diff in diffs if diff))


def _result_text(result: ToolResultMessage) -> tuple[str, list[ImageContent], str | None]:
    """A result's text (sanitised, trailing newlines dropped), its images, its closing note."""
    text = terminal_safe("\n".join(block.text for block in result.content if isinstance(block, TextContent)))
    text = text.rstrip("\n")
    images = [block for block in result.content if isinstance(block, ImageContent)]
    notice = _NOTICE.search(text)
    if notice is None:
        return text, images, None
    return text[: notice.start()], images, notice.group(1)


def image_placeholder(image: ImageContent) -> str:
    """``[image: image/png, 12 KB]`` (size of the decoded data)."""
    size = len(image.data) * 3 // 4 - image.data[-2:].count("=")
    return f"[image: {terminal_safe(image.mime_type) or 'unknown'}, {format_bytes(max(0, size))}]"


def tool_body(
    call: ToolCall,
    result: ToolResultMessage | None,
    theme: Theme,
    *,
    expanded: bool,
    partial_text: str | None,
) -> list[RenderableType]:
    """The body of a tool block: what the call does (edit diff, written content) and what came back."""
    args, name = call.arguments, call.name
    limit = _COLLAPSED_LINES.get(name, _DEFAULT_COLLAPSED_LINES)
    tail = name == "bash"
    body: list[RenderableType] = []
    if name == "write" and isinstance(args.get("content"), str):
        content = terminal_safe(args["content"]).rstrip("\n")
        body += _code_body(content, _string(args, "path"), limit, theme, expanded=expanded)
    if result is None:
        if name == "edit":
            body += _diff_body(_preview_diff(args), limit, theme, expanded=expanded)
        if partial_text:
            text = terminal_safe(partial_text).rstrip("\n")
            body += _plain_body(text, theme.tool_output, limit, theme, expanded=expanded, tail=tail)
        return body
    text, images, notice = _result_text(result)
    diff = result.details.get("diff") if isinstance(result.details, dict) else None
    if result.is_error:
        body += _plain_body(text, theme.error, limit, theme, expanded=expanded, tail=tail)
    elif name == "edit" and isinstance(diff, str):
        body += _diff_body(terminal_safe(diff), limit, theme, expanded=expanded)
    elif name == "read":
        body += _code_body(text, _string(args, "path"), limit, theme, expanded=expanded)
    elif name != "write":  # a write's result only says it succeeded
        body += _plain_body(text, theme.tool_output, limit, theme, expanded=expanded, tail=tail)
    body += [image_renderable(image, image_placeholder(image), theme) for image in images]
    if notice:
        body.append(Text(notice, style=theme.dim))
    return body

"""Tool calls and tool results as HTML: the seven built-in tools natively, any other tool generically.

A call shows what was asked (the bash command, the file read or written, an edit's diff); its
result, a separate entry in the session, shows what came back, in a collapsible box that is cut to
a scrollable height when long. A result is rendered knowing its call (by ``toolCallId``), so a
read's output is highlighted for the file's language, and an edit call shows the diff its result
recorded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from tau.ai.types import ImageContent, TextContent, ToolCall, ToolResultMessage
from tau.export.diffs import diff_from_arguments, render_diff
from tau.export.extension_tools import ExtensionToolHtml
from tau.export.formatting import as_number, as_text, preview
from tau.export.markup import CodeHighlighter, escape, plain_code
from tau.export.media import render_image
from tau.export.subagent_html import child_transcript

LONG_OUTPUT_LINES = 20
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    """Terminal colour and title sequences removed (the page does not interpret them)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def output_box(inner_html: str, lines: int) -> str:
    """Output cut to a scrollable height when long, with a button (working with JavaScript) to show it all."""
    if lines <= LONG_OUTPUT_LINES:
        return f'<div class="output">{inner_html}</div>'
    return (
        f'<div class="output long">{inner_html}</div>'
        f'<button type="button" class="expand js-only">Show all {lines} lines</button>'
    )


def line_count(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    return text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0


def _arg(call: ToolCall, key: str) -> str:
    return as_text(call.arguments.get(key))


class ToolHtml:
    """Renders the calls and results of one session; ``calls`` and ``results`` are keyed by call id."""

    def __init__(
        self,
        highlighter: CodeHighlighter,
        calls: Mapping[str, ToolCall],
        results: Mapping[str, ToolResultMessage],
        *,
        depth: int = 0,
        extensions: ExtensionToolHtml | None = None,
    ) -> None:
        """``depth``: how deep in sub-agent transcripts these calls are (0: the session's own)."""
        self._highlighter = highlighter
        self._calls = calls
        self._results = results
        self._depth = depth
        self._extensions = extensions

    def _renderer_for(
        self, calls: Mapping[str, ToolCall], results: Mapping[str, ToolResultMessage], depth: int
    ) -> ToolHtml:
        return ToolHtml(self._highlighter, calls, results, depth=depth, extensions=self._extensions)

    # -- calls -------------------------------------------------------------------------------------

    def call(self, call: ToolCall) -> str:
        drawn = self._extensions.call(call.name, call.arguments) if self._extensions is not None else None
        if drawn is not None:
            return f'<div class="tool-call">{drawn}</div>'
        head, body = self._describe_call(call)
        return (
            f'<div class="tool-call"><div class="tool-head"><span class="tool-name">{escape(as_text(call.name))}</span>'
            f"{head}</div>{body}</div>"
        )

    def _describe_call(self, call: ToolCall) -> tuple[str, str]:
        """The call's one-line summary and its body, both HTML."""
        name = call.name
        path = _arg(call, "path")
        if name == "bash":
            return "", f'<pre class="command"><code>$ {escape(_arg(call, "command"))}</code></pre>'
        if name == "read":
            return f' <span class="tool-target">{escape(path)}{self._line_range(call)}</span>', ""
        if name == "write":
            content = _arg(call, "content")
            lines = line_count(content)
            box = output_box(self._highlighter.file(content, path), lines)
            return (
                f' <span class="tool-target">{escape(path)}</span>'
                f' <span class="dim">({lines} line{"" if lines == 1 else "s"})</span>',
                box,
            )
        if name == "edit":
            return f' <span class="tool-target">{escape(path)}</span>', self._edit_diff(call)
        if name in ("grep", "find", "ls"):
            return f' <span class="tool-target">{escape(self._search_summary(call))}</span>', ""
        arguments = json.dumps(call.arguments, ensure_ascii=False, indent=2)
        return "", (
            '<details class="arguments"><summary>arguments</summary>'
            f"{self._highlighter.block(arguments, 'json')}</details>"
        )

    @staticmethod
    def _line_range(call: ToolCall) -> str:
        offset = as_number(call.arguments.get("offset"))
        limit = as_number(call.arguments.get("limit"))
        if not offset and not limit:
            return ""
        start = int(offset) or 1
        end = f"{start + int(limit) - 1}" if limit else ""
        return escape(f":{start}-{end}")

    @staticmethod
    def _search_summary(call: ToolCall) -> str:
        path = _arg(call, "path") or "."
        if call.name == "ls":
            return path
        pattern = _arg(call, "pattern")
        if call.name == "find":
            return f"{pattern} in {path}"
        glob = _arg(call, "glob")
        flags = "i" if call.arguments.get("ignoreCase") is True else ""
        return f"/{pattern}/{flags} in {path}" + (f" ({glob})" if glob else "")

    def _edit_diff(self, call: ToolCall) -> str:
        result = self._results.get(call.id)
        details = result.details if result is not None else None
        recorded = details.get("diff") if isinstance(details, dict) else None
        if isinstance(recorded, str) and recorded:
            return render_diff(recorded)
        computed = diff_from_arguments(call.arguments)
        return render_diff(computed) if computed else ""

    # -- results -----------------------------------------------------------------------------------

    def result(self, message: ToolResultMessage) -> str:
        drawn = self._extensions.result(message.tool_name, message) if self._extensions is not None else None
        if drawn is not None:
            return (
                f'<details class="tool-output" open><summary><span class="tool-name">'
                f"{escape(as_text(message.tool_name))}</span></summary>{drawn}</details>"
            )
        call = self._calls.get(message.tool_call_id)
        text = strip_ansi("".join(b.text for b in message.content if isinstance(b, TextContent)))
        if message.is_error or call is None or call.name != "read":
            inner = plain_code(text)
        else:
            inner = self._highlighter.file(text, _arg(call, "path"))
        target = self._result_target(call) if call is not None else ""
        status = ' <span class="status-error">error</span>' if message.is_error else ""
        images = "".join(render_image(b) for b in message.content if isinstance(b, ImageContent))
        body = output_box(inner, line_count(text)) if text or not images else ""
        child = (
            child_transcript(message.details, self._renderer_for, self._depth)
            if message.tool_name == "task"
            else ""
        )
        return (
            f'<details class="tool-output" open><summary><span class="tool-name">{escape(as_text(message.tool_name))}</span>'
            f"{target}{status}</summary>{body}{images}{child}</details>"
        )

    @staticmethod
    def _result_target(call: ToolCall) -> str:
        if call.name == "bash":
            summary = "$ " + preview(_arg(call, "command"), 80)
        elif call.name in ("grep", "find", "ls"):
            summary = ToolHtml._search_summary(call)
        else:
            summary = _arg(call, "path")
        return f' <span class="tool-target">{escape(summary)}</span>' if summary else ""

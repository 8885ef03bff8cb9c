"""Chat blocks as ANSI text: user and assistant messages, thinking, tool calls, shell runs, summaries,
extension messages and notices.

Every method is pure: the same arguments give the same string, so callers may cache by (message,
width, flags). Results have no trailing newline and no line wider than the renderer's width.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.protocol import is_renderable
from rich.segment import Segment
from rich.text import Text

from tau.ai.types import AssistantMessage, ImageContent, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.extensions.types import RenderOptions
from tau.modes.interactive.render.console import ColorSystem, console_for, to_ansi
from tau.modes.interactive.render.format import format_duration, terminal_safe
from tau.modes.interactive.render.images import image_renderable
from tau.modes.interactive.render.markdown import markdown_renderable, render_markdown
from tau.modes.interactive.render.padding import pad_lines
from tau.modes.interactive.render.theme import Theme
from tau.modes.interactive.render.tools import image_placeholder, tool_body, tool_title
from tau.session.entries import CustomEntry
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)

NoticeLevel = Literal["info", "warning", "error"]
MarkdownHook = Callable[[str, str, bool, int], str]
"""``hook(markdown, surface, streaming, width) -> markdown``: what extensions make of it."""

_BASH_COLLAPSED_LINES = 5
_SGR = re.compile(r"(\x1b\[[0-9;]*m)")


class _Rendered:
    """Lines an extension's renderable already produced (rendering it first is how its errors are caught)."""

    def __init__(self, lines: list[list[Segment]]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.lines:
            yield from line
            yield Segment.line()


def _ansi_text(text: str) -> Text:
    """A string with colour codes as text: its colours kept, every other escape or control dropped."""
    pieces = _SGR.split(text)
    return Text.from_ansi("".join(p if i % 2 else terminal_safe(p) for i, p in enumerate(pieces)))


def _content_text(
    content: str | list[TextContent | ImageContent], theme: Theme
) -> tuple[str, list[RenderableType]]:
    """User-style content as its text and its images (inline, or their placeholders)."""
    if isinstance(content, str):
        return content, []
    text = "\n".join(block.text for block in content if isinstance(block, TextContent))
    images = [block for block in content if isinstance(block, ImageContent)]
    return text, [image_renderable(image, image_placeholder(image), theme) for image in images]


class BlockRenderer:
    """Renders chat blocks for one theme and width; ``output_pad`` is the ``outputPad`` setting (the
    side padding of every block, 0 or 1; none on a terminal narrower than 10 cells)."""

    def __init__(
        self,
        theme: Theme,
        width: int,
        *,
        color_system: ColorSystem = "truecolor",
        output_pad: int = 1,
        markdown: MarkdownHook | None = None,
        thinking_label: str | None = None,
    ) -> None:
        self.theme = theme
        self.thinking_label = thinking_label
        """An extension's words for a collapsed thinking block (``ctx.ui.set_hidden_thinking_label``)."""
        self.markdown = markdown
        """Extensions' Markdown transformers (``tau.register_markdown_transformer``), when any."""
        self.width = max(1, width)
        self.output_pad = output_pad if self.width >= 10 else 0
        self._color_system: ColorSystem = color_system
        self.color_system: ColorSystem = color_system
        """The colours blocks are drawn with (``truecolor``, or ``256`` where the terminal has no more)."""
        self._console = console_for(theme, self.width, color_system)
        self._text_console = (
            console_for(theme, self.text_width, color_system) if self.output_pad else self._console
        )

    def _md(self, text: str, surface: str, *, streaming: bool = False) -> str:
        """``text`` as the extensions' Markdown transformers leave it for ``surface``."""
        if self.markdown is None:
            return text
        return self.markdown(text, surface, streaming, self.text_width)

    # -- helpers -----------------------------------------------------------------------------------

    def _print(self, renderable: RenderableType) -> str:
        return to_ansi(self._console, renderable)

    def _box(self, parts: list[RenderableType], background: str) -> str:
        """``parts`` on a full-width background with one cell (and one line) of padding around."""
        pad = (1, self.output_pad) if self.width >= 10 else (0, 0)
        return self._print(Padding(Group(*parts), pad, style=f"on {background}", expand=True))

    @property
    def text_width(self) -> int:
        """The width of plain lines inside the padding."""
        return self.width - 2 * self.output_pad

    def _plain(self, renderable: RenderableType) -> str:
        """A plain (unboxed) block: drawn inside the padding."""
        return pad_lines(to_ansi(self._text_console, renderable), self.output_pad)

    def _extension(self, produce: Callable[[], Any], width: int) -> _Rendered | None:
        """What an extension's renderer returned, rendered at ``width``; ``None`` when it returned
        ``None``, something that is not a renderable, or raised (the default rendering is used then)."""
        try:
            produced = produce()
            if isinstance(produced, str):
                produced = _ansi_text(produced)
            if produced is None or not is_renderable(produced):
                return None
            options = self._console.options.update(width=max(1, width))
            lines = self._console.render_lines(produced, options, pad=False)
        except Exception:  # an extension must never break the chat
            return None
        return _Rendered(
            [[Segment(terminal_safe(s.text), s.style) for s in line if not s.control] for line in lines]
        )

    def render_renderable(self, renderable: RenderableType) -> str:
        """Anything rich can print (a string is read as text with colour codes), as ANSI text; an
        error line in place of a renderable that fails."""
        rendered = self._extension(lambda: renderable, self.width)
        if rendered is None:
            return self.notice("[component could not be rendered]", "error")
        return self._print(rendered)

    # -- messages --------------------------------------------------------------------------------------

    def user(self, message: UserMessage) -> str:
        """A user message: markdown on the user background, images as placeholders."""
        text, images = _content_text(message.content, self.theme)
        text = self._md(text, "user") if text.strip() else text
        parts: list[RenderableType] = (
            [markdown_renderable(text, self.theme, diagrams=True)] if text.strip() else []
        )
        parts += images
        return self._box(parts or [Text("")], self.theme.user_bg)

    def assistant_text(self, text: str, *, streaming: bool = False) -> str:
        """Assistant prose as markdown (the same output a finished ``StreamingMarkdown`` gives)."""
        text = self._md(text, "assistant", streaming=streaming)
        return pad_lines(
            render_markdown(
                text, self.text_width, self.theme, color_system=self._color_system, diagrams=True
            ),
            self.output_pad,
        )

    def thinking(self, text: str, *, expanded: bool) -> str:
        """Reasoning text: one dim line with its length when collapsed, dim italic markdown when expanded."""
        if expanded and text.strip():
            return pad_lines(
                render_markdown(
                    self._md(text, "assistant-thinking"),
                    self.text_width,
                    self.theme,
                    style=self.theme.thinking,
                    color_system=self._color_system,
                ),
                self.output_pad,
            )
        words = len(text.split())
        label = f"Thinking… (Ctrl+T to show, {words} words)" if words else "Thinking…"
        if self.thinking_label:
            label = self.thinking_label
        return self._plain(Text(label, style=self.theme.thinking, no_wrap=True, overflow="ellipsis"))

    def assistant_error(self, message: AssistantMessage) -> str:
        """The red line ending a reply that failed or was aborted; ``""`` for any other stop reason."""
        if message.stop_reason == "aborted":
            line = "Aborted"  # the error message says only that ("Request was aborted")
        elif message.stop_reason == "error":
            line = f"Error: {terminal_safe(message.error_message or 'unknown error')}"
        else:
            return ""
        return self._plain(Text(line, style=self.theme.error))

    def tool(
        self,
        call: ToolCall,
        result: ToolResultMessage | None,
        *,
        expanded: bool,
        partial_text: str | None = None,
        definition: Any = None,
        duration_ms: int | None = None,
    ) -> str:
        """A tool call and its result on a background that tells its state (running, done, failed).

        ``partial_text`` is the output so far of a tool still running; ``duration_ms``, how long
        it ran (or has been running), is shown under a shell command's output ("Took 0.2s",
        "Elapsed 3.0s"), as pi does. ``definition`` may carry an
        extension's ``render_call(args, theme)`` / ``render_result(result, options, theme)``; each
        replaces the default title or body unless it returns ``None`` or raises.
        """
        inner = self.text_width
        render_call = getattr(definition, "render_call", None)
        render_result = getattr(definition, "render_result", None)
        title: RenderableType | None = None
        if callable(render_call):
            title = self._extension(lambda: render_call(call.arguments, self.theme), inner)
        if title is None:
            title = tool_title(call, self.theme, expanded=expanded, width=inner)
        body: RenderableType | None = None
        if result is not None and callable(render_result):
            options = RenderOptions(expanded=expanded)
            body = self._extension(lambda: render_result(result, options, self.theme), inner)
        parts = [
            title,
            *(
                [body]
                if body is not None
                else tool_body(call, result, self.theme, expanded=expanded, partial_text=partial_text)
            ),
        ]
        if duration_ms is not None and call.name == "bash":
            took = "Took" if result is not None else "Elapsed"
            parts.append(Text(f"\n{took} {format_duration(duration_ms)}", style=self.theme.muted))
        if result is None:
            background = self.theme.tool_pending_bg
        else:
            background = self.theme.tool_error_bg if result.is_error else self.theme.tool_success_bg
        return self._box(parts, background)

    def bash_execution(self, message: BashExecutionMessage, *, expanded: bool) -> str:
        """A ``!command`` the user ran (``!!``: marked as not sent to the model); running while it has
        no exit code and was not cancelled."""
        theme = self.theme
        title = Text("$ ", style=theme.bash_mode)
        title.append(terminal_safe(message.command), style=f"bold {theme.bash_mode}")
        if message.exclude_from_context:
            title.append(" (not sent to the model)", style=theme.muted)
        parts: list[RenderableType] = [title]
        output = terminal_safe(message.output).rstrip("\n")
        if output:
            lines = output.split("\n")
            hidden = 0 if expanded else max(0, len(lines) - _BASH_COLLAPSED_LINES)
            if hidden:
                parts.append(Text(f"… ({hidden} earlier lines, Ctrl+O to expand)", style=theme.muted))
            parts.append(
                Text(
                    "\n".join(lines[hidden:]),
                    style=theme.tool_output,
                    no_wrap=not expanded,
                    overflow="fold" if expanded else "ellipsis",
                )
            )
        running = message.exit_code is None and not message.cancelled
        failed = message.cancelled or (message.exit_code is not None and message.exit_code != 0)
        if message.cancelled:
            parts.append(Text("(cancelled)", style=theme.warning))
        elif failed:
            parts.append(Text(f"(exit code {message.exit_code})", style=theme.error))
        if message.truncated:
            where = (
                f" Full output: {terminal_safe(message.full_output_path)}" if message.full_output_path else ""
            )
            parts.append(Text(f"[Output truncated.{where}]", style=theme.dim))
        background = (
            theme.tool_pending_bg if running else theme.tool_error_bg if failed else theme.tool_success_bg
        )
        return self._box(parts, background)

    def _summary(self, label: str, summary: str, *, expanded: bool) -> str:
        title = Text(label, style=self.theme.custom_label)
        if not expanded:
            title.append(" (Ctrl+O to show summary)", style=self.theme.muted)
            return self._box([title], self.theme.custom_bg)
        summary = self._md(summary, "summary")
        body = markdown_renderable(summary, self.theme, diagrams=True)
        return self._box([title, Text(""), body], self.theme.custom_bg)

    def compaction(self, message: CompactionSummaryMessage, *, expanded: bool) -> str:
        """The mark left by compaction: tokens it replaced, and the summary when expanded."""
        return self._summary(
            f"Compacted from {message.tokens_before:,} tokens", message.summary, expanded=expanded
        )

    def branch_summary(self, message: BranchSummaryMessage, *, expanded: bool) -> str:
        """The summary of the branch the conversation came back from."""
        return self._summary("Branch summary", message.summary, expanded=expanded)

    def custom(
        self, message: CustomMessage, renderer: Callable[..., Any] | None = None, *, expanded: bool = False
    ) -> str:
        """An extension's message: its registered ``renderer(message, options, theme)`` when that
        returns something, else a ``[customType]`` label over the content; ``""`` when not displayed."""
        if not message.display:
            return ""
        if renderer is not None:
            options = RenderOptions(expanded=expanded)
            rendered = self._extension(lambda: renderer(message, options, self.theme), self.width)
            if rendered is not None:
                return self._print(rendered)
        text, images = _content_text(message.content, self.theme)
        parts: list[RenderableType] = [
            Text(f"[{terminal_safe(message.custom_type)}]", style=self.theme.custom_label)
        ]
        if text.strip():
            parts.append(markdown_renderable(self._md(text, "custom"), self.theme))
        parts += images
        return self._box(parts, self.theme.custom_bg)

    def entry(self, entry: CustomEntry, renderer: Callable[..., Any], *, expanded: bool = False) -> str:
        """An extension's ``custom`` session entry, drawn by its ``renderer(entry, options, theme)``
        (``tau.register_entry_renderer``); ``""`` when that returns nothing."""
        options = RenderOptions(expanded=expanded)
        rendered = self._extension(lambda: renderer(entry, options, self.theme), self.width)
        return "" if rendered is None else self._print(rendered)

    def notice(self, text: str, level: NoticeLevel = "info") -> str:
        """A line (or a few) of information, warning or error from tau itself."""
        style = {"info": self.theme.notice_info, "warning": self.theme.notice_warning}.get(
            level, self.theme.notice_error
        )
        return self._plain(Text(terminal_safe(text), style=style))

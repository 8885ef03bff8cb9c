"""The conversation on screen: blocks printed once into the terminal's scrollback, and the few
still changing (a streaming reply, tool calls waiting for their results) in the live area.

Blocks are committed strictly in order: a finished block waits in the live area behind an earlier
one that is still running, so scrollback always reads as the conversation happened. A streaming
reply is the exception that keeps the live area small: the part of its markdown that can no longer
change goes to scrollback as it completes (``StreamingMarkdown.take_stable``).

Every committed block keeps what it was made from, so the whole chat can be printed again at a
new width or with tool output expanded (``render_all``). Renders are cached per width and flags.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field

from tau.agent.events import (
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from tau.agent.messages import AgentMessage
from tau.ai.events import (
    TextDeltaEvent,
    TextStartEvent,
    ThinkingDeltaEvent,
    ThinkingStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from tau.ai.types import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.session.entries import CustomEntry
from tau.session.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
)

if TYPE_CHECKING:  # rendering imports rich: loaded with the first block drawn, not at start-up
    from tau.modes.interactive.render.blocks import BlockRenderer
    from tau.modes.interactive.render.markdown import StreamingMarkdown

__all__ = ["BashBlock", "Block", "Chat", "PromptText", "ViewFlags"]


class PromptText(str):
    """A user message's drawn text: a plain ``str`` to the inline scrollback, and where the
    fullscreen transcript's prompt jumps (Ctrl+Shift+Up/Down) stop."""

    __slots__ = ()


class ViewFlags(Struct, frozen=True):
    """What changes how a block looks besides its content."""

    width: int
    tools_expanded: bool = False
    show_thinking: bool = False


_LIVE_THINKING_CHARS = 4000
COMMIT_INTERVAL = 0.05


class Block:
    """One thing in the conversation. ``finished`` blocks may go to scrollback."""

    finished: bool = True

    def __init__(self) -> None:
        self._cache: tuple[ViewFlags, str] | None = None

    def render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        if self._cache is not None and self._cache[0] == flags:
            return self._cache[1]
        try:
            text = self._render(renderer, flags)
        except Exception as exc:  # one odd message must not take the whole screen down
            text = renderer.notice(f"(this block could not be drawn: {type(exc).__name__}: {exc})", "error")
        if self.finished:
            self._cache = (flags, text)
        return text

    def invalidate(self) -> None:
        self._cache = None

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        raise NotImplementedError


class _Static(Block):
    """A block drawn by one renderer call that never changes."""

    def __init__(self, draw: Callable[[BlockRenderer, ViewFlags], str]) -> None:
        super().__init__()
        self._draw = draw

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        return self._draw(renderer, flags)


class TextBlock(Block):
    """Assistant text; while it streams, its stable part is handed out by ``take_stable``."""

    def __init__(self, width: int, theme: Any, pad: int = 0, color_system: Any = "truecolor") -> None:
        super().__init__()
        self.finished = False
        from tau.modes.interactive.render.markdown import StreamingMarkdown

        self.text_parts: list[str] = []
        self.stream: StreamingMarkdown | None = StreamingMarkdown(
            width=width - 2 * pad, theme=theme, color_system=color_system, diagrams=True
        )
        self.streamed_width = width
        self.pad = pad  # the outputPad the stream was laid out for: its chunks are shifted by it
        self.committed_any = False

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def append(self, delta: str) -> None:
        self.text_parts.append(delta)
        if self.stream is not None:
            self.stream.append(delta)

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        return renderer.assistant_text(self.text, streaming=not self.finished)


class ThinkingBlock(Block):
    def __init__(self) -> None:
        super().__init__()
        self.finished = False
        self.parts: list[str] = []

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        return renderer.thinking("".join(self.parts), expanded=flags.show_thinking)


class ToolBlock(Block):
    """A tool call from its first streamed argument to its result."""

    def __init__(self, call: ToolCall, definition: Any = None) -> None:
        super().__init__()
        self.finished = False
        self.call = call
        self.definition = definition
        self.result: ToolResultMessage | None = None
        self.partial_text: str | None = None
        self.duration_ms: int | None = None  # known for a call run now, not for one loaded
        self.started_at: float | None = None  # when it began to run (monotonic)

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        duration_ms = self.duration_ms
        if self.result is None and self.started_at is not None:
            # while it runs, whole seconds: the block is drawn every frame but changes once a second
            duration_ms = int(time.monotonic() - self.started_at) * 1000
        return renderer.tool(
            self.call,
            self.result,
            expanded=flags.tools_expanded,
            partial_text=self.partial_text,
            definition=self.definition,
            duration_ms=duration_ms,
        )


class BashBlock(Block):
    """A ``!command`` the user runs: output streams in until it ends."""

    def __init__(self, command: str, exclude: bool) -> None:
        super().__init__()
        self.finished = False
        self.command = command
        self.exclude = exclude
        self.output = ""
        self.message: BashExecutionMessage | None = None

    def append(self, chunk: str) -> None:
        self.output += chunk
        if len(self.output) > 200_000:  # the live view shows the tail only; the result has it all
            self.output = self.output[-100_000:]

    def finish(self, message: BashExecutionMessage) -> None:
        self.message = message
        self.finished = True

    def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
        message = self.message or BashExecutionMessage(
            self.command, self.output, None, exclude_from_context=self.exclude or None
        )
        return renderer.bash_execution(message, expanded=flags.tools_expanded)


class _Pending(Struct, dict=True):
    """Where the reply being streamed puts its content blocks."""

    by_index: dict[int, Block] = field(default_factory=dict)


class Chat:
    """The blocks of the conversation and the rules for moving them to scrollback.

    ``write(text, new_block)`` receives ANSI text for scrollback (``new_block``: the start of a
    block, which the screen sets off with a blank line); ``changed`` is called when the live area needs a
    redraw. ``tool_definition(name)`` finds an extension tool's renderers.
    """

    def __init__(
        self,
        renderer: Callable[[int], BlockRenderer],
        theme: Callable[[], Any],
        flags: Callable[[], ViewFlags],
        write: Callable[[str, bool], None],
        changed: Callable[[], None],
        tool_definition: Callable[[str], Any] = lambda name: None,
        custom_renderer: Callable[[str], Any] = lambda custom_type: None,
        entry_renderer: Callable[[str], Any] = lambda custom_type: None,
    ) -> None:
        self._renderer = renderer
        self._theme = theme
        self._flags = flags
        self._write = write
        self._changed = changed
        self._tool_definition = tool_definition
        self._custom_renderer = custom_renderer
        self._entry_renderer = entry_renderer
        self.history: list[Block] = []
        self.live: list[Block] = []
        self._reply = _Pending()
        self._tools: dict[str, ToolBlock] = {}
        self._commit_handle: asyncio.TimerHandle | None = None

    # -- building blocks from messages ---------------------------------------------------------

    def add_entry(self, entry: CustomEntry) -> None:
        """An extension's ``custom`` entry, when an extension draws entries of its type."""
        block = self._entry_block(entry)
        if block is not None:
            self.add_block(block)

    def _entry_block(self, entry: CustomEntry) -> Block | None:
        renderer = self._entry_renderer(entry.custom_type)
        if renderer is None:
            return None
        return _Static(lambda r, f: r.entry(entry, renderer, expanded=f.tools_expanded))

    def add_messages(
        self,
        messages: Sequence[AgentMessage],
        entries: Sequence[CustomEntry] = (),
        notes: Callable[[AgentMessage], str | None] | None = None,
    ) -> None:
        """Blocks for finished messages (a restored session): tool results join their calls.
        ``entries``: extensions' ``custom`` entries of the branch, each placed before the first
        message that came after it; ``notes(message)``: a warning line to show after a message."""
        waiting = sorted(
            ((_entry_ms(e), e) for e in entries if self._entry_renderer(e.custom_type) is not None),
            key=lambda pair: pair[0],
        )
        for message in messages:
            stamp = getattr(message, "timestamp", None)
            while waiting and isinstance(stamp, int) and waiting[0][0] < stamp:
                block = self._entry_block(waiting.pop(0)[1])
                if block is not None:
                    self.live.append(block)
            if isinstance(message, ToolResultMessage):
                call = self._tools.pop(message.tool_call_id, None)
                if call is not None:
                    call.result = message
                    call.finished = True
                    continue
            for block in self._blocks_of(message):
                self.live.append(block)
            if notes is not None and (note := notes(message)) is not None:
                self.live.append(_Static(lambda r, f, note=note: r.notice(note, "warning")))  # type: ignore[misc]
        for _, entry in waiting:
            block = self._entry_block(entry)
            if block is not None:
                self.live.append(block)
        for pending in self._tools.values():
            pending.finished = True  # a call whose result never came (an aborted run)
        self._tools.clear()
        self.commit_ready()

    def add_notice(self, text: str, level: str = "info") -> None:
        self.add_block(_Static(lambda r, f: r.notice(text, level)))  # type: ignore[arg-type]

    def add_markdown(self, text: str) -> None:
        """Markdown a command answers with (``/hotkeys``' tables), drawn as a reply's text is."""
        self.add_block(_Static(_text_drawer(text)))

    def add_block(self, block: Block) -> None:
        self.live.append(block)
        self.commit_ready()

    def _blocks_of(self, message: AgentMessage) -> list[Block]:
        if isinstance(message, UserMessage):
            return [_Static(lambda r, f: PromptText(r.user(message)))]
        if isinstance(message, AssistantMessage):
            blocks: list[Block] = []
            for content in message.content:
                if isinstance(content, TextContent) and content.text.strip():
                    blocks.append(_Static(_text_drawer(content.text)))
                elif isinstance(content, ThinkingContent) and content.thinking.strip():
                    thinking = ThinkingBlock()
                    thinking.parts.append(content.thinking)
                    thinking.finished = True
                    blocks.append(thinking)
                elif isinstance(content, ToolCall):
                    tool = ToolBlock(content, self._tool_definition(content.name))
                    self._tools[content.id] = tool
                    blocks.append(tool)
            if message.stop_reason in ("error", "aborted"):
                blocks.append(_Static(lambda r, f: r.assistant_error(message)))
            return blocks
        if isinstance(message, BashExecutionMessage):
            return [_Static(lambda r, f: r.bash_execution(message, expanded=f.tools_expanded))]
        if isinstance(message, CompactionSummaryMessage):
            return [_Static(lambda r, f: r.compaction(message, expanded=f.tools_expanded))]
        if isinstance(message, BranchSummaryMessage):
            return [_Static(lambda r, f: r.branch_summary(message, expanded=f.tools_expanded))]
        if isinstance(message, CustomMessage):
            if not message.display:
                return []
            renderer = self._custom_renderer(message.custom_type)
            return [_Static(lambda r, f: r.custom(message, renderer))]
        return []

    # -- streaming events ----------------------------------------------------------------------

    def on_agent_event(self, event: object) -> None:
        if isinstance(event, MessageStart):
            if isinstance(event.message, AssistantMessage):
                self._reply = _Pending()
            elif not isinstance(event.message, ToolResultMessage):
                for block in self._blocks_of(event.message):
                    self.live.append(block)
                self.commit_ready()
        elif isinstance(event, MessageUpdate):
            self._on_update(event)
        elif isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            self._end_reply(event.message)
        elif isinstance(event, ToolExecutionStart) and event.parent_tool_call_id is None:
            # (a call a tool made, a codemode script's, shows in its caller's block, as in pi)
            if event.tool_call_id not in self._tools:  # a call that did not stream (an extension's)
                tool = ToolBlock(ToolCall(event.tool_call_id, event.tool_name, dict(event.args)))
                tool.definition = self._tool_definition(event.tool_name)
                self._tools[event.tool_call_id] = tool
                self.live.append(tool)
            self._tools[event.tool_call_id].started_at = time.monotonic()
            self._changed()
        elif isinstance(event, ToolExecutionUpdate):
            running = self._tools.get(event.tool_call_id)
            if running is not None:
                running.partial_text = "".join(
                    c.text for c in event.partial_result.content if isinstance(c, TextContent)
                )
                self._changed()
        elif isinstance(event, ToolExecutionEnd):
            done = self._tools.pop(event.tool_call_id, None)
            if done is not None:
                done.result = ToolResultMessage(
                    event.tool_call_id,
                    event.tool_name,
                    list(event.result.content),
                    is_error=event.is_error,
                    details=event.result.details,
                )
                done.partial_text = None
                done.duration_ms = event.duration_ms
                done.finished = True
                self.commit_ready()

    def _on_update(self, event: MessageUpdate) -> None:
        update = event.assistant_message_event
        blocks = self._reply.by_index
        if isinstance(update, TextStartEvent | TextDeltaEvent):
            block = blocks.get(update.content_index)
            if not isinstance(block, TextBlock):
                width = self._flags().width
                renderer = self._renderer(width)
                block = TextBlock(width, self._theme(), renderer.output_pad, renderer.color_system)
                if renderer.markdown is not None:
                    # Extensions transform the whole reply: it is drawn whole in the live area
                    # until it ends, instead of being committed piece by piece as it streams.
                    block.stream = None
                blocks[update.content_index] = block
                self.live.append(block)
            if isinstance(update, TextDeltaEvent):
                block.append(update.delta)
                self._commit_soon()
        elif isinstance(update, ThinkingStartEvent | ThinkingDeltaEvent):
            thinking = blocks.get(update.content_index)
            if not isinstance(thinking, ThinkingBlock):
                thinking = ThinkingBlock()
                blocks[update.content_index] = thinking
                self.live.append(thinking)
            if isinstance(update, ThinkingDeltaEvent):
                thinking.parts.append(update.delta)
                self._changed()
        elif isinstance(update, ToolCallStartEvent | ToolCallDeltaEvent | ToolCallEndEvent):
            content = (
                update.partial.content[update.content_index]
                if update.content_index < len(update.partial.content)
                else None
            )
            call = update.tool_call if isinstance(update, ToolCallEndEvent) else content
            if not isinstance(call, ToolCall):
                return
            tool = blocks.get(update.content_index)
            if not isinstance(tool, ToolBlock):
                tool = ToolBlock(call, self._tool_definition(call.name))
                blocks[update.content_index] = tool
                self.live.append(tool)
            tool.call = call
            self._tools[call.id] = tool
            self._changed()

    def _end_reply(self, message: AssistantMessage) -> None:
        for block in self._reply.by_index.values():
            if isinstance(block, TextBlock | ThinkingBlock):
                block.finished = True
        if message.stop_reason in ("error", "aborted"):
            for tool in self._reply.by_index.values():
                if isinstance(tool, ToolBlock) and tool.result is None:
                    tool.finished = True  # it will never run
                    self._tools.pop(tool.call.id, None)
            self.live.append(_Static(lambda r, f: r.assistant_error(message)))
        self._reply = _Pending()
        self.commit_ready()

    def finish_run(self) -> None:
        """The run is over: whatever still waits (a call that never ran) is final now."""
        for block in self.live:
            block.finished = True
        self._tools.clear()
        self.commit_ready()

    # -- scrollback and the live area ----------------------------------------------------------

    def _commit_soon(self) -> None:
        """Look for newly stable markdown once per frame, not once per delta (a delta is a few
        characters; finding block boundaries means parsing the open part of the reply)."""
        if self._commit_handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.commit_ready()
            return
        self._commit_handle = loop.call_later(COMMIT_INTERVAL, self._scheduled_commit)
        self._changed()

    def _scheduled_commit(self) -> None:
        self._commit_handle = None
        self.commit_ready()

    def commit_ready(self) -> None:
        if self._commit_handle is not None:
            self._commit_handle.cancel()
            self._commit_handle = None
        flags = self._flags()
        renderer = self._renderer(flags.width)
        while self.live:
            block = self.live[0]
            if isinstance(block, TextBlock) and block.stream is not None:
                stable = block.stream.take_stable() if block.streamed_width == flags.width else None
                if stable:
                    self._write(_padded(stable, block.pad), not block.committed_any)
                    block.committed_any = True
                if not block.finished:
                    break
                rest = block.stream.finish() if block.streamed_width == flags.width else None
                block.stream = None
                if rest is None or not block.committed_any:
                    rest = block.render(renderer, flags)
                else:
                    rest = _padded(rest, block.pad)
                if rest:
                    self._write(rest, not block.committed_any)
                self.history.append(block)
                self.live.pop(0)
                continue
            if not block.finished:
                break
            text = block.render(renderer, flags)
            if text:
                self._write(text, True)
            self.history.append(block)
            self.live.pop(0)
        self._changed()

    def live_text(self, max_lines: int | None = None) -> str:
        """ANSI of the blocks not yet in scrollback (a streaming reply's last ``max_lines`` only)."""
        if self._commit_handle is not None:
            self.commit_ready()  # commit first: the tail to draw is then at most one block
        flags = self._flags()
        renderer = self._renderer(flags.width)
        parts: list[str] = []
        for block in self.live:
            if isinstance(block, TextBlock) and block.stream is not None:
                tail = block.stream.render_tail(max_lines)
                if tail:
                    parts.append(_padded(tail, block.pad))
            elif isinstance(block, ThinkingBlock) and not block.finished and flags.show_thinking:
                # Only the tail is drawn while it streams, so a long thought costs the same per frame.
                tail = "".join(block.parts)[-_LIVE_THINKING_CHARS:]
                parts.append(renderer.thinking(tail, expanded=True))
            else:
                text = block.render(renderer, flags)
                if text:
                    parts.append(text)
        return "\n".join(parts)

    def render_all(self) -> list[str]:
        """Every committed block drawn afresh (after a resize or a display toggle)."""
        flags = self._flags()
        renderer = self._renderer(flags.width)
        from tau.modes.interactive.render.markdown import StreamingMarkdown

        out: list[str] = []
        for block in self.history:
            text = block.render(renderer, flags)
            if text:
                out.append(text)
        for block in self.live:
            if isinstance(block, TextBlock) and block.stream is not None:
                # Restart the stream at the new width: what it had committed is re-drawn whole.
                block.pad = renderer.output_pad
                block.stream = StreamingMarkdown(
                    width=flags.width - 2 * block.pad,
                    theme=self._theme(),
                    color_system=renderer.color_system,
                    diagrams=True,
                )
                block.stream.append(block.text)
                block.streamed_width = flags.width
                block.committed_any = False
        return out

    def clear(self) -> None:
        self.history.clear()
        self.live.clear()
        self._tools.clear()
        self._reply = _Pending()


def _entry_ms(entry: CustomEntry) -> int:
    """An entry's ISO timestamp in milliseconds (0 when it cannot be read)."""
    from datetime import datetime

    try:
        return int(datetime.fromisoformat(entry.timestamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def _text_drawer(text: str) -> Callable[[BlockRenderer, ViewFlags], str]:
    return lambda renderer, flags: renderer.assistant_text(text)


def _padded(text: str, pad: int) -> str:
    from tau.modes.interactive.render.padding import pad_lines

    return pad_lines(text, pad)

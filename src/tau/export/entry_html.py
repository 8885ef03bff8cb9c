"""One HTML node per session entry: messages in full, summaries marked, settings as small notices.

Every node is an ``<article id="e-<entry id>">``; entries off the branch shown first carry
``hidden`` so the page reads right before (or without) its script. All text from the session goes
through ``escape`` or the markdown renderer; nothing here writes session text into HTML unescaped.
"""

from __future__ import annotations

from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.export import formatting
from tau.export.formatting import as_text
from tau.export.markup import MarkdownRenderer, escape, plain_code
from tau.export.media import render_image
from tau.export.tool_html import ToolHtml, line_count, output_box, strip_ansi
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from tau.session.messages import BashExecutionMessage, CustomMessage

UserContent = str | list[TextContent | ImageContent]


class EntryRenderer:
    """Renders the entries of one session; ``labels`` maps entry ids to their current label."""

    def __init__(self, markdown: MarkdownRenderer, tools: ToolHtml, labels: dict[str, str]) -> None:
        self._md = markdown
        self._tools = tools
        self._labels = labels

    def render(self, entry: SessionEntry, *, hidden: bool) -> str:
        kind, title, body = self._parts(entry)
        entry_id = escape(entry.id)
        label = self._labels.get(entry.id)
        label_html = f'<span class="label-badge">{escape(label)}</span>' if label else ""
        return (
            f'<article class="entry {kind}" id="e-{entry_id}"{" hidden" if hidden else ""}>'
            f'<div class="meta"><span class="role">{title}</span>{label_html}'
            f'<time datetime="{escape(entry.timestamp)}">{escape(formatting.clock_time(entry.timestamp))}</time>'
            f'<a class="anchor" href="#e-{entry_id}" title="Link to this entry">#</a></div>'
            f"{body}</article>"
        )

    def _parts(self, entry: SessionEntry) -> tuple[str, str, str]:
        """CSS classes (ours, never session text), title HTML and body HTML of an entry."""
        if isinstance(entry, MessageEntry):
            message = entry.message
            if isinstance(message, UserMessage):
                return "user", "User", self._content(message.content)
            if isinstance(message, AssistantMessage):
                return "assistant", "Assistant", self._assistant(message)
            if isinstance(message, ToolResultMessage):
                kind = "tool-result error" if message.is_error else "tool-result"
                return kind, "Tool result", self._tools.result(message)
            if isinstance(message, BashExecutionMessage):
                return "bash", "User shell", self._bash(message)
            if isinstance(message, CustomMessage):
                return self._custom(message.custom_type, message.content, message.display)
            return "notice", escape(message.role), ""
        if isinstance(entry, CustomMessageEntry):
            return self._custom(entry.custom_type, entry.content, entry.display)
        if isinstance(entry, CompactionEntry):
            return "compaction marked", "Compaction", self._compaction(entry)
        if isinstance(entry, BranchSummaryEntry):
            origin = (
                "the start" if entry.from_id == "root" else f'<a href="#e-{escape(entry.from_id)}">here</a>'
            )
            note = f'<p class="note">Summary of a branch left behind; the conversation went on from {origin}.</p>'
            return "branch-summary marked", "Branch summary", note + self._md.render(entry.summary)
        return "notice", self._notice(entry), ""

    def _content(self, content: UserContent) -> str:
        if isinstance(content, str):
            return self._md.render(content)
        parts: list[str] = []
        for block in content:
            if isinstance(block, TextContent):
                parts.append(self._md.render(as_text(block.text)))
            elif isinstance(block, ImageContent):
                parts.append(render_image(block))
        return "".join(parts)

    def _assistant(self, message: AssistantMessage) -> str:
        parts: list[str] = []
        for block in message.content:
            if isinstance(block, TextContent):
                parts.append(self._md.render(as_text(block.text)))
            elif isinstance(block, ThinkingContent):
                if block.redacted:
                    parts.append('<div class="thinking redacted">Thinking (redacted)</div>')
                elif as_text(block.thinking).strip():
                    parts.append(
                        '<details class="thinking"><summary>Thinking</summary>'
                        f"{self._md.render(as_text(block.thinking))}</details>"
                    )
            elif isinstance(block, ToolCall):
                parts.append(self._tools.call(block))
        if message.stop_reason in ("error", "aborted"):
            reason = as_text(message.error_message) or (
                "Aborted" if message.stop_reason == "aborted" else "Error"
            )
            parts.append(f'<div class="error-text">{escape(reason)}</div>')
        return "".join(parts) + self._usage(message)

    @staticmethod
    def _usage(message: AssistantMessage) -> str:
        usage = message.usage
        model = f"{as_text(message.provider)}/{as_text(message.model)}"
        figures = [
            f"in {formatting.tokens(usage.input)}",
            f"out {formatting.tokens(usage.output)}",
            f"cache read {formatting.tokens(usage.cache_read)}",
            f"cache write {formatting.tokens(usage.cache_write)}",
            formatting.cost(usage.cost.total),
        ]
        return (
            f'<div class="usage"><span class="model">{escape(model)}</span>'
            + "".join(f"<span>{escape(figure)}</span>" for figure in figures)
            + "</div>"
        )

    @staticmethod
    def _bash(message: BashExecutionMessage) -> str:
        output = strip_ansi(as_text(message.output))
        notes: list[str] = []
        if message.cancelled:
            notes.append("cancelled")
        elif message.exit_code not in (None, 0):
            notes.append(f"exit code {message.exit_code}")
        if message.truncated:
            full = as_text(message.full_output_path)
            notes.append(f"output truncated (full output: {full})" if full else "output truncated")
        if message.exclude_from_context:
            notes.append("not sent to the model")
        status = f'<p class="note">{escape("; ".join(notes))}</p>' if notes else ""
        command = f'<pre class="command"><code>$ {escape(as_text(message.command))}</code></pre>'
        box = output_box(plain_code(output), line_count(output))
        return command + (box if output else "") + status

    def _custom(self, custom_type: str, content: UserContent, display: bool) -> tuple[str, str, str]:
        title = f'Extension message <span class="tag">{escape(as_text(custom_type))}</span>'
        body = self._content(content)
        if not display:
            return "custom undisplayed", title, '<p class="note">Hidden in the terminal UI.</p>' + body
        return "custom", title, body

    def _compaction(self, entry: CompactionEntry) -> str:
        by = " by an extension" if entry.from_hook else ""
        note = (
            f'<p class="note">Earlier history was summarised{by} '
            f"({escape(formatting.tokens(entry.tokens_before))} tokens before compaction); "
            f'the model saw this summary instead, from <a href="#e-{escape(entry.first_kept_entry_id)}">'
            "the first kept entry</a> on.</p>"
        )
        files = ""
        details = entry.details
        if isinstance(details, dict):
            for key, title in (("readFiles", "Files read"), ("modifiedFiles", "Files modified")):
                names = details.get(key)
                if isinstance(names, list) and names:
                    items = "".join(f"<li>{escape(as_text(n))}</li>" for n in names)
                    files += f'<details class="files"><summary>{title} ({len(names)})</summary><ul>{items}</ul></details>'
        return note + self._md.render(entry.summary) + files

    @staticmethod
    def _notice(entry: SessionEntry) -> str:
        if isinstance(entry, ModelChangeEntry):
            return f"Model: {escape(entry.provider)}/{escape(entry.model_id)}"
        if isinstance(entry, ThinkingLevelChangeEntry):
            return f"Thinking level: {escape(entry.thinking_level)}"
        if isinstance(entry, LabelEntry):
            target = f'<a href="#e-{escape(entry.target_id)}">{escape(entry.target_id)}</a>'
            if entry.label:
                return f'Label <span class="label-badge">{escape(entry.label)}</span> on {target}'
            return f"Label cleared on {target}"
        if isinstance(entry, SessionInfoEntry):
            name = (entry.name or "").strip()
            return f"Session name: {escape(name)}" if name else "Session name cleared"
        if isinstance(entry, CustomEntry):
            return f'Extension state <span class="tag">{escape(entry.custom_type)}</span>'
        return f'Entry of unknown type <span class="tag">{escape(entry.type)}</span>'

"""The page: header with the session's facts and totals, the sidebar tree, every entry, the embedded
session data, and the stylesheet and viewer script, filled into ``template.html``.

The session data is embedded as ``base64(gzip(JSON {header, entries, leafId, systemPrompt?,
tools?}))`` in a ``<script type="application/octet-stream">`` element: never executed, and
gzip keeps it to about a third of the session's size, which keeps the page under twice the size of
the session file. The viewer decodes it with ``DecompressionStream`` only to offer the session as a
``.jsonl`` download.

A Content-Security-Policy allows no script but the viewer (by its sha256 hash), no network at all
and images only from ``data:`` URIs: even if some session text escaped escaping, nothing could run
or load.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import Any

from tau.ai.types import AssistantMessage, JsonObject, Tool, ToolCall, ToolResultMessage
from tau.export import formatting
from tau.export.entry_html import EntryRenderer
from tau.export.extension_tools import ExtensionToolHtml
from tau.export.markup import CodeHighlighter, MarkdownRenderer, escape, plain_code
from tau.export.media import IMAGE_REF_PREFIX, RENDERED_IMAGE_KEY, image_key
from tau.export.sidebar import render_tree
from tau.export.source import ExportSource
from tau.export.tool_html import ToolHtml, line_count, output_box
from tau.session.context import path_to
from tau.session.entries import MessageEntry

_ASSETS = resources.files("tau.export")


def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


def build_page(
    source: ExportSource,
    *,
    system_prompt: str | None = None,
    tools: Sequence[Tool] | None = None,
    tool_renderers: ExtensionToolHtml | None = None,
) -> str:
    """The whole HTML document for ``source``; ``tool_renderers``: extensions' tool renderers."""
    entries = source.entries
    by_id = {e.id: e for e in entries}
    leaf = by_id.get(source.leaf_id) if source.leaf_id is not None else None
    leaf = leaf or (entries[-1] if entries else None)
    on_path = {e.id for e in path_to(leaf, by_id)}

    calls: dict[str, ToolCall] = {}
    results: dict[str, ToolResultMessage] = {}
    for entry in entries:
        if isinstance(entry, MessageEntry):
            if isinstance(entry.message, AssistantMessage):
                calls.update((b.id, b) for b in entry.message.content if isinstance(b, ToolCall))
            elif isinstance(entry.message, ToolResultMessage):
                results[entry.message.tool_call_id] = entry.message
    # Separate budgets, so that long file reads cannot take the highlighting from the conversation.
    markdown = MarkdownRenderer(CodeHighlighter())
    renderer = EntryRenderer(
        markdown, ToolHtml(CodeHighlighter(), calls, results, extensions=tool_renderers), source.labels
    )
    body = "".join(renderer.render(e, hidden=e.id not in on_path) for e in entries)

    script = _asset("viewer.js")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = (
        f"default-src 'none'; script-src 'sha256-{script_hash}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    name = source.name
    return Template(_asset("template.html")).substitute(
        csp=csp,
        title=escape(f"{name or 'Session ' + source.header.id} · tau"),
        css=_asset("viewer.css"),
        header=_header(source, system_prompt, tools),
        tree=render_tree(entries, source.labels, on_path),
        entries=body,
        leaf=escape(leaf.id if leaf is not None else ""),
        jsonl_name=escape(os.path.basename(source.session_file)),
        data=_session_data(source, system_prompt, tools, set(RENDERED_IMAGE_KEY.findall(body))),
        script=script,
    )


def _session_data(
    source: ExportSource, system_prompt: str | None, tools: Sequence[Tool] | None, shown_images: set[str]
) -> str:
    entries = [e.to_json() for e in source.entries]
    if shown_images:
        entries = [_image_refs(entry, shown_images) for entry in entries]
    data: JsonObject = {"header": source.header.to_json(), "entries": entries, "leafId": source.leaf_id}
    if system_prompt is not None:
        data["systemPrompt"] = system_prompt
    if tools is not None:
        data["tools"] = [t.to_json() for t in tools]
    try:
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escaped, as JavaScript's JSON.stringify does
        raw = json.dumps(data, separators=(",", ":")).encode("ascii")
    # mtime=0: the same session exports to the same bytes.
    return base64.b64encode(gzip.compress(raw, compresslevel=6, mtime=0)).decode("ascii")


def _image_refs(value: Any, shown: set[str]) -> Any:
    """``value`` with the data of every image the page shows replaced by a reference to it."""
    if isinstance(value, list):
        return [_image_refs(item, shown) for item in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "image" and isinstance(value.get("data"), str):
        key = image_key(value["data"])
        if key in shown:
            return {**value, "data": IMAGE_REF_PREFIX + key}
        return value
    return {k: _image_refs(v, shown) for k, v in value.items()}


def _header(source: ExportSource, system_prompt: str | None, tools: Sequence[Tool] | None) -> str:
    header = source.header
    name = source.name
    facts = [
        ("Session", escape(header.id)),
        ("Directory", escape(header.cwd)),
        ("Created", escape(formatting.date_time(header.timestamp))),
        *_totals(source),
    ]
    rows = "".join(f"<dt>{label}</dt><dd>{value}</dd>" for label, value in facts)
    extras = ""
    if system_prompt:
        extras += (
            '<details class="system-prompt"><summary>System prompt</summary>'
            f"{output_box(plain_code(system_prompt), line_count(system_prompt))}</details>"
        )
    if tools:
        items = "".join(
            f"<dt>{escape(t.name)}</dt><dd>{escape(t.description)}"
            '<details class="arguments"><summary>parameters</summary>'
            f"{plain_code(json.dumps(t.parameters, ensure_ascii=False, indent=2))}</details></dd>"
            for t in tools
        )
        extras += f'<details class="tools"><summary>Tools ({len(tools)})</summary><dl>{items}</dl></details>'
    title = escape(name) if name else "Session"
    return f'<h1>{title}</h1><dl class="facts">{rows}</dl>{extras}'


def _totals(source: ExportSource) -> list[tuple[str, str]]:
    """Messages, branches, models, tokens and cost over every entry of every branch."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    models: dict[str, None] = {}
    tokens_in = tokens_out = cache_read = cache_write = 0.0
    cost = 0.0
    children: set[str] = set()
    for entry in source.entries:
        if entry.parent_id is not None:
            children.add(entry.parent_id)
        if not isinstance(entry, MessageEntry):
            continue
        message = entry.message
        if message.role in counts:
            counts[message.role] += 1
        if isinstance(message, AssistantMessage):
            models[f"{formatting.as_text(message.provider)}/{formatting.as_text(message.model)}"] = None
            usage = message.usage
            tokens_in += formatting.as_number(usage.input)
            tokens_out += formatting.as_number(usage.output)
            cache_read += formatting.as_number(usage.cache_read)
            cache_write += formatting.as_number(usage.cache_write)
            cost += formatting.as_number(usage.cost.total)
    leaves = sum(1 for e in source.entries if e.id not in children)
    return [
        (
            "Messages",
            f"{counts['user']} user, {counts['assistant']} assistant, {counts['toolResult']} tool results "
            f"({len(source.entries)} entries, {leaves} {'branch' if leaves == 1 else 'branches'})",
        ),
        ("Models", escape(", ".join(models)) or "none"),
        (
            "Tokens",
            f"{formatting.tokens(tokens_in)} in, {formatting.tokens(tokens_out)} out, "
            f"{formatting.tokens(cache_read)} cache read, {formatting.tokens(cache_write)} cache write",
        ),
        ("Cost", formatting.cost(cost)),
    ]

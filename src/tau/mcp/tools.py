"""MCP tools as tau tools: names, results, and the ``tool_search`` ranking.

A server tool is ``mcp__<server>__<tool>`` with every character other than letters, digits and
``_`` replaced by ``_`` (pi's rule); a name that is then too long for providers (64) or taken by
another tool of the server gets a short hash suffix.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msgspec import Struct

from tau.agent.tool import AgentToolResult
from tau.ai.types import ImageContent, TextContent

__all__ = ["SearchDocument", "mcp_tool_name", "rank_tools", "schema_text", "to_tool_result"]

_MAX_NAME = 64
_TEXT_LIMIT = 20_000


def mcp_tool_name(server: str, tool: str, is_taken: Callable[[str], bool] = lambda _: False) -> str:
    """The tau name of ``tool`` of ``server`` (see the module docstring)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__{tool}")
    if len(name) <= _MAX_NAME and not is_taken(name):
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: _MAX_NAME - len(digest) - 1]}_{digest}"


def _middle_cut(text: str) -> str:
    """Text over 20 KB with its middle replaced by a marker, as pi sends it to the model; the whole
    text is saved to a temporary file the marker names."""
    if len(text) <= _TEXT_LIMIT:
        return text
    import tempfile

    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", prefix="tau-mcp-", suffix=".txt", delete=False
    ) as f:
        f.write(text)
    keep = _TEXT_LIMIT // 2
    return f"{text[:keep]}\n…{len(text) - 2 * keep} chars truncated (full text: {f.name})…\n{text[-keep:]}"


def to_tool_result(server: str, result: dict[str, Any]) -> AgentToolResult:
    """A ``CallToolResult`` (wire JSON) as a tau result; ``isError`` raises, so the model sees an
    error result. Structured content goes to ``details`` (and to the text when nothing else came)."""
    content: list[TextContent | ImageContent] = []
    for block in result.get("content", []):
        kind = block.get("type")
        if kind == "text":
            content.append(TextContent(_middle_cut(str(block.get("text", "")))))
        elif kind == "image":
            content.append(ImageContent(block.get("data", ""), block.get("mimeType", "image/png")))
        elif kind == "resource":
            resource = block.get("resource", {})
            text = resource.get("text")
            content.append(
                TextContent(_middle_cut(text) if text is not None else f"[resource {resource.get('uri')}]")
            )
        elif kind == "resource_link":
            content.append(
                TextContent(
                    f"[resource {block.get('uri')} of server {server}: read it with read_mcp_resource]"
                )
            )
        else:
            content.append(TextContent(f"[{kind} content omitted]"))
    structured = result.get("structuredContent")
    if not content and structured is not None:
        content.append(TextContent(_middle_cut(json.dumps(structured, ensure_ascii=False))))
    if result.get("isError"):
        text = "\n".join(c.text for c in content if isinstance(c, TextContent))
        raise RuntimeError(text or f"the MCP server {server!r} reported an error")
    return AgentToolResult(content=content, details={"structuredContent": structured} if structured else None)


class SearchDocument(Struct, frozen=True):
    """What ``tool_search`` ranks a tool by."""

    name: str
    tool: str
    description: str
    server_description: str = ""
    parameters: str = ""
    """The names and descriptions of the tool's parameters (``schema_text``)."""


def schema_text(schema: Any) -> str:
    """The property names and descriptions of an input schema, ``$ref``s into ``$defs`` followed once
    each, as search text."""
    if not isinstance(schema, dict):
        return ""
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    words: list[str] = []
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/") and ref not in seen:
            seen.add(ref)
            walk(definitions.get(ref.rsplit("/", 1)[-1]))
        for name, child in (node.get("properties") or {}).items():
            words.append(str(name))
            if isinstance(child, dict) and isinstance(child.get("description"), str):
                words.append(child["description"])
            walk(child)
        for key in ("items", "anyOf", "oneOf", "allOf"):
            value = node.get(key)
            for child in value if isinstance(value, list) else [value]:
                walk(child)

    walk(schema)
    return " ".join(words)


def _terms(text: str) -> list[str]:
    """Lower-case words, with snake_case, kebab-case and camelCase split."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def rank_tools(query: str, documents: Sequence[SearchDocument], limit: int) -> list[SearchDocument]:
    """The ``limit`` best matches of ``query`` (BM25-like: rare words count more, words of the tool's
    own name count triple); an exact tool name wins outright. No match scores zero and is left out."""
    wanted = set(_terms(query))
    exact = query.strip()
    if not wanted:
        return []
    bags = [_bag(d) for d in documents]
    count = len(documents)
    frequency = {t: sum(1 for bag in bags if t in bag) for t in wanted}
    scored: list[tuple[bool, int, float, int]] = []
    for index, (document, bag) in enumerate(zip(documents, bags, strict=True)):
        covered = [t for t in wanted if t in bag]
        if not covered:
            continue
        score = sum(
            bag[t] * math.log(1 + (count - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in covered
        )
        is_exact = exact in (document.name, document.tool)
        scored.append((is_exact, len(covered), score, index))
    scored.sort(key=lambda s: (not s[0], -s[1], -s[2], s[3]))
    return [documents[index] for *_, index in scored[:limit]]


def _bag(document: SearchDocument) -> dict[str, float]:
    bag: dict[str, float] = {}
    for weight, texts in (
        (3.0, (document.tool,)),
        (1.0, (document.description, document.server_description, document.parameters)),
    ):
        for term in _words(texts):
            bag[term] = bag.get(term, 0.0) + weight
    return bag


def _words(texts: Iterable[str]) -> list[str]:
    return [term for text in texts for term in _terms(text)]

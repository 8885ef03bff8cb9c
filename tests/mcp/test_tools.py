"""MCP tool names, results and the tool_search ranking (tau.mcp.tools)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tau.ai.types import ImageContent, TextContent
from tau.mcp.tools import SearchDocument, mcp_tool_name, rank_tools, schema_text, to_tool_result


def test_tool_names_replace_other_characters_and_get_a_hash_when_too_long_or_taken() -> None:
    assert mcp_tool_name("dev-radius", "get.issue") == "mcp__dev_radius__get_issue"
    long = mcp_tool_name("server", "x" * 80)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")
    taken = {"mcp__s__a_b"}
    assert mcp_tool_name("s", "a-b", taken.__contains__) != "mcp__s__a_b"


def test_a_result_keeps_text_and_images_and_an_error_result_raises_its_text() -> None:
    result = to_tool_result(
        "s",
        {
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
            "structuredContent": {"n": 1},
        },
    )
    assert result.content == [TextContent("hi"), ImageContent("AAAA", "image/png")]
    assert result.details == {"structuredContent": {"n": 1}}
    with pytest.raises(RuntimeError, match="no such issue"):
        to_tool_result("s", {"content": [{"type": "text", "text": "no such issue"}], "isError": True})


def test_long_text_loses_its_middle_around_a_marker() -> None:
    text = "a" * 15_000 + "b" * 15_000
    (block,) = to_tool_result("s", {"content": [{"type": "text", "text": text}]}).content
    assert isinstance(block, TextContent)
    assert block.text.startswith("a" * 100) and block.text.endswith("b" * 100)
    marker = block.text[10_000:-10_000]  # between the kept head and tail
    assert marker.startswith("\n…10000 chars truncated (full text: ")
    saved = Path(marker.split("full text: ", 1)[1].split(")…", 1)[0])
    assert saved.read_text(encoding="utf-8") == text
    saved.unlink()


def test_ranking_prefers_the_tool_whose_own_name_and_description_cover_the_query() -> None:
    documents = [
        SearchDocument(f"mcp__big__tool_{n}", f"tool_{n}", f"Tool {n}: handle record kind {n}.")
        for n in range(50)
    ]
    documents.append(
        SearchDocument("mcp__gh__create_issue", "create_issue", "Open a new issue in a repository.")
    )
    documents.append(
        SearchDocument("mcp__gh__list_issues", "list_issues", "List the issues of a repository.")
    )

    assert [d.name for d in rank_tools("create issue", documents, 1)] == ["mcp__gh__create_issue"]
    assert rank_tools("tool_7", documents, 3)[0].name == "mcp__big__tool_7"
    assert rank_tools("zebra", documents, 3) == []


def test_search_text_covers_parameters_behind_a_ref_and_survives_a_recursive_schema() -> None:
    schema = {
        "type": "object",
        "properties": {"filter": {"$ref": "#/$defs/Filter"}},
        "$defs": {
            "Filter": {
                "type": "object",
                "properties": {
                    "assignee": {"type": "string", "description": "Login of the person"},
                    "parent": {"$ref": "#/$defs/Filter"},
                },
            }
        },
    }
    text = schema_text(schema)
    assert text.split() == ["filter", "assignee", "Login", "of", "the", "person", "parent"]
    documents = [
        SearchDocument("mcp__gh__search", "search", "Search.", parameters=text),
        SearchDocument("mcp__gh__other", "other", "Other."),
    ]
    assert [d.name for d in rank_tools("assignee", documents, 5)] == ["mcp__gh__search"]

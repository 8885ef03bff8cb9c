"""Tests for the tool-set factories in tau.tools."""

from __future__ import annotations

import pytest

from tau.agent.tool import AgentTool
from tau.tools import (
    ALL_TOOL_NAMES,
    CODING_TOOL_NAMES,
    READ_ONLY_TOOL_NAMES,
    create_all_tools,
    create_coding_tools,
    create_read_only_tools,
)


def test_the_coding_set_is_read_bash_edit_write() -> None:
    assert (
        tuple(t.name for t in create_coding_tools("/tmp"))
        == CODING_TOOL_NAMES
        == ("read", "bash", "edit", "write")
    )


def test_the_read_only_set_cannot_change_anything() -> None:
    assert tuple(t.name for t in create_read_only_tools("/tmp")) == READ_ONLY_TOOL_NAMES


def test_the_full_set_has_all_seven_tools() -> None:
    assert tuple(t.name for t in create_all_tools("/tmp")) == ALL_TOOL_NAMES


@pytest.mark.parametrize("tool", create_all_tools("/tmp"), ids=lambda t: t.name)
def test_every_tool_has_a_description_a_one_line_snippet_and_an_object_schema(tool: AgentTool) -> None:
    assert tool.description and tool.prompt_snippet and "\n" not in tool.prompt_snippet
    assert tool.parameters["type"] == "object"
    assert tool.to_tool().name == tool.name

"""A tool result's usage (pi's ``usage`` on a toolResult: what a codemode script's image generations
cost) is written in pi's place, read back, and counted in the session's totals (issue #32)."""

from __future__ import annotations

from tau.ai.types import Cost, TextContent, ToolResultMessage, Usage
from tau.session.entries import MessageEntry, entry_from_json
from tau.session.usage import usages

SPENT = Usage(input=10, output=1290, total_tokens=1300, cost=Cost(output=0.0387, total=0.0387))


def test_a_tool_results_usage_round_trips_in_pis_place_and_counts() -> None:
    message = ToolResultMessage("call_1", "codemode", [TextContent("Script completed")], usage=SPENT)
    entry = MessageEntry(id="a1b2c3d4", parent_id=None, timestamp="2026-12-06T22:00:00.000Z", message=message)
    line = entry.to_json()
    assert list(line["message"]) == [
        "role",
        "toolCallId",
        "toolName",
        "content",
        "usage",
        "isError",
        "timestamp",
    ]
    read = entry_from_json(line)
    assert isinstance(read, MessageEntry) and isinstance(read.message, ToolResultMessage)
    assert read.message.usage == SPENT
    without = MessageEntry(
        id="e5f6a7b8",
        parent_id="a1b2c3d4",
        timestamp="2026-12-06T22:00:01.000Z",
        message=ToolResultMessage("call_2", "read", [TextContent("x")]),
    )
    assert "usage" not in without.to_json()["message"]
    assert [u.cost.total for u in usages([read, without])] == [0.0387]

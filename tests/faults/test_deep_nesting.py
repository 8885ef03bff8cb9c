"""Deeply nested JSON (a line of 100 000 brackets): skipped or refused with a message, never a RecursionError."""

from __future__ import annotations

import pytest
from fault_campaign import Campaign, damaged_session, reopen_and_continue

DEEP_LINES: dict[str, bytes] = {
    "nested-arrays-100k": b"[" * 100_000 + b"]" * 100_000,
    "nested-objects-100k": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "nested-in-an-entry-50k": b'{"type":"custom","customType":"x","id":"d","parentId":null,"timestamp":"t","data":'
    + b"[" * 50_000
    + b"]" * 50_000
    + b"}",
    "nested-unclosed-200k": b"[" * 200_000,
}


@pytest.mark.parametrize("name", sorted(DEEP_LINES))
def test_a_deeply_nested_line_is_skipped_and_kept(campaign: Campaign, name: str) -> None:
    path, before = damaged_session(campaign, DEEP_LINES[name])
    reopen_and_continue(campaign, path, before)

"""Deeply nested JSON (100 000 brackets) in session lines and config files: skipped or refused with
a message, never a RecursionError."""

from __future__ import annotations

import pytest
from fault_campaign import Campaign, damaged_session, reopen_and_continue
from tau_command import MODEL

from tau.testing.fake_llm import Turn

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


DEEP_CONFIG: dict[str, bytes] = {
    "arrays-100k": b"[" * 100_000 + b"]" * 100_000,
    "objects-100k": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    "inside-providers-50k": b'{"providers": {"local": {"models": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}}",
    "unclosed-200k": b"{" * 200_000,
}


@pytest.mark.parametrize("name", sorted(DEEP_CONFIG))
@pytest.mark.parametrize("file", ["models.json", "settings.json", "auth.json"])
def test_a_deeply_nested_config_file_is_refused_with_a_message(
    campaign: Campaign, file: str, name: str
) -> None:
    path = campaign.agent_dir / file
    data = DEEP_CONFIG[name]
    path.write_bytes(data)
    campaign.server.add(Turn(text="ok"))
    campaign.run_check(*MODEL, "-p", "hi")
    assert path.read_bytes() == data

"""The wire checker the ACP tests rely on rejects what the protocol does not allow (else a test
over it could not fail)."""

from __future__ import annotations

import logging

from acp_wire import WireChecker

NEW = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w", "mcpServers": []}}
UPDATE = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}


def _update(update: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def test_a_valid_exchange_passes() -> None:
    wire = WireChecker()
    wire.client_sent(NEW)
    wire.tau_sent({"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s"}})
    wire.tau_sent(_update(UPDATE))
    assert wire.problems == [] and wire.methods == {"session/new", "session/update"}


def test_a_misspelled_optional_field_fails_though_the_model_ignores_it() -> None:
    wire = WireChecker()
    wire.tau_sent(_update({**UPDATE, "contnet": 1}))
    assert len(wire.problems) == 1 and "round-trip" in wire.problems[0]


def test_a_wrong_enum_value_in_what_tau_sends_fails() -> None:
    wire = WireChecker()
    call = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "run", "status": "done"}
    wire.tau_sent(_update(call))
    assert wire.problems


def test_a_client_message_the_protocol_lacks_fails() -> None:
    wire = WireChecker()
    wire.client_sent({"jsonrpc": "2.0", "id": 0, "method": "session/new", "params": {"mcpServers": []}})
    wire.client_sent({"jsonrpc": "2.0", "id": 1, "method": "session/destroy", "params": {}})
    assert len(wire.problems) == 2


def test_an_answer_to_no_request_and_a_result_of_the_wrong_shape_fail() -> None:
    wire = WireChecker()
    wire.tau_sent({"jsonrpc": "2.0", "id": 7, "result": {}})
    wire.client_sent(NEW)
    wire.tau_sent({"jsonrpc": "2.0", "id": 1, "result": {"session": "s"}})
    assert len(wire.problems) == 2


def test_what_the_sdk_logs_as_an_error_counts() -> None:
    wire = WireChecker()
    with wire.sdk_errors():
        logging.getLogger("acp").error("Error parsing JSON-RPC message")
    assert wire.problems == ["the SDK logged: Error parsing JSON-RPC message"]

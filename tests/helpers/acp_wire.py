"""Every message between an ACP client and ``tau --mode acp``, both ways, checked against the
protocol's schema (the SDK's models).

tau builds its messages as plain dicts, so a check that only parses them would let a misspelled
optional field through (the models ignore unknown keys and salvage invalid values): a message
passes only when the model it parses into dumps back to exactly the same JSON. What the client
sends (its requests and its answers to tau's requests) is checked the same way, so a test that
hand-writes a message cannot send tau something the protocol does not allow. A line on tau's
stdout that is not JSON never reaches an observer (the SDK logs it and reads on), so the SDK's
error log counts as a problem too.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from acp import schema
from acp.connection import StreamDirection, StreamEvent
from pydantic import BaseModel

# The client's requests and notifications to tau, by method: the model of their params, and of
# tau's result.
CLIENT_PARAMS: dict[str, type[BaseModel] | tuple[type[BaseModel], ...]] = {
    "initialize": schema.InitializeRequest,
    "authenticate": schema.AuthenticateRequest,
    "session/new": schema.NewSessionRequest,
    "session/load": schema.LoadSessionRequest,
    "session/list": schema.ListSessionsRequest,
    "session/prompt": schema.PromptRequest,
    "session/cancel": schema.CancelNotification,
    "session/set_mode": schema.SetSessionModeRequest,
    "session/set_config_option": (
        schema.SetSessionConfigOptionSelectRequest,
        schema.SetSessionConfigOptionBooleanRequest,
    ),
}
RESULTS: dict[str, type[BaseModel]] = {
    "initialize": schema.InitializeResponse,
    "authenticate": schema.AuthenticateResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/list": schema.ListSessionsResponse,
    "session/prompt": schema.PromptResponse,
    "session/set_mode": schema.SetSessionModeResponse,
    "session/set_config_option": schema.SetSessionConfigOptionResponse,
}
# tau's requests and notifications to the client, by method: the model of their params, and of
# the client's result.
PARAMS: dict[str, type[BaseModel]] = {
    "session/update": schema.SessionNotification,
    "session/request_permission": schema.RequestPermissionRequest,
    "fs/read_text_file": schema.ReadTextFileRequest,
    "fs/write_text_file": schema.WriteTextFileRequest,
    "terminal/create": schema.CreateTerminalRequest,
    "terminal/output": schema.TerminalOutputRequest,
    "terminal/wait_for_exit": schema.WaitForTerminalExitRequest,
    "terminal/kill": schema.KillTerminalRequest,
    "terminal/release": schema.ReleaseTerminalRequest,
}
CLIENT_RESULTS: dict[str, type[BaseModel]] = {
    "session/request_permission": schema.RequestPermissionResponse,
    "fs/read_text_file": schema.ReadTextFileResponse,
    "fs/write_text_file": schema.WriteTextFileResponse,
    "terminal/create": schema.CreateTerminalResponse,
    "terminal/output": schema.TerminalOutputResponse,
    "terminal/wait_for_exit": schema.WaitForTerminalExitResponse,
    "terminal/kill": schema.KillTerminalResponse,
    "terminal/release": schema.ReleaseTerminalResponse,
}


class WireChecker:
    """A stream observer for the SDK's client connection (or fed by hand: ``client_sent`` and
    ``tau_sent``); ``problems`` lists what did not match, ``methods`` what was seen."""

    def __init__(self) -> None:
        self.client_asked: dict[Any, str] = {}
        self.tau_asked: dict[Any, str] = {}
        self.problems: list[str] = []
        self.methods: set[str] = set()
        self.checked = 0

    def observe(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.OUTGOING:
            self.client_sent(event.message)
        else:
            self.tau_sent(event.message)

    def client_sent(self, message: dict[str, Any]) -> None:
        self._message(message, CLIENT_PARAMS, self.client_asked, self.tau_asked, CLIENT_RESULTS, "client")

    def tau_sent(self, message: dict[str, Any]) -> None:
        self._message(message, PARAMS, self.tau_asked, self.client_asked, RESULTS, "tau")

    def _message(
        self,
        message: dict[str, Any],
        params: dict[str, Any],
        asked: dict[Any, str],
        answered: dict[Any, str],
        results: dict[str, type[BaseModel]],
        sender: str,
    ) -> None:
        self.checked += 1
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"{sender}: not JSON-RPC 2.0: {message}")
        if "method" in message:
            method = message["method"]
            self.methods.add(method)
            if "id" in message:
                asked[message["id"]] = method
            model = params.get(method)
            if model is None:
                self.problems.append(f"{sender}: unknown method: {message}")
            else:
                self._check(model, message.get("params"), f"{sender}: {method}")
            return
        method = answered.pop(message.get("id"), None)
        if method is None:
            self.problems.append(f"{sender}: an answer to no request: {message}")
        elif "error" in message:
            error = message["error"]
            if set(message) != {"jsonrpc", "id", "error"}:
                self.problems.append(f"{sender}: an error with more: {message}")
            self._check(schema.Error, error, f"{sender}: {method} error")
        elif set(message) != {"jsonrpc", "id", "result"}:
            self.problems.append(f"{sender}: an answer that is neither result nor error: {message}")
        else:
            result = message["result"]
            # The SDK's client answers a request whose response has no fields with null.
            if result is None and sender == "client":
                result = {}
            self._check(results[method], result, f"{sender}: {method} result")

    def _check(self, model: type[BaseModel] | tuple[type[BaseModel], ...], raw: Any, what: str) -> None:
        failures: list[str] = []
        for candidate in model if isinstance(model, tuple) else (model,):
            try:
                parsed = candidate.model_validate(raw)
            except Exception as exc:
                failures.append(f"{what}: {exc}")
                continue
            again = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
            if again == raw:
                return
            failures.append(f"{what} does not round-trip: sent {raw}, schema reads {again}")
        self.problems.append(" / ".join(failures))

    @contextlib.contextmanager
    def sdk_errors(self) -> Iterator[None]:
        """Count what the SDK logs as an error (a line it could not parse, a handler that failed)."""
        checker = self

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                checker.problems.append(f"the SDK logged: {record.getMessage()}")

        handler = Handler(logging.ERROR)
        logging.getLogger().addHandler(handler)
        try:
            yield
        finally:
            logging.getLogger().removeHandler(handler)

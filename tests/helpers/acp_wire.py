"""Every message ``tau --mode acp`` sends, checked against the protocol's schema (the SDK's models).

tau builds its messages as plain dicts, so a check that only parses them would let a misspelled
optional field through (the models ignore unknown keys and salvage invalid values): a message
passes only when the model it parses into dumps back to exactly the same JSON.
"""

from __future__ import annotations

from typing import Any

from acp import schema
from acp.connection import StreamDirection, StreamEvent
from pydantic import BaseModel

# The client's requests, by method: the model of tau's result.
RESULTS: dict[str, type[BaseModel]] = {
    "initialize": schema.InitializeResponse,
    "session/new": schema.NewSessionResponse,
    "session/load": schema.LoadSessionResponse,
    "session/list": schema.ListSessionsResponse,
    "session/prompt": schema.PromptResponse,
    "session/set_mode": schema.SetSessionModeResponse,
    "session/set_config_option": schema.SetSessionConfigOptionResponse,
}
# tau's requests and notifications to the client, by method: the model of their params.
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


class WireChecker:
    """A stream observer for the SDK's client connection; ``problems`` lists what did not match."""

    def __init__(self) -> None:
        self.asked: dict[Any, str] = {}
        self.problems: list[str] = []
        self.checked = 0

    def observe(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.asked[message["id"]] = message["method"]
            return
        self.checked += 1
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"not JSON-RPC 2.0: {message}")
        if "method" in message:
            model = PARAMS.get(message["method"])
            if model is None:
                self.problems.append(f"unknown method: {message}")
            else:
                self._check(model, message.get("params"), message["method"])
        elif "error" in message:
            error = message["error"]
            if not (isinstance(error.get("code"), int) and isinstance(error.get("message"), str)):
                self.problems.append(f"malformed error: {message}")
        else:
            method = self.asked.get(message.get("id"))
            model = RESULTS.get(method or "")
            if model is None:
                self.problems.append(f"a result of no known request: {message}")
            else:
                self._check(model, message.get("result"), f"{method} result")

    def _check(self, model: type[BaseModel], raw: Any, what: str) -> None:
        try:
            parsed = model.model_validate(raw)
        except Exception as exc:
            self.problems.append(f"{what}: {exc}")
            return
        again = parsed.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if again != raw:
            self.problems.append(f"{what} does not round-trip: sent {raw}, schema reads {again}")

"""JSON-RPC 2.0 over newline-delimited JSON, both ways: the ACP agent's side of the connection.

tau speaks the framing itself, with plain dicts in the protocol's camelCase: the SDK's pydantic
models cost about half a second to import, more than a whole 20-turn prompt takes (the SDK's client
side validates every message tau sends in the tests). Each incoming request runs in its own task, so
a ``session/cancel`` reaches a prompt that is running. Messages go out in call order; those of one
event-loop step (a tool call's updates, a response) leave in one write, since each write to the
pipe wakes the editor.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from tau._unicode import dumps
from tau.errors import TauError

__all__ = ["PROTOCOL_VERSION", "Connection", "Handler", "JsonRpcError", "Writer", "param"]

PROTOCOL_VERSION = 1

Handler = Callable[[str, dict[str, Any]], Awaitable[Any]]


class Writer(Protocol):
    """Where messages go: an ``asyncio.StreamWriter`` on a pipe, or a plain file."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...

    def is_closing(self) -> bool: ...

    def close(self) -> None: ...


class JsonRpcError(TauError):
    """A JSON-RPC error, raised by a handler (sent to the client) or by ``request`` (the client's)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    @classmethod
    def invalid_request(cls, message: str) -> JsonRpcError:
        return cls(-32600, "Invalid request", {"message": message})

    @classmethod
    def method_not_found(cls, method: str) -> JsonRpcError:
        return cls(-32601, "Method not found", {"method": method})

    @classmethod
    def invalid_params(cls, message: str) -> JsonRpcError:
        return cls(-32602, "Invalid params", {"message": message})

    @classmethod
    def internal_error(cls, message: str) -> JsonRpcError:
        return cls(-32603, "Internal error", {"message": message})

    @classmethod
    def auth_required(cls, message: str) -> JsonRpcError:
        return cls(-32000, "Authentication required", {"message": message})

    @classmethod
    def resource_not_found(cls, uri: str) -> JsonRpcError:
        return cls(-32002, "Resource not found", {"uri": uri})

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.data is not None:
            error["data"] = self.data
        return error


def param(params: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    """``params[name]`` checked against ``kind``; a missing or mistyped field is invalid params."""
    value = params.get(name, default)
    if value is ...:
        raise JsonRpcError.invalid_params(f"{name} is required")
    if value is not default and not isinstance(value, kind):
        raise JsonRpcError.invalid_params(f"{name} has the wrong type")
    return value


class Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        self._reader = reader
        self._writer = writer
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._outgoing: list[bytes] = []

    @property
    def closed(self) -> bool:
        return self._writer.is_closing()

    def _write(self, message: dict[str, Any]) -> None:
        line = dumps(message) + "\n"  # lone surrogates escaped: the line always encodes as UTF-8
        if not self._outgoing:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outgoing.append(line.encode("utf-8"))

    def _flush(self) -> None:
        data, self._outgoing = b"".join(self._outgoing), []
        if data and not self.closed:  # the client is gone: what it would have read is dropped
            self._writer.write(data)

    async def drain(self) -> None:
        """Wait until what was written has gone to the pipe (flow control); never fails."""
        self._flush()
        with contextlib.suppress(Exception):
            await self._writer.drain()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Ask the client; its result, or ``JsonRpcError`` (also when the connection closes first)."""
        if self.closed:
            raise JsonRpcError(-32603, "the client is gone")
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._write({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)

    async def serve(self, handler: Handler) -> None:
        """Read and dispatch messages until end of input."""
        while True:
            try:
                line = await self._reader.readline()
            except (ValueError, asyncio.LimitOverrunError):  # one line over the limit
                self._write(_error(None, JsonRpcError(-32700, "Parse error", {"message": "line too long"})))
                continue
            except (ConnectionError, OSError):
                break
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                self._write(_error(None, JsonRpcError(-32700, "Parse error")))
                continue
            if isinstance(message, dict):
                self._dispatch(message, handler)
            else:
                self._write(_error(None, JsonRpcError.invalid_request("a message is a JSON object")))
        self._fail_pending()

    def _dispatch(self, message: dict[str, Any], handler: Handler) -> None:
        method = message.get("method")
        if isinstance(method, str):
            task = asyncio.get_running_loop().create_task(self._run(message, method, handler))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif "id" in message:
            future = self._pending.get(message["id"]) if isinstance(message["id"], int) else None
            if future is None or future.done():
                return
            error = message.get("error")
            if isinstance(error, dict):
                future.set_exception(
                    JsonRpcError(
                        int(error.get("code", -32603)), str(error.get("message", "error")), error.get("data")
                    )
                )
            else:
                future.set_result(message.get("result"))

    async def _run(self, message: dict[str, Any], method: str, handler: Handler) -> None:
        params = message.get("params")
        is_request = "id" in message
        try:
            if params is not None and not isinstance(params, dict):
                raise JsonRpcError.invalid_params("params is an object")
            result = await handler(method, params or {})
        except JsonRpcError as exc:
            if is_request:
                self._write(_error(message["id"], exc))
            return
        except Exception as exc:  # a bug in tau: the client gets the message, stderr the trace
            traceback.print_exc(file=sys.stderr)
            if is_request:
                self._write(
                    _error(message["id"], JsonRpcError.internal_error(str(exc) or type(exc).__name__))
                )
            return
        if is_request:
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(JsonRpcError(-32603, "the client is gone"))

    async def close(self) -> None:
        self._flush()
        self._fail_pending()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        with contextlib.suppress(Exception):
            self._writer.close()


def _error(request_id: Any, error: JsonRpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": error.to_json()}

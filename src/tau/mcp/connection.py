"""One MCP server connection: start it, keep it, call it, notice when it is gone.

The SDK's transports and ``ClientSession`` are async context managers that must be entered and left
in one task, so ``_serve`` owns them and holds them open until ``close``; tool calls come from other
tasks through the session. A connection that breaks (the server exits, the HTTP stream drops) is
marked ``disconnected`` with the reason, and the next call starts it again. Each request has the
server's ``timeout``; a server that does not answer in time fails that call but stays connected.

Over HTTP, as in pi: connecting is tried twice more (after 0.25 s and 1 s) when it fails on a
network error or a transient status (408, 429, 5xx but 501); a read-only request (resources) is
tried once more after such a status, a tool call is not (it may have run); a request the server
refuses because it forgot the session (404) is sent once more on a new session.

A stdio server runs in a process group of its own, registered in ``tau._process_groups``: when the
connection ends (and when tau ends), whatever is left of the group is ended, also after the server
exited cleanly, since a helper it started may still run. A server that exits is described by its
exit status and the last line of its stderr. A tool in the server's list that is not a valid MCP
tool is left out with a warning (``skipped_tools``); the other tools stay usable.

This module imports the ``mcp`` SDK (the ``tau-agent[mcp]`` extra) when a server first starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import threading
from collections.abc import AsyncIterator, Callable
from typing import IO, Any, Literal, TypeAlias

from tau import _process_groups as process_groups
from tau.config.mcp_servers import ServerConfig
from tau.errors import TauError

__all__ = [
    "MISSING_SDK_MESSAGE",
    "ConnectionState",
    "McpCallError",
    "ServerConnection",
    "import_sdk",
    "require_sdk",
]

ConnectionState: TypeAlias = Literal[
    "idle", "connecting", "connected", "failed", "disconnected", "needs-auth"
]
MISSING_SDK_MESSAGE = "MCP servers need the MCP SDK: pip install 'tau-agent[mcp]'"
_STDERR_TAIL = 2000
_CONNECT_RETRY_DELAYS = (0.25, 1.0)
_REQUEST_RETRY_DELAY = 0.25


class McpCallError(TauError):
    """A request to a server failed (not answered in time, the server went away, or it refused)."""


def require_sdk() -> None:
    """Raise ``McpCallError`` with the one-line install hint when the SDK is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise McpCallError(MISSING_SDK_MESSAGE) from None


def _dump(model: Any) -> dict[str, Any]:
    """An SDK object as its wire JSON (camelCase)."""
    data: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data


def _closed_by_server(exc: BaseException) -> bool:
    """Whether a failure is the server closing the connection (a stdio server that exited)."""
    import anyio
    from mcp.shared.exceptions import MCPError

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return exc.error.code == _CONNECTION_CLOSED
    return isinstance(exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream))


def _reason(exc: BaseException) -> str:
    """The real failure inside anyio's task-group wrappers, as one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename:
        text = f"{exc.strerror or exc}: {exc.filename}"
    return text.splitlines()[0]


class ServerConnection:
    """The connection to one configured server (see the module docstring)."""

    def __init__(
        self,
        config: ServerConfig,
        cwd: str,
        *,
        auth_factory: Callable[[ServerConfig], Any] | None = None,
        on_change: Callable[[ServerConnection], None] | None = None,
        log_dir: str | None = None,
        fence: Callable[[list[str], str], list[str]] | None = None,
    ) -> None:
        """``auth_factory`` makes the httpx auth (OAuth) for an HTTP server; ``on_change`` is called
        whenever the state or the tool list changes; the server's log notifications go to
        ``<log_dir>/mcp.log``. ``fence`` turns a stdio server's command line into the one the
        session's sandbox runs (it may raise: the server does not start)."""
        self._fence = fence
        self.config = config
        self.cwd = cwd
        self.state: ConnectionState = "idle"
        self.error: str | None = None
        self.tools: list[dict[str, Any]] = []
        self.instructions = ""
        self.has_resources = False
        self.starts = 0
        self._auth_factory = auth_factory
        self._log_dir = log_dir
        self._on_change = on_change
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._stop: asyncio.Event | None = None
        self._stderr: IO[bytes] | None = None
        self._refused = False
        self._last_status: int | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._exit_status: int | None = None
        self._last_stderr = ""
        self.skipped_tools: list[str] = []
        """One line per tool of the last listing that was left out, and why."""

    @property
    def name(self) -> str:
        return self.config.name

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> asyncio.Future[None]:
        """Begin connecting in the background (again, when the last connection is gone); returns the
        future that completes once connected (or fails with ``McpCallError``)."""
        if self._ready is not None and self._task is not None and not self._task.done():
            return self._ready
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._ready.add_done_callback(lambda f: f.cancelled() or f.exception())  # never "never retrieved"
        self._stop = asyncio.Event()
        self.state, self.error = "connecting", None
        self.starts += 1
        self._task = loop.create_task(self._serve(self._ready, self._stop), name=f"mcp:{self.name}")
        self._changed()
        return self._ready

    async def connected(self, timeout: float | None = None) -> None:
        """Wait until connected, starting the server when it is not running; raises ``McpCallError``."""
        ready = self.start()
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            raise McpCallError(f"MCP server {self.name!r} did not start within {timeout:g} s") from None

    async def close(self) -> None:
        """Stop the server (stdio: close stdin, then SIGTERM and SIGKILL its process group)."""
        task, stop = self._task, self._stop
        if task is None or stop is None:
            return
        stop.set()
        if self._session is None:
            task.cancel()  # still starting: nothing to wind down politely
        _, pending = await asyncio.wait({task}, timeout=5)
        if pending:
            task.cancel()
            await asyncio.wait({task})
        self._task = None

    async def _serve(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        try:
            await import_sdk()
        except ImportError:
            self._fail(ready, MISSING_SDK_MESSAGE)
            return
        delays = _CONNECT_RETRY_DELAYS if self.config.transport == "http" else ()
        for attempt in range(len(delays) + 1):
            try:
                await self._hold(ready, stop)
            except Exception as exc:
                if not ready.done() and attempt < len(delays) and self._transient(exc):
                    await asyncio.sleep(delays[attempt])
                    continue
                self._fail(ready, self._describe(exc))
            except asyncio.CancelledError:
                if stop.is_set():
                    # Closed while still starting (the session ended, or a reconnect): nothing failed.
                    self.state = "idle"
                    if not ready.done():
                        ready.set_exception(McpCallError(f"MCP server {self.name!r} was stopped"))
                    self._changed()
                else:
                    self._fail(ready, "the connection was cancelled")
                raise
            break
        if stop.is_set() and self.state == "connected":
            self.state = "idle"
            self._changed()

    async def _hold(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Connect, then hold the connection open until ``stop``."""
        from mcp.client.session import ClientSession

        self._last_status = None
        self._exit_status, self._last_stderr = None, ""
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                read, write = await stack.enter_async_context(
                    _checked_tool_lists(read, write, self._skip_tool)
                )
                session = await stack.enter_async_context(
                    ClientSession(
                        read, write, logging_callback=self._on_log, message_handler=self._on_message
                    )
                )
                timeout = self.config.timeout_s  # the handshake's requests are requests like any other
                try:
                    info = _dump(await asyncio.wait_for(session.initialize(), timeout))
                    capabilities = info.get("capabilities", {})
                    tools = (
                        await asyncio.wait_for(self._list_tools(session), timeout)
                        if "tools" in capabilities
                        else []
                    )
                except TimeoutError:
                    raise McpCallError(f"did not answer within {timeout:g} s") from None
                self.instructions = str(info.get("instructions") or "")
                self.has_resources = "resources" in capabilities
                self.tools = tools
                self._session = session
                self.state, self.error = "connected", None
                ready.set_result(None)
                self._changed()
                await stop.wait()
        finally:
            self._session = None
            if self._stderr is not None:
                self._last_stderr = self.stderr_tail()
                self._stderr.close()
                self._stderr = None

    def _transient(self, exc: BaseException) -> bool:
        """Whether an HTTP failure is worth another attempt: a network error, or a status that says
        the server is busy or restarting."""
        if self.config.transport != "http":
            return False
        status = self._last_status
        if status is not None:
            return status in (408, 429) or (status >= 500 and status != 501)
        import httpx2

        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        seen: BaseException | None = exc
        while seen is not None:
            if isinstance(seen, httpx2.TransportError):
                return True
            seen = seen.__cause__ or seen.__context__
        return False

    def _fail(self, ready: asyncio.Future[None], reason: str) -> None:
        if self._session is not None or self.state == "connected":
            self.state = "disconnected"
        elif self._refused or reason.startswith("401"):
            self.state = "needs-auth"
            reason = "the server requires sign-in (HTTP 401)" if self._refused else reason
        else:
            self.state = "failed"
        self.error = reason
        self._session = None
        if not ready.done():
            ready.set_exception(McpCallError(f"MCP server {self.name!r}: {reason}"))
        self._changed()

    def _describe(self, exc: BaseException) -> str:
        """The failure as text: its first line says what happened (for a stdio server that has
        exited: its exit status and the last line it wrote to stderr); more of stderr follows."""
        tail = self.stderr_tail() or self._last_stderr
        if self._exit_status is not None and _closed_by_server(exc):
            status = self._exit_status
            reason = f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"
            lines = [line.strip() for line in tail.splitlines() if line.strip()]
            if lines:
                reason += f": {lines[-1]}"
                tail = "\n".join(lines[:-1])
        else:
            reason = _reason(exc) + (f" (HTTP {self._last_status})" if self._last_status else "")
        return f"{reason}\n{tail}" if tail else reason

    def _skip_tool(self, line: str) -> None:
        self.skipped_tools.append(line)

    def stderr_tail(self) -> str:
        """The last lines a stdio server wrote to stderr (for the error report)."""
        if self._stderr is None:
            return self._last_stderr
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, size - _STDERR_TAIL))
            return self._stderr.read().decode("utf-8", "replace").strip()
        return ""

    def _transport(self) -> Any:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = {key: config.value(value) for key, value in config.env.items()}
            # Relative to the session's folder; a leading ~/ is the home directory (as in pi).
            cwd = os.path.join(self.cwd, os.path.expanduser(config.cwd)) if config.cwd else self.cwd
            argv = [
                os.path.expanduser(config.command),
                *(os.path.expanduser(a) if a.startswith("~/") else a for a in config.args),
            ]
            if self._fence is not None:
                argv = self._fence(argv, cwd)
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env or None, cwd=cwd)
            import tempfile

            self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open while the server runs; closed in _serve
            return self._stdio(stdio_client(params, errlog=self._stderr))  # type: ignore[arg-type]
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {key: config.value(value) for key, value in config.headers.items()}
        has_authorization = any(key.lower() == "authorization" for key in headers)
        auth = self._auth_factory(config) if self._auth_factory and not has_authorization else None
        client = create_mcp_http_client(headers=headers, auth=auth)
        self._refused = False

        async def notice_refusal(response: Any) -> None:
            # The SDK turns an error status into a generic error: keep it for the report and retries.
            if response.request.method == "POST":  # not the optional GET stream of server messages
                self._last_status = response.status_code if response.status_code >= 400 else None
            if response.status_code == 401:
                self._refused = True

        client.event_hooks["response"].append(notice_refusal)
        return _http_transport(streamable_http_client, config.url, client)

    @contextlib.asynccontextmanager
    async def _stdio(self, transport: Any) -> AsyncIterator[Any]:
        """The SDK's stdio transport, with the server's process group registered while it runs and
        ended once the transport has stopped the server (what the server left running goes too)."""
        spawned: list[Any] = []
        token: contextvars.Token[Callable[[Any], None] | None] | None = _SPAWNED.set(spawned.append)
        try:
            async with transport as streams:
                assert token is not None
                _SPAWNED.reset(token)
                token = None
                yield streams
        finally:
            if token is not None:
                _SPAWNED.reset(token)
            self._note_exit(spawned)
            for process in spawned:
                try:
                    await process_groups.close_async(process.pid)
                except BaseException:  # cancelled while the group winds down: no more grace
                    process_groups.kill(process.pid)
                    raise

    def _note_exit(self, spawned: list[Any]) -> None:
        for process in spawned:
            if self._exit_status is None and process.returncode is not None:
                self._exit_status = process.returncode

    async def _on_log(self, params: Any) -> None:
        if self._log_dir is not None:
            from tau.mcp.log import append_server_log

            append_server_log(self._log_dir, self.name, str(params.level), params.logger, params.data)

    async def _on_message(self, message: Any) -> None:
        """A server notification: a changed tool list is fetched again (new tools are added, withdrawn
        ones become unreachable)."""
        from mcp.types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification) and self._session is not None:
            self._refreshing = asyncio.ensure_future(self._refresh_tools(self._session))

    async def _refresh_tools(self, session: Any) -> None:
        try:
            self.tools = await asyncio.wait_for(self._list_tools(session), self.config.timeout_s)
        except Exception:  # the old list stands; the next change notice tries again
            return
        self._changed()

    async def _list_tools(self, session: Any) -> list[dict[str, Any]]:
        from mcp.types import PaginatedRequestParams

        self.skipped_tools = []
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            tools += [_dump(tool) for tool in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tools

    # -- requests ----------------------------------------------------------------------------

    async def request(self, what: str, call: Callable[[Any], Any], *, read_only: bool = False) -> Any:
        """``await call(session)`` on a live connection (started first when needed), within the
        server's timeout. A broken connection is marked so the next request starts it again;
        over HTTP, a ``read_only`` request is tried again after a transient status, and any request
        once more on a new session when the server forgot this one."""
        try:
            return await self._request_once(what, call)
        except _RetryableError as exc:
            if exc.new_session:
                await self._drop("the server no longer knew the session")
            elif read_only:
                await asyncio.sleep(_REQUEST_RETRY_DELAY)
            else:
                raise exc.error from None
        try:
            return await self._request_once(what, call)
        except _RetryableError as exc:
            raise exc.error from None

    async def _request_once(self, what: str, call: Callable[[Any], Any]) -> Any:
        timeout = self.config.timeout_s
        await self.connected(timeout)
        session = self._session
        if session is None:
            raise McpCallError(f"MCP server {self.name!r} is {self.state}: {self.error or 'not connected'}")
        self._last_status = None
        try:
            result = await asyncio.wait_for(call(session), timeout)
            if self._refreshing is not None:
                # A tool list changed during the call (the notice comes before the result): let the
                # new tools be registered before the model is asked again.
                await asyncio.wait({self._refreshing}, timeout=timeout)
                self._refreshing = None
            return result
        except TimeoutError:
            raise McpCallError(
                f"MCP server {self.name!r} did not answer {what} within {timeout:g} s"
            ) from None
        except Exception as exc:
            from mcp.shared.exceptions import MCPError

            if isinstance(exc, MCPError) and exc.error.code != _CONNECTION_CLOSED:
                status = f" (HTTP {self._last_status})" if self._last_status else ""
                error = McpCallError(f"MCP server {self.name!r} refused {what}: {exc.error.message}{status}")
                if self._last_status == 404 and exc.error.message == "Session terminated":
                    raise _RetryableError(error, new_session=True) from None
                if self._transient(exc):
                    raise _RetryableError(error, new_session=False) from None
                raise error from None
            # Stopped first: a server that exited is then described by its exit status.
            failure = exc
            await self._drop(lambda: self._describe(failure))
            reason = self.error or ""
            raise McpCallError(
                f"MCP server {self.name!r} failed during {what} ({reason.splitlines()[0]}); "
                "it is restarted on the next call"
            ) from None

    async def _drop(self, reason: str | Callable[[], str]) -> None:
        """Forget a broken connection (its task is stopped) so that the next request reconnects;
        ``reason`` may be a function, asked once the server has stopped."""
        self.error = reason if isinstance(reason, str) else None
        await self.close()
        self.state, self.error = "disconnected", reason if isinstance(reason, str) else reason()
        self._changed()

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The ``CallToolResult`` of ``tool`` as wire JSON."""
        result = await self.request(f"{tool!r}", lambda s: s.call_tool(tool, arguments))
        return _dump(result)

    async def list_resources(self, cursor: str | None = None) -> dict[str, Any]:
        from mcp.types import PaginatedRequestParams

        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        return _dump(
            await self.request("resources/list", lambda s: s.list_resources(params=params), read_only=True)
        )

    async def list_resource_templates(self, cursor: str | None = None) -> dict[str, Any]:
        from mcp.types import PaginatedRequestParams

        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        return _dump(
            await self.request(
                "resources/templates/list", lambda s: s.list_resource_templates(params=params), read_only=True
            )
        )

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return _dump(await self.request("resources/read", lambda s: s.read_resource(uri), read_only=True))


_SDK_MODULES = (
    "mcp",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "mcp.shared._httpx_utils",
    "mcp.types",
    "mcp.client.auth",
    "mcp.client.auth.utils",
    "mcp.shared.auth",
)
_IMPORTING = threading.Lock()


async def import_sdk() -> None:
    """Import the SDK in a worker thread: it takes most of a second, which the event loop (the
    session starting, the first request streaming) must not wait for. One thread at a time: the
    SDK's modules import each other in circles, which two threads importing at once can see half
    made. Everything in tau that uses the SDK awaits this first."""
    import sys

    if not all(name in sys.modules for name in _SDK_MODULES):
        await asyncio.to_thread(_import_modules)


def _import_modules() -> None:
    import importlib
    import logging

    with _IMPORTING:
        # The SDK logs failures (with tracebacks) that tau reports itself, in one line.
        sdk_log = logging.getLogger("mcp")
        sdk_log.addHandler(logging.NullHandler())
        sdk_log.propagate = False
        for name in _SDK_MODULES:
            importlib.import_module(name)
        _track_stdio_spawns(importlib.import_module("mcp.client.stdio"))


_SPAWNED: contextvars.ContextVar[Callable[[Any], None] | None] = contextvars.ContextVar(
    "tau_mcp_spawned", default=None
)
"""Told each server process the SDK's stdio transport starts in this context (see ``_stdio``)."""


def _track_stdio_spawns(stdio: Any) -> None:
    """Register every process the SDK's stdio transport starts (in a new session of its own) as a
    process group of tau's, and tell the connection starting it. The SDK offers no hook for this,
    so its one spawning function is wrapped; an SDK without it fails loudly at the first start."""
    original = stdio._create_platform_compatible_process
    if getattr(original, "tau_tracked", False):
        return

    async def create(*args: Any, **kwargs: Any) -> Any:
        with process_groups.spawning():
            process = await original(*args, **kwargs)
            process_groups.started(process.pid)
        report = _SPAWNED.get()
        if report is not None:
            report(process)
        return process

    create.tau_tracked = True  # type: ignore[attr-defined]
    stdio._create_platform_compatible_process = create


class _RetryableError(TauError):
    """A refusal another attempt may get past (see ``ServerConnection.request``)."""

    def __init__(self, error: McpCallError, *, new_session: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.new_session = new_session


_CONNECTION_CLOSED = -32000
"""The JSON-RPC code the SDK gives requests cut off by a closed connection."""


@contextlib.asynccontextmanager
async def _checked_tool_lists(
    read: Any, write: Any, on_skip: Callable[[str], None]
) -> AsyncIterator[tuple[Any, Any]]:
    """The session's streams, with every ``tools/list`` answer checked tool by tool on its way in:
    a tool that is not a valid MCP tool is taken out (``on_skip`` gets one line saying which and
    why), so one bad entry does not fail the whole list."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCRequest, JSONRPCResponse

    listings: set[Any] = set()
    to_session, from_server = anyio.create_memory_object_stream[Any](0)
    to_server, from_session = anyio.create_memory_object_stream[Any](0)

    async def inbound() -> None:
        async with to_session:
            async for item in read:
                message = getattr(item, "message", None)
                if isinstance(message, JSONRPCResponse) and message.id in listings:
                    listings.discard(message.id)
                    result = _checked_listing(message.result, on_skip)
                    if result is not message.result:
                        item = SessionMessage(
                            JSONRPCResponse(jsonrpc=message.jsonrpc, id=message.id, result=result),
                            metadata=item.metadata,
                        )
                try:
                    await to_session.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def outbound() -> None:
        async with from_session:
            async for item in from_session:
                message = getattr(item, "message", None)
                if isinstance(message, JSONRPCRequest) and message.method == "tools/list":
                    listings.add(message.id)
                try:
                    await write.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
        with contextlib.suppress(Exception):
            await write.aclose()

    async with anyio.create_task_group() as group:
        group.start_soon(inbound)
        group.start_soon(outbound)
        try:
            yield from_server, to_server
        finally:
            group.cancel_scope.cancel()


def _checked_listing(result: Any, on_skip: Callable[[str], None]) -> Any:
    """``result`` of a ``tools/list`` without the tools that do not validate (the same object when
    every tool is valid)."""
    from mcp_types import Tool
    from pydantic import ValidationError

    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list):
        return result
    kept: list[Any] = []
    for position, tool in enumerate(tools):
        try:
            Tool.model_validate(tool, by_name=False)
        except ValidationError as exc:
            name = tool.get("name") if isinstance(tool, dict) else None
            which = f"tool {name!r}" if isinstance(name, str) and name else f"tool number {position + 1}"
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            on_skip(f"{which} left out: {where + ': ' if where else ''}{error['msg']}")
            continue
        kept.append(tool)
    return result if len(kept) == len(tools) else {**result, "tools": kept}


@contextlib.asynccontextmanager
async def _http_transport(open_stream: Any, url: str, client: Any) -> Any:
    """The Streamable HTTP streams, with the HTTP client closed afterwards."""
    async with client, open_stream(url, http_client=client) as streams:
        yield streams[0], streams[1]

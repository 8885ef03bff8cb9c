"""The local HTTP server the browser is redirected to at the end of a sign-in, and the wait for it
(or for a pasted code).
"""

from __future__ import annotations

import contextlib
import html
import os
import queue
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tau.accounts.oauth._common import LoginCancelledError, LoginError, callback_port, login_timeout_s
from tau.accounts.oauth.interaction import LoginInteraction

__all__ = [
    "CallbackServer",
    "browser_sign_in",
    "callback_host",
    "code_from_paste",
    "parse_pasted_code",
    "wait_for_code",
]

_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>tau</title></head>"
    "<body style='font-family:sans-serif;margin:3em'><h2>{title}</h2><p>{text}</p></body></html>"
)

# What arrives in the queue the wait reads: ("code", code), ("error", message), ("pasted", text)
# or ("eof", "") when nothing more can be pasted (input closed).
_Event = tuple[str, str]


class CallbackServer:
    """Listens on ``host:port`` for ``GET <path>?code=…&state=…``; the first valid answer wins.
    ``state=None``: the provider sends none back (OpenRouter), the unguessable path guards instead."""

    def __init__(self, provider_name: str, host: str, port: int, path: str, state: str | None) -> None:
        self.events: queue.Queue[_Event] = queue.Queue()
        self._name = provider_name
        self._path = path
        self._state = state
        self._claimed = False
        self._lock = threading.Lock()
        self.answer: dict[str, str] = {}  # the query of the callback that won (state, code, client_id…)
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, title, text, event = owner._handle(self.path)
                body = _PAGE.format(title=html.escape(title), text=html.escape(text)).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(body)
                    self.wfile.flush()
                # Only now: the login may end (and tau exit) as soon as the event is read.
                if event is not None:
                    owner.events.put(event)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        try:
            self._server = ThreadingHTTPServer((host, port), Handler)
        except OSError as error:
            raise OSError(f"cannot listen on {host}:{port} ({error.strerror or error})") from error
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="oauth-callback", daemon=True)
        self._thread.start()

    def _handle(self, raw_path: str) -> tuple[int, str, str, _Event | None]:
        """The page to answer with, and the event for the waiting login (if this request decides it)."""
        parts = urlsplit(raw_path)
        if parts.path != self._path:
            return 404, "Not found", "This is not the sign-in callback.", None
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        if self._state is not None and query.get("state") != self._state:
            return (
                400,
                "State mismatch",
                "This answer belongs to another sign-in; start the login again.",
                None,
            )
        with self._lock:
            if self._claimed:
                return 409, "Already handled", "This sign-in has already been handled.", None
            error = query.get("error")
            code = query.get("code")
            if not error and not code:
                return 400, "Missing code", "The answer carried no authorization code.", None
            self._claimed = True
            self.answer = query
        if error:
            reason = " ".join((query.get("error_description") or error).split())[:200]
            event = ("error", f"{self._name} sign-in was not completed in the browser: {reason}")
            return 400, f"{self._name} sign-in failed", reason, event
        assert code is not None
        return (
            200,
            f"Signed in to {self._name}",
            "You may close this page and go back to tau.",
            ("code", code),
        )

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def wait_for_code(
    ui: LoginInteraction,
    provider_name: str,
    callback: CallbackServer | None,
    *,
    paste_message: str,
    placeholder: str,
) -> tuple[str, str]:
    """``("callback", code)`` from the browser, or ``("pasted", text)`` from the user, whichever comes first.

    Raises ``LoginCancelledError`` if the user gives up and ``LoginError`` on a refusal in the
    browser or when the wait times out."""
    events: queue.Queue[_Event] = callback.events if callback is not None else queue.Queue()
    ui.start_paste(
        paste_message,
        placeholder,
        lambda text: events.put(("pasted", text) if text is not None else ("eof", "")),
    )
    timeout = login_timeout_s()
    deadline = time.monotonic() + timeout
    try:
        while True:
            if ui.cancelled.is_set():
                raise LoginCancelledError("Login cancelled.")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LoginError(f"{provider_name} sign-in timed out after {timeout:g} s")
            try:
                kind, value = events.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                continue
            if kind == "error":
                raise LoginError(value)
            if kind == "code":
                return "callback", value
            if kind == "eof":
                if callback is None:
                    raise LoginError(
                        f"{provider_name} sign-in needs the browser's callback or a pasted code, and neither can arrive"
                    )
                continue
            if value.strip():
                return "pasted", value
    finally:
        ui.stop_paste()


def parse_pasted_code(text: str) -> tuple[str | None, str | None]:
    """``(code, state)`` from a pasted redirect URL, ``code#state``, a query string, or a bare code."""
    value = text.strip()
    if not value:
        return None, None
    parts = urlsplit(value)
    if parts.scheme and parts.netloc:
        query = parse_qs(parts.query)
        if "error" in query:
            reason = (query.get("error_description") or query["error"])[0]
            raise LoginError(f"sign-in was not completed in the browser: {' '.join(reason.split())[:200]}")
        return _first(query, "code"), _first(query, "state")
    if "#" in value:
        code, _, state = value.partition("#")
        return code or None, state or None
    if "code=" in value:
        query = parse_qs(value)
        return _first(query, "code"), _first(query, "state")
    return value, None


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def callback_host() -> str:
    """Where the callback server listens: loopback, or ``TAU_OAUTH_CALLBACK_HOST`` (``0.0.0.0`` in a container)."""
    return os.environ.get("TAU_OAUTH_CALLBACK_HOST") or "127.0.0.1"


def browser_sign_in(
    ui: LoginInteraction,
    *,
    provider_name: str,
    port: int,
    path: str,
    state: str | None,
    build_url: Callable[[str], str],
    any_port: bool = False,
    redirect_host: str = "localhost",
    paste_if_port_taken: bool = True,
    on_answer: Callable[[dict[str, str]], None] | None = None,
) -> tuple[str, str]:
    """Run the browser half of an authorization-code login: ``(code, redirect_uri)``.

    The callback server listens on the provider's registered ``port``; when that is taken, on any
    free port if the provider accepts one (``any_port``), else the user pastes the redirect URL
    (unless ``paste_if_port_taken`` is off: then it is an error). ``on_answer`` receives the whole
    query of the answer (callback or pasted URL), for providers that send more than the code."""
    host = callback_host()
    callback: CallbackServer | None = None
    problem = ""
    for candidate in (callback_port(port), 0) if any_port else (callback_port(port),):
        try:
            callback = CallbackServer(provider_name, host, candidate, path, state)
            break
        except OSError as error:
            problem = problem or str(error)
    if callback is None and not paste_if_port_taken:
        raise LoginError(
            f"The sign-in callback {problem}, probably for an unfinished login in another tau or the "
            "Codex CLI: finish or cancel that login and try again"
        )
    if callback is None:
        ui.notice(f"The sign-in callback {problem}; after signing in, paste the address the browser ends on")
    redirect_uri = f"http://{redirect_host}:{callback.port if callback else callback_port(port)}{path}"
    try:
        ui.show_url(build_url(redirect_uri), "Complete the sign-in in your browser.")
        kind, value = wait_for_code(
            ui,
            provider_name,
            callback,
            paste_message="Or paste the authorization code or the redirect URL here",
            placeholder=redirect_uri,
        )
    finally:
        if callback is not None:
            callback.close()
    if kind == "callback":
        if on_answer is not None and callback is not None:
            on_answer(callback.answer)
        return value, redirect_uri
    if on_answer is not None:
        parts = urlsplit(value.strip())
        on_answer({key: values[0] for key, values in parse_qs(parts.query).items()} if parts.query else {})
    return code_from_paste(value, state), redirect_uri


def code_from_paste(text: str, state: str | None) -> str:
    """The authorization code in pasted ``text``; a ``LoginError`` when it holds none or names
    another sign-in's state."""
    code, pasted_state = parse_pasted_code(text)
    if pasted_state and state is not None and pasted_state != state:
        raise LoginError("The pasted answer belongs to another sign-in (state mismatch): log in again")
    if not code:
        raise LoginError("The pasted text holds no authorization code")
    return code

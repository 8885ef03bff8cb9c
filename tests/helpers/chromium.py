"""Headless Chromium driven over the DevTools protocol (tests only).

Debian's ``chromium`` (``scripts/check`` installs it); the flags keep it from reaching for the network,
without which it stalls on a closed machine. One browser, one page:

    with Chromium(tmp_path) as page:
        page.open(html_path.as_uri())
        page.evaluate("document.title")
"""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-port=0",
]
TIMEOUT = 20.0


class Chromium:
    """A headless browser with one page; ``problems`` collects console errors, uncaught
    exceptions and browser log errors (such as Content-Security-Policy violations)."""

    def __init__(self, work_dir: Path, *, width: int = 1280, height: int = 900) -> None:
        self._profile = work_dir / "chromium-profile"
        self._size = (width, height)
        self._next_id = 0
        self._session = ""
        self.problems: list[str] = []
        self._events: list[dict[str, Any]] = []
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: ClientConnection | None = None
        self._closing = contextlib.ExitStack()

    def __enter__(self) -> Chromium:
        self._profile.mkdir(parents=True, exist_ok=True)
        self._process = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._closing.callback(self._stop_process)
        self._socket = self._closing.enter_context(
            connect(self._browser_url(), max_size=None, open_timeout=TIMEOUT)
        )
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        width, height = self._size
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._closing.close()

    def _stop_process(self) -> None:
        assert self._process is not None
        self._process.kill()
        self._process.wait()

    def _browser_url(self) -> str:
        """The browser's websocket URL, from the port file Chromium writes once it listens."""
        port_file = self._profile / "DevToolsActivePort"
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._process.returncode}")
            if port_file.exists():
                lines = port_file.read_text().split()
                if len(lines) == 2:
                    return f"ws://127.0.0.1:{lines[0]}{lines[1]}"
            time.sleep(0.05)
        raise TimeoutError("chromium did not open its DevTools port")

    # -- protocol ----------------------------------------------------------------------------------

    def _call(
        self, method: str, params: dict[str, Any] | None = None, *, session: str = ""
    ) -> dict[str, Any]:
        assert self._socket is not None
        self._next_id += 1
        request: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        self._socket.send(json.dumps(request))
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = json.loads(self._socket.recv(timeout=max(0.0, deadline - time.monotonic())))
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self._note(message)

    def _note(self, event: dict[str, Any]) -> None:
        self._events.append(event)
        params = event.get("params", {})
        if event["method"] == "Runtime.exceptionThrown":
            self.problems.append(json.dumps(params.get("exceptionDetails", {}))[:500])
        elif event["method"] == "Runtime.consoleAPICalled" and params.get("type") in (
            "error",
            "warning",
            "assert",
        ):
            self.problems.append(json.dumps(params.get("args", []))[:500])
        elif event["method"] == "Log.entryAdded" and params.get("entry", {}).get("level") in (
            "error",
            "warning",
        ):
            self.problems.append(params["entry"].get("text", "")[:500])

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to the page."""
        return self._call(method, params, session=self._session)

    def _wait_for(self, method: str) -> dict[str, Any]:
        assert self._socket is not None
        for index, event in enumerate(self._events):
            if event["method"] == method:
                return self._events.pop(index)
        deadline = time.monotonic() + TIMEOUT
        while True:
            message = json.loads(self._socket.recv(timeout=max(0.0, deadline - time.monotonic())))
            if "method" in message:
                self._note(message)
                if message["method"] == method:
                    self._events.remove(message)
                    return message

    # -- page --------------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` and wait until its load event has fired."""
        self._events.clear()
        self.send("Page.navigate", {"url": url})
        self._wait_for("Page.loadEventFired")

    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """The value of a JavaScript expression in the page."""
        reply = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
        )
        if "exceptionDetails" in reply:
            raise RuntimeError(f"{expression}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the first element matching ``selector``."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView({{block: 'center'}});"
            " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
            )

    def prefer_dark(self, dark: bool) -> None:
        value = "dark" if dark else "light"
        self.send(
            "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": value}]}
        )

    def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        path.write_bytes(data)
        return data

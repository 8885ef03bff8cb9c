"""A fake llama.cpp router server on 127.0.0.1 (tests only): the router's endpoints as
``llama serve`` without a model answers them — ``GET /models`` (the catalogue with each model's
status), ``POST /models/load`` and ``/models/unload`` (a load takes two catalogue reads to finish,
a slow model's until it is unloaded, a failing model's ends ``unloaded`` with ``failed``), ``POST /models`` (a download from Hugging Face: the model
is ``downloading``, at a quarter, for two catalogue reads, a slow one's until it is unloaded),
``GET /props``, ``GET /health`` — and ``POST /v1/chat/completions``, which streams one fixed answer
from the loaded model."""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer
from typing import Any

from json_handler import JsonHandler


class FakeLlamaRouter:
    def __init__(
        self,
        models: dict[str, str],
        *,
        api_key: str | None = None,
        slow: frozenset[str] = frozenset(),
        failing: frozenset[str] = frozenset(),
    ) -> None:
        """``models``: id -> status (``loaded``, ``unloaded``, ``sleeping``); a load of a ``slow``
        model stays ``loading`` until it is unloaded; a ``failing`` one ends ``unloaded`` with
        ``failed`` and exit code 1."""
        self.status = dict(models)
        self.slow = slow
        self.failing = failing
        self.api_key = api_key
        self.calls: list[tuple[str, str, Any]] = []
        self.chat_bodies: list[dict[str, Any]] = []
        self._loading: dict[str, int] = {}
        self._downloading: dict[str, int] = {}
        self._failed: set[str] = set()
        self._lock = threading.Lock()
        owner = self

        class Handler(JsonHandler):
            def _authorized(self) -> bool:
                if owner.api_key and self.headers.get("Authorization") != f"Bearer {owner.api_key}":
                    self._send(401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}})
                    return False
                return True

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                owner.calls.append(("GET", path, None))
                if not self._authorized():
                    return
                if path == "/health":
                    self._send(200, {"status": "ok"})
                elif path == "/models":
                    self._send(200, {"object": "list", "data": owner.catalog()})
                elif path == "/props":
                    self._send(200, {"models_autoload": False})
                else:
                    self._send(404, {"error": {"message": "File Not Found"}})

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                owner.calls.append(("POST", path, body))
                if not self._authorized():
                    return
                if path == "/v1/chat/completions":
                    owner.chat_bodies.append(body)
                    self._stream(str(body.get("model")))
                    return
                model = str(body.get("model"))
                with owner._lock:
                    if path == "/models":  # a download from Hugging Face: listed as downloading
                        owner.status[model] = "downloading"
                        owner._downloading[model] = 10**9 if model in owner.slow else 2
                        self._send(200, {"success": True})
                        return
                    if model not in owner.status:
                        self._send(400, {"error": {"message": f"model {model} not found"}})
                        return
                    if path == "/models/load":
                        owner.status[model] = "loading"
                        owner._failed.discard(model)
                        owner._loading[model] = 10**9 if model in owner.slow else 2
                    elif path == "/models/unload":
                        owner.status[model] = "unloaded"
                        owner._loading.pop(model, None)
                        if owner._downloading.pop(model, None) is not None:
                            del owner.status[model]  # a download stopped: the model is not there
                    else:
                        self._send(404, {"error": {"message": "File Not Found"}})
                        return
                self._send(200, {"success": True})

            def _stream(self, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                chunks = [
                    {
                        "choices": [
                            {"index": 0, "delta": {"role": "assistant", "content": f"Hello from {model}"}}
                        ]
                    },
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                    {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
                ]
                for chunk in chunks:
                    payload = {"id": "c1", "object": "chat.completion.chunk", "model": model, **chunk}
                    self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def catalog(self) -> list[dict[str, Any]]:
        with self._lock:
            for model, left in list(self._loading.items()):
                if left <= 0:
                    failed = model in self.failing
                    self.status[model] = "unloaded" if failed else "loaded"
                    if failed:
                        self._failed.add(model)
                    del self._loading[model]
                else:
                    self._loading[model] = left - 1
            for model, left in list(self._downloading.items()):
                if left <= 0:
                    self.status[model] = "unloaded"
                    del self._downloading[model]
                else:
                    self._downloading[model] = left - 1
            return [
                {
                    "id": model,
                    "object": "model",
                    "owned_by": "llamacpp",
                    "status": {
                        "value": status,
                        "args": ["llama-server", "--ctx-size", "8192"],
                        **(
                            {"progress": {"model.gguf": {"done": 1048576, "total": 4194304}}}
                            if status == "downloading"
                            else {}
                        ),
                        **({"failed": True, "exit_code": 1} if model in self._failed else {}),
                    },
                }
                for model, status in self.status.items()
            ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeLlamaRouter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

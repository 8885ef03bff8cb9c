"""A fake llama.cpp router server on 127.0.0.1 (tests only): the router's endpoints as
``llama serve`` without a model answers them — ``GET /models`` (the catalogue with each model's
status), ``POST /models/load`` and ``/models/unload`` (a load takes two catalogue reads to finish,
a slow model's until it is unloaded, a failing model's ends ``unloaded`` with ``failed``), ``POST /models`` (a download from Hugging Face: the model
is ``downloading``, at a quarter, for two catalogue reads, a slow one's until it is unloaded),
``GET /props``, ``GET /health``, the classification endpoints of ``fake_llama_classify``
(``/tokenize``, ``/apply-template``, ``/completion``, ``/v1/systemone``, each request kept in
``classify_requests`` with its headers), ``GET /models/sse`` (the router's events as pi 1.6 reads them: at
each catalogue read a loading model's stage, ``tensors`` of three, half done, and a download's
bytes; then ``loaded``, ``unloaded``, ``download_finished`` or ``download_failed``) — and
``POST /v1/chat/completions``, which streams one fixed answer from the loaded model."""

from __future__ import annotations

import json
import queue
import threading
from http.server import ThreadingHTTPServer
from typing import Any

import fake_llama_classify
from json_handler import JsonHandler

_DOWNLOAD_BYTES = {"model.gguf": {"done": 1048576, "total": 4194304}}


class FakeLlamaRouter:
    def __init__(
        self,
        models: dict[str, str],
        *,
        api_key: str | None = None,
        slow: frozenset[str] = frozenset(),
        failing: frozenset[str] = frozenset(),
        events: bool = True,
        polled_progress: bool = True,
        contexts: dict[str, int] | None = None,
        architectures: dict[str, dict[str, Any]] | None = None,
        thinking: frozenset[str] = frozenset(),
        deep: frozenset[str] = frozenset(),
        presets: frozenset[str] = frozenset(),
        autoload: bool = False,
    ) -> None:
        """``models``: id -> status (``loaded``, ``unloaded``, ``sleeping``); a load of a ``slow``
        model stays ``loading`` until it is unloaded; a ``failing`` one ends ``unloaded`` with
        ``failed`` and exit code 1 (a failing download: ``download_failed`` and gone).
        ``events``: ``/models/sse`` is there (else 404, as an older router); ``polled_progress``:
        the catalogue has a download's bytes (else only the events do); ``contexts``: a model's
        ``meta.n_ctx`` (every model is started with ``--ctx-size 8192``); ``architectures``: a
        model's ``architecture`` (``output_modalities: ["decisions"]`` for a decision model);
        ``thinking`` and ``deep``: see ``fake_llama_classify``; ``presets``: models of the router's
        presets file (``source: "preset"``); ``autoload``: ``/props`` says ``models_autoload`` (a
        chat request to an unloaded model then loads it first, as the router does)."""
        self.presets = presets
        self.autoload = autoload
        self.architectures = dict(architectures or {})
        self.thinking = thinking
        self.deep = deep
        self.classify_requests: list[tuple[str, dict[str, str], dict[str, Any]]] = []
        self.status = dict(models)
        self.slow = slow
        self.failing = failing
        self.events = events
        self.polled_progress = polled_progress
        self.contexts = dict(contexts or {})
        self.sent_events: list[dict[str, Any]] = []
        self._listeners: list[queue.Queue[bytes]] = []
        self._closing = threading.Event()
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
                    self._send(200, {"models_autoload": owner.autoload})
                elif path == "/models/sse" and owner.events:
                    self._event_stream()
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
                    with owner._lock:
                        if owner.autoload and owner.status.get(str(body.get("model"))) == "unloaded":
                            owner.status[str(body.get("model"))] = "loaded"
                    self._stream(str(body.get("model")))
                    return
                if path in ("/tokenize", "/apply-template", "/completion", "/v1/systemone"):
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    with owner._lock:
                        owner.classify_requests.append((path, headers, body))
                    model = str(body.get("model"))
                    if path == "/tokenize":
                        self._send(200, fake_llama_classify.tokenize(body))
                    elif path == "/apply-template":
                        self._send(200, fake_llama_classify.apply_template(body, model in owner.thinking))
                    elif path == "/completion":
                        self._send(200, fake_llama_classify.completion(body, model in owner.deep))
                    else:
                        self._send(200, fake_llama_classify.system_one(body))
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
                            owner._publish(model, "status_change", {"status": "unloaded"})
                    else:
                        self._send(404, {"error": {"message": "File Not Found"}})
                        return
                self._send(200, {"success": True})

            def _event_stream(self) -> None:
                frames: queue.Queue[bytes] = queue.Queue()
                with owner._lock:
                    owner._listeners.append(frames)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                try:
                    self.wfile.write(b": connected\n\n")
                    self.wfile.flush()
                    while not owner._closing.is_set():
                        try:
                            frame = frames.get(timeout=0.05)
                        except queue.Empty:
                            continue
                        self.wfile.write(frame)
                        self.wfile.flush()
                except OSError:  # the client went away
                    pass
                finally:
                    with owner._lock:
                        owner._listeners.remove(frames)

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

    def _publish(self, model: str, event: str, data: dict[str, Any]) -> None:
        """One event to every open ``/models/sse`` (under the lock)."""
        payload = {"model": model, "event": event, "data": data}
        self.sent_events.append(payload)
        for frames in self._listeners:
            frames.put(f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode())

    def catalog(self) -> list[dict[str, Any]]:
        with self._lock:
            for model, left in list(self._loading.items()):
                if left <= 0:
                    failed = model in self.failing
                    self.status[model] = "unloaded" if failed else "loaded"
                    if failed:
                        self._failed.add(model)
                    del self._loading[model]
                    self._publish(model, "status_change", {"status": self.status[model]})
                else:
                    self._loading[model] = left - 1
                    stage = {"stages": ["vocab", "tensors", "warmup"], "current": "tensors", "value": 0.5}
                    self._publish(model, "model_status", {"status": "loading", "progress": stage})
            for model, left in list(self._downloading.items()):
                if left <= 0:
                    del self._downloading[model]
                    if model in self.failing:
                        del self.status[model]
                        error = {"message": f"failed to download {model}: 404 Not Found"}
                        self._publish(model, "download_failed", {"error": error})
                    else:
                        self.status[model] = "unloaded"
                        self._publish(model, "download_finished", {})
                else:
                    self._downloading[model] = left - 1
                    self._publish(model, "download_progress", {"progress": _DOWNLOAD_BYTES})
            return [
                {
                    "id": model,
                    "object": "model",
                    "owned_by": "llamacpp",
                    **({"source": "preset"} if model in self.presets else {}),
                    **({"meta": {"n_ctx": self.contexts[model]}} if model in self.contexts else {}),
                    **({"architecture": self.architectures[model]} if model in self.architectures else {}),
                    "status": {
                        "value": status,
                        "args": ["llama-server", "--ctx-size", "8192"],
                        **(
                            {"progress": _DOWNLOAD_BYTES}
                            if status == "downloading" and self.polled_progress
                            else {}
                        ),
                        **({"failed": True, "exit_code": 1} if model in self._failed else {}),
                    },
                }
                for model, status in self.status.items()
            ]

    @property
    def listening(self) -> bool:
        """Someone has ``/models/sse`` open."""
        with self._lock:
            return bool(self._listeners)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeLlamaRouter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

"""A fake Hugging Face hub on 127.0.0.1 (tests only): the two endpoints ``/llama``'s download asks,
``GET /api/models?search=...&filter=gguf`` (the repositories whose id contains the search) and
``GET /api/models/<owner>/<name>?blobs=true`` (a repository's files with their sizes and whether it
is gated). Each request's path and ``Authorization`` header is recorded."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from json_handler import JsonHandler


class FakeHuggingFace:
    def __init__(self, repositories: dict[str, dict[str, Any]]) -> None:
        """``repositories``: id -> ``{"downloads": n, "files": {name: size}, "gated": "auto"?}``."""
        self.repositories = repositories
        self.requests: list[tuple[str, str | None]] = []
        owner = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                owner.requests.append((self.path, self.headers.get("Authorization")))
                query = parse_qs(parts.query)
                if parts.path == "/api/models":
                    if query.get("filter") != ["gguf"]:
                        self._send(400, {"error": "expected filter=gguf"})
                        return
                    search = query.get("search", [""])[0].lower()
                    found = [
                        {"id": name, "downloads": repo["downloads"]}
                        for name, repo in owner.repositories.items()
                        if search in name.lower()
                    ]
                    self._send(200, sorted(found, key=lambda r: -r["downloads"]))
                    return
                name = unquote(parts.path.removeprefix("/api/models/"))
                repo = owner.repositories.get(name)
                if not parts.path.startswith("/api/models/") or repo is None:
                    self._send(404, {"error": "Repository not found"})
                    return
                self._send(
                    200,
                    {
                        "id": name,
                        "gated": repo.get("gated", False),
                        "siblings": [{"rfilename": f, "size": size} for f, size in repo["files"].items()],
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeHuggingFace:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

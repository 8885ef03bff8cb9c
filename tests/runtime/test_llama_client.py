"""``/llama``'s client of the llama.cpp router against the fake router on 127.0.0.1: a load and a
download followed on the router's event stream (``GET /models/sse``) as pi 1.6 follows them — the
load's stage and share, the download's bytes, its ``download_failed`` message — and on the
catalogue alone when the router has no event stream; and the stream's frames however they arrive."""

from __future__ import annotations

import asyncio
import threading
import time
from http.server import ThreadingHTTPServer

import pytest
from fake_llama_router import FakeLlamaRouter
from json_handler import JsonHandler

from tau.llama_cpp.client import LlamaClient, LlamaError
from tau.llama_cpp.events import Progress, RouterEvent, watch


async def _until_listening(router: FakeLlamaRouter) -> None:
    """Until tau's event stream is open at the router (it opens beside the request, as pi's)."""
    for _ in range(200):
        if router.listening:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the event stream never opened")


async def test_a_load_shows_the_stage_the_router_reports() -> None:
    with FakeLlamaRouter({"big-model": "unloaded"}, slow=frozenset({"big-model"}), api_key="k") as router:
        client = LlamaClient(router.url, "k")
        seen: list[Progress] = []
        load = asyncio.ensure_future(client.load_and_wait("big-model", seen.append))
        await _until_listening(router)
        while {"message": "Loading tensors", "ratio": 0.5} not in seen:
            await asyncio.sleep(0.05)
        load.cancel()
        assert seen[0] == {"message": "Loading model"}  # the request went; no stage yet
        assert ("GET", "/models/sse", None) in router.calls


async def test_a_failed_load_names_the_exit_code_and_a_finished_one_returns() -> None:
    with FakeLlamaRouter({"broken": "unloaded", "fine": "unloaded"}, failing=frozenset({"broken"})) as router:
        client = LlamaClient(router.url)
        with pytest.raises(LlamaError, match=r"^Model exited with code 1$"):
            await client.load_and_wait("broken")
        loaded = await client.load_and_wait("fine")
        assert (loaded.id, loaded.status) == ("fine", "loaded")
        assert {"model": "fine", "event": "status_change", "data": {"status": "loaded"}} in router.sent_events


async def test_a_download_shows_the_bytes_of_the_event_stream() -> None:
    model = "org/repo-GGUF:Q4_K_M"
    with FakeLlamaRouter({}, slow=frozenset({model}), polled_progress=False) as router:
        client = LlamaClient(router.url)
        seen: list[Progress] = []
        download = asyncio.ensure_future(client.download_and_wait(model, seen.append))
        await _until_listening(router)
        expected: Progress = {"message": "Downloading model", "ratio": 0.25, "detail": "1.00 MiB / 4.00 MiB"}
        while expected not in seen:  # only the events have the bytes
            await asyncio.sleep(0.05)
        download.cancel()
        assert seen[0] == {"message": "Downloading model"}


async def test_a_download_that_fails_says_what_the_router_said() -> None:
    model = "org/missing-GGUF"
    with FakeLlamaRouter({}, failing=frozenset({model})) as router:
        client = LlamaClient(router.url)
        with pytest.raises(LlamaError, match=f"^failed to download {model}: 404 Not Found$"):
            await asyncio.wait_for(client.download_and_wait(model), 20)


async def test_without_an_event_stream_the_catalogue_still_decides() -> None:
    """An older router answers ``/models/sse`` with 404: loads and downloads end as the catalogue
    says, and a download's bytes come from it."""
    model = "org/repo-GGUF"
    with FakeLlamaRouter({"qwen": "unloaded"}, events=False) as router:
        client = LlamaClient(router.url)
        assert (await client.load_and_wait("qwen")).status == "loaded"
        seen: list[Progress] = []
        catalog = await client.download_and_wait(model, seen.append)
        assert {m.id: m.status for m in catalog} == {"qwen": "loaded", model: "unloaded"}
        assert {"message": "Downloading model", "ratio": 0.25, "detail": "1.00 MiB / 4.00 MiB"} in seen
        assert not router.listening


async def test_the_event_stream_is_read_frame_by_frame_whatever_the_chunks() -> None:
    """Frames split across writes, CRLF line ends, ``data:`` over two lines, a comment, a frame
    that is not JSON and one without a model: only the whole events arrive, in order."""
    chunks = [
        b': hello\r\n\r\nevent: download_progress\r\ndata: {"model": "a", ',
        b'"event": "download_progress", "data": {"progress": {}}}\r\n\r\n',
        b'data: not json\n\ndata: {"event": "x"}\n\n',
        b'data: {"model": "b",\ndata: "event": "download_finished"}\n\n',
    ]

    class Handler(JsonHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
                time.sleep(0.05)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        seen: list[RouterEvent] = []
        await asyncio.wait_for(watch(f"http://127.0.0.1:{server.server_address[1]}", None, seen.append), 10)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [
        {"model": "a", "event": "download_progress", "data": {"progress": {}}},
        {"model": "b", "event": "download_finished", "data": None},
    ]

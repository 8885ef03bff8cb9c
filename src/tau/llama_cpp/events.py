"""The router's event stream (``GET /models/sse``) and the progress its events carry, read as pi
1.6 reads them: each ``data:`` frame is one JSON event ``{"model", "event", "data"}``; a model's
``model_status`` / ``status_change`` events carry its load stage, ``download_progress`` the bytes
of a download, ``download_finished`` and ``download_failed`` its end.

The stream only adds detail: the catalogue (``GET /models``) stays what decides, so a router
without the stream, or a frame that is not JSON, costs nothing but the live progress.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypedDict

__all__ = ["Progress", "RouterEvent", "download_progress", "format_bytes", "load_progress", "watch"]


class Progress(TypedDict, total=False):
    """What the progress view shows: ``message``, a ``ratio`` from 0 to 1 for the bar (absent or
    ``None``: no bar) and a ``detail`` line. An update replaces only the keys it has, as pi's."""

    message: str
    ratio: float | None
    detail: str


class RouterEvent(TypedDict):
    model: str
    event: str
    data: Any


def format_bytes(count: int) -> str:
    """``1536`` → ``1.50 KiB`` (binary units, three significant figures as pi shows them)."""
    if count < 1024:
        return f"{count} B"
    value = count / 1024
    unit = "KiB"
    for larger in ("MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value /= 1024
        unit = larger
    return f"{value:.1f} {unit}" if value >= 10 else f"{value:.2f} {unit}"


def load_progress(data: Any) -> Progress | None:
    """A load event's ``progress``: ``{"current": "tensors", "stages": [...], "value": 0.5}`` →
    "Loading tensors" with the share of all stages done; ``None`` when it has none."""
    progress = data.get("progress") if isinstance(data, dict) else None
    if not isinstance(progress, dict):
        return None
    stage = progress.get("current")
    if not isinstance(stage, str):
        stage = progress.get("stage") if isinstance(progress.get("stage"), str) else None
    stages = [entry for entry in progress.get("stages") or [] if isinstance(entry, str)]
    value = progress.get("value")
    ratio = (
        max(0.0, min(1.0, float(value)))
        if isinstance(value, int | float) and not isinstance(value, bool)
        else None
    )
    if stage and stage in stages:
        ratio = (stages.index(stage) + (ratio or 0.0)) / len(stages)
    message = f"Loading {stage.replace('_', ' ')}" if stage else "Loading model"
    return {"message": message, "ratio": ratio}


def download_progress(data: Any) -> Progress | None:
    """The bytes of a download, summed over its files (``{"progress": {file: {"done", "total"}}}``
    or the files themselves); ``None`` while no total is known."""
    if not isinstance(data, dict):
        return None
    nested = data.get("progress")
    files: dict[Any, Any] = nested if isinstance(nested, dict) else data
    done = total = 0
    for entry in files.values():
        if isinstance(entry, dict) and _number(entry.get("done")) and _number(entry.get("total")):
            done += entry["done"]
            total += entry["total"]
    if total <= 0:
        return None
    return {
        "message": "Downloading model",
        "ratio": done / total,
        "detail": f"{format_bytes(done)} / {format_bytes(total)}",
    }


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _event(frame: str) -> RouterEvent | None:
    """The event of one frame: its ``data:`` lines joined; ``None`` for anything else."""
    data = "\n".join(line[5:].lstrip() for line in frame.split("\n") if line.startswith("data:"))
    if not data:
        return None
    try:
        event = json.loads(data)
    except ValueError:
        return None
    if (
        isinstance(event, dict)
        and isinstance(event.get("model"), str)
        and isinstance(event.get("event"), str)
    ):
        return {"model": event["model"], "event": event["event"], "data": event.get("data")}
    return None


async def watch(server_url: str, api_key: str | None, on_event: Callable[[RouterEvent], None]) -> None:
    """Read the router's events until the stream ends or the caller cancels; a router that does
    not answer, or answers with an error, ends it quietly (the catalogue is polled anyway)."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    timeout = httpx.Timeout(15.0, read=None)  # an idle stream is not a failure
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False) as http,
            http.stream("GET", f"{server_url}/models/sse", headers=headers) as response,
        ):
            if response.is_error:
                return
            buffer = ""
            async for text in response.aiter_text():
                buffer += text.replace("\r\n", "\n")
                while (boundary := buffer.find("\n\n")) >= 0:
                    frame, buffer = buffer[:boundary], buffer[boundary + 2 :]
                    event = _event(frame)
                    if event is not None:
                        on_event(event)
    except httpx.HTTPError:
        return

"""A client of the llama.cpp router server (``llama serve`` without a model): its model catalogue
(``GET /models``), loading and unloading models (``POST /models/load``, ``/models/unload``), and
downloading one from Hugging Face (``POST /models``: the router fetches it).

Every failure is a ``LlamaError`` with one line naming the server and the cause.
"""

from __future__ import annotations

import asyncio
import builtins
import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "DEFAULT_SERVER_URL",
    "LlamaClient",
    "LlamaError",
    "RouterModel",
    "format_bytes",
    "inference_url",
    "normalize_server_url",
]

DEFAULT_SERVER_URL = "http://127.0.0.1:9931"
_TIMEOUT_S = 15.0
_POLL_S = 0.25


class LlamaError(Exception):
    """One line saying what went wrong with the router."""


def normalize_server_url(value: str) -> str:
    """``http://host:9931/v1/`` → ``http://host:9931``: no query, fragment, trailing ``/`` or ``/v1``."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LlamaError(f"llama.cpp server URL must be an http or https URL, not {value.strip()!r}")
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1").rstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def inference_url(server_url: str) -> str:
    """The OpenAI-compatible endpoint of the router's models."""
    return f"{normalize_server_url(server_url)}/v1"


class RouterModel:
    """One entry of the router's catalogue: ``status`` is ``loaded``, ``sleeping``, ``loading``,
    ``unloaded``, ``downloading``..."""

    __slots__ = ("failed", "id", "input_images", "raw", "status")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.id = str(raw["id"])
        status = raw.get("status") or {}
        self.status = str(status.get("value"))
        self.failed = bool(status.get("failed"))
        modalities = (raw.get("architecture") or {}).get("input_modalities") or []
        self.input_images = "image" in modalities

    @property
    def is_loaded(self) -> bool:
        return self.status in ("loaded", "sleeping")

    @property
    def context_window(self) -> int:
        """The loaded context (``meta.n_ctx``), else ``-c``/``--ctx-size`` of its arguments, else the
        training context, else 128000 (pi's order)."""
        meta = self.raw.get("meta") or {}
        if isinstance(meta.get("n_ctx"), int) and meta["n_ctx"] > 0:
            return int(meta["n_ctx"])
        args = (self.raw.get("status") or {}).get("args") or []
        for flag, value in itertools.pairwise(args):
            if flag in ("--ctx-size", "-c", "-ctx") and str(value).isdigit() and int(value) > 0:
                return int(value)
        if isinstance(meta.get("n_ctx_train"), int) and meta["n_ctx_train"] > 0:
            return int(meta["n_ctx_train"])
        return 128000

    @property
    def is_chat(self) -> bool:
        """Decision-only models (``output_modalities`` without ``text``) cannot chat."""
        outputs = (self.raw.get("architecture") or {}).get("output_modalities") or []
        return "decisions" not in outputs or "text" in outputs


class LlamaClient:
    """The router at ``server_url``; ``api_key`` goes as a bearer token when set."""

    def __init__(self, server_url: str, api_key: str | None = None) -> None:
        self.server_url = normalize_server_url(server_url)
        self.api_key = api_key

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        import httpx

        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            async with httpx.AsyncClient(timeout=_TIMEOUT_S, trust_env=False) as http:
                response = await http.request(method, self.server_url + path, json=body, headers=headers)
        except httpx.HTTPError as exc:
            detail = str(exc) or type(exc).__name__
            raise LlamaError(f"Could not reach llama.cpp server at {self.server_url}: {detail}") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.is_error:
            error = payload.get("error") if isinstance(payload, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            raise LlamaError(
                message
                if isinstance(message, str) and message
                else f"llama.cpp returned HTTP {response.status_code}"
            )
        return payload

    async def list(self, *, reload: bool = False) -> list[RouterModel]:
        payload = await self._request("GET", "/models?reload=1" if reload else "/models")
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise LlamaError(f"llama.cpp server at {self.server_url} returned an invalid model catalog")
        if not all(
            isinstance(m, dict)
            and isinstance(m.get("id"), str)
            and isinstance((m.get("status") or {}).get("value"), str)
            for m in data
        ):
            raise LlamaError(
                f"Server at {self.server_url} is not running in llama.cpp router mode (start `llama serve` without a model)"
            )
        return [RouterModel(m) for m in data]

    async def load(self, model: str) -> None:
        await self._request("POST", "/models/load", {"model": model})

    async def unload(self, model: str) -> None:
        await self._request("POST", "/models/unload", {"model": model})

    async def _status(self, model: str) -> RouterModel | None:
        return next((m for m in await self.list() if m.id == model), None)

    async def load_and_wait(
        self, model: str, on_progress: Callable[[str], None] | None = None
    ) -> RouterModel:
        """Ask the router to load ``model`` and wait until its catalogue says ``loaded``; a model
        that fails (or goes back to ``unloaded`` with an exit code) raises."""
        await self.load(model)
        while True:
            entry = await self._status(model)
            if entry is not None and entry.status == "loaded":
                return entry
            if entry is not None and entry.failed:
                code = (entry.raw.get("status") or {}).get("exit_code")
                raise LlamaError(
                    f"Model exited with code {code}" if code is not None else "Model failed to load"
                )
            if on_progress is not None and entry is not None:
                on_progress(entry.status)
            await asyncio.sleep(_POLL_S)

    async def download(self, model: str) -> None:
        await self._request("POST", "/models", {"model": model})

    async def download_and_wait(
        self, model: str, on_progress: Callable[[str], None] | None = None
    ) -> builtins.list[RouterModel]:
        """Ask the router to download ``model`` (``owner/repository[:quant]``) and wait until its
        catalogue lists it done; the catalogue then, re-read from disk (``?reload=1``)."""
        await self.download(model)
        saw_downloading = False
        polls = 0
        while True:
            polls += 1
            entry = await self._status(model)
            if entry is not None and entry.status == "downloading":
                saw_downloading = True
                if on_progress is not None:
                    on_progress(_download_progress(entry.raw.get("status", {}).get("progress")))
            elif entry is not None and entry.failed:
                raise LlamaError(f"Download of {model} failed")
            elif entry is not None and (saw_downloading or polls >= 2):
                return await self.list(reload=True)
            await asyncio.sleep(_POLL_S * 2)

    async def unload_and_wait(self, model: str) -> None:
        await self.unload(model)
        while True:
            entry = await self._status(model)
            if entry is None or entry.status == "unloaded":
                return
            await asyncio.sleep(_POLL_S / 2)


def _download_progress(progress: Any) -> str:
    """``Downloading model: 1.00 MiB / 4.00 MiB (25%)`` from the router's per-file ``done``/``total``."""
    files = progress.get("progress", progress) if isinstance(progress, dict) else {}
    done = total = 0
    for value in files.values() if isinstance(files, dict) else []:
        if (
            isinstance(value, dict)
            and isinstance(value.get("done"), int)
            and isinstance(value.get("total"), int)
        ):
            done += value["done"]
            total += value["total"]
    if total <= 0:
        return "Downloading model"
    return f"Downloading model: {format_bytes(done)} / {format_bytes(total)} ({round(100 * done / total)}%)"


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

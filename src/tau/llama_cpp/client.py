"""A client of the llama.cpp router server (``llama serve`` without a model): its model catalogue
(``GET /models``), loading and unloading models (``POST /models/load``, ``/models/unload``), and
downloading one from Hugging Face (``POST /models``: the router fetches it), each load and download followed on the catalogue and,
for its progress, on the router's event stream (``events``).

Every failure is a ``LlamaError`` with one line naming the server and the cause.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import errno
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tau.llama_cpp.events import Progress, RouterEvent, download_progress, load_progress, watch

__all__ = [
    "DEFAULT_SERVER_URL",
    "LlamaClient",
    "LlamaError",
    "RouterModel",
    "inference_url",
    "normalize_server_url",
    "says_autoload",
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


def _connection_detail(exc: BaseException, server_url: str) -> str:
    """Why the connection failed, as pi words a refused one (``connect ECONNREFUSED 127.0.0.1:9931``):
    the system's error code and the address when there is one, else the error itself."""
    cause: BaseException | None = exc
    while cause is not None and not (isinstance(cause, OSError) and cause.errno in errno.errorcode):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, OSError) and cause.errno is not None:
        parts = urlsplit(server_url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return f"connect {errno.errorcode[cause.errno]} {parts.hostname}:{port}"
    return str(exc) or type(exc).__name__


def inference_url(server_url: str) -> str:
    """The OpenAI-compatible endpoint of the router's models."""
    return f"{normalize_server_url(server_url)}/v1"


class RouterModel:
    """One entry of the router's catalogue: ``status`` is ``loaded``, ``sleeping``, ``loading``,
    ``unloaded``, ``downloading``..."""

    __slots__ = ("failed", "id", "input_images", "raw", "source", "status")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self.id = str(raw["id"])
        status = raw.get("status") or {}
        self.status = str(status.get("value"))
        self.failed = bool(status.get("failed"))
        self.source = raw.get("source")
        """Where the router has it from: ``preset`` for a model of its presets file."""
        modalities = (raw.get("architecture") or {}).get("input_modalities") or []
        self.input_images = "image" in modalities

    @property
    def is_loaded(self) -> bool:
        return self.status in ("loaded", "sleeping")

    @property
    def is_autoload_preset(self) -> bool:
        """An unloaded preset that did not fail: the router loads it on its first request when its
        ``models_autoload`` is on."""
        return self.status == "unloaded" and not self.failed and self.source == "preset"

    def is_selectable(self, router_autoload: bool) -> bool:
        """Whether a request can go to it now (pi 1.6's rule): loaded or sleeping (a request wakes
        it), or an unloaded preset of a router that autoloads."""
        return self.is_loaded or (router_autoload and self.is_autoload_preset)

    @property
    def context_window(self) -> int:
        """The loaded context (``meta.n_ctx``), else ``-c``/``--ctx-size`` of its arguments, else the
        training context, else 128000 (pi's order)."""
        meta = self.raw.get("meta") or {}
        if isinstance(meta.get("n_ctx"), int) and meta["n_ctx"] > 0:
            return int(meta["n_ctx"])
        if self.context_argument is not None:
            return self.context_argument
        if isinstance(meta.get("n_ctx_train"), int) and meta["n_ctx_train"] > 0:
            return int(meta["n_ctx_train"])
        return 128000

    @property
    def context_argument(self) -> int | None:
        """``-c``/``--ctx-size`` of the arguments the router starts it with."""
        args = (self.raw.get("status") or {}).get("args") or []
        for flag, value in itertools.pairwise(args):
            if flag in ("--ctx-size", "-c", "-ctx") and str(value).isdigit() and int(value) > 0:
                return int(value)
        return None

    @property
    def is_decision(self) -> bool:
        """A native decision model: llama.cpp 0.6.0 and later list ``decisions`` among its
        ``output_modalities`` (read from the GGUF, so unloaded ones are known too)."""
        outputs = (self.raw.get("architecture") or {}).get("output_modalities") or []
        return "decisions" in outputs

    @property
    def is_chat(self) -> bool:
        """Decision-only models (``output_modalities`` without ``text``) cannot chat."""
        outputs = (self.raw.get("architecture") or {}).get("output_modalities") or []
        return "decisions" not in outputs or "text" in outputs


def says_autoload(props: object) -> bool:
    """Whether a router's ``/props`` answer says it loads a model on its first request."""
    return isinstance(props, dict) and props.get("models_autoload") is True


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
            detail = _connection_detail(exc, self.server_url)
            raise LlamaError(f"Could not reach llama.cpp server at {self.server_url}: {detail}") from None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.is_error:
            raise LlamaError(_error_message(payload) or f"llama.cpp returned HTTP {response.status_code}")
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

    async def autoloads(self, catalog: builtins.list[RouterModel]) -> bool:
        """Whether the router loads a model on its first request (``/props`` ``models_autoload``),
        asked only when ``catalog`` has an unloaded preset it would matter for; a router that
        cannot say does not."""
        if not any(model.is_autoload_preset for model in catalog):
            return False
        try:
            payload = await self._request("GET", "/props")
        except LlamaError:
            return False
        return says_autoload(payload)

    async def load(self, model: str) -> None:
        await self._request("POST", "/models/load", {"model": model})

    async def unload(self, model: str) -> None:
        await self._request("POST", "/models/unload", {"model": model})

    async def _status(self, model: str) -> RouterModel | None:
        return next((m for m in await self.list() if m.id == model), None)

    async def load_and_wait(
        self, model: str, on_progress: Callable[[Progress], None] | None = None
    ) -> RouterModel:
        """Ask the router to load ``model`` and wait until its catalogue says ``loaded``, showing
        the stages its event stream reports; a model that fails (or goes back to ``unloaded`` with
        an exit code) raises."""
        report = on_progress or (lambda _: None)
        seen: dict[str, str] = {}

        def on_event(event: RouterEvent) -> None:
            if event["model"] != model or event["event"] not in ("model_status", "status_change"):
                return
            data = event["data"] if isinstance(event["data"], dict) else {}
            if data.get("status") == "loaded":
                seen["loaded"] = "yes"
            elif data.get("status") == "unloaded":
                seen["error"] = "Model failed to load"
            progress = load_progress(data)
            if progress is not None:
                report(progress)

        async with self._watching(on_event):
            await self.load(model)
            report({"message": "Loading model"})
            while True:
                entry = await self._status(model)
                if entry is not None and entry.status == "loaded":
                    return entry
                if entry is None and "loaded" in seen:
                    return RouterModel({"id": model, "status": {"value": "loaded"}})
                if (entry is not None and entry.failed) or "error" in seen:
                    code = (entry.raw.get("status") or {}).get("exit_code") if entry is not None else None
                    raise LlamaError(
                        f"Model exited with code {code}"
                        if code is not None
                        else seen.get("error", "Model failed to load")
                    )
                await asyncio.sleep(_POLL_S)

    async def download(self, model: str) -> None:
        await self._request("POST", "/models", {"model": model})

    async def download_and_wait(
        self, model: str, on_progress: Callable[[Progress], None] | None = None
    ) -> builtins.list[RouterModel]:
        """Ask the router to download ``model`` (``owner/repository[:quant]``) and wait until it is
        done (its ``download_finished`` event, or the catalogue lists it no longer downloading),
        showing the bytes from the event stream and the catalogue; the catalogue then, re-read
        from disk (``?reload=1``)."""
        report = on_progress or (lambda _: None)
        seen: dict[str, str] = {}

        def on_event(event: RouterEvent) -> None:
            if event["model"] != model:
                return
            if event["event"] == "download_finished":
                seen["finished"] = "yes"
            elif event["event"] == "download_failed":
                seen["failure"] = _error_message(event["data"]) or "Download failed"
            elif event["event"] == "download_progress":
                seen["downloading"] = "yes"
                progress = download_progress(event["data"])
                if progress is not None:
                    report(progress)

        async with self._watching(on_event):
            await self.download(model)
            report({"message": "Downloading model"})
            polls = 0
            while True:
                if "failure" in seen:
                    raise LlamaError(seen["failure"])
                polls += 1
                entry = await self._status(model)
                if entry is not None and entry.status == "downloading":
                    seen["downloading"] = "yes"
                    progress = download_progress((entry.raw.get("status") or {}).get("progress"))
                    if progress is not None:
                        report(progress)
                elif entry is not None and entry.failed:
                    raise LlamaError(f"Download of {model} failed")
                elif "finished" in seen or (entry is not None and ("downloading" in seen or polls >= 2)):
                    return await self.list(reload=True)
                await asyncio.sleep(_POLL_S * 2)

    @contextlib.asynccontextmanager
    async def _watching(self, on_event: Callable[[RouterEvent], None]) -> AsyncIterator[None]:
        """The router's event stream read beside the body, and closed when it ends."""
        task = asyncio.ensure_future(watch(self.server_url, self.api_key, on_event))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    async def unload_and_wait(self, model: str) -> None:
        await self.unload(model)
        while True:
            entry = await self._status(model)
            if entry is None or entry.status == "unloaded":
                return
            await asyncio.sleep(_POLL_S / 2)


def _error_message(payload: Any) -> str | None:
    """``{"error": {"message": "..."}}``'s message."""
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) and message else None

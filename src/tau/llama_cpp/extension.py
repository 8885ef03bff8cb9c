"""The built-in ``llama.cpp`` extension (pi's ``builtin:llama.cpp``): the router's models as the
provider ``llama.cpp``, and ``/llama`` to load and unload them.

The router is found from ``LLAMA_BASE_URL`` (or the ``env`` of an ``auth.json`` ``llama.cpp``
credential, pi's ``/login llama.cpp``), its key from ``LLAMA_API_KEY`` (or that credential's key).
At start-up the catalogue is read once (a short timeout: a router that is down costs nothing but
its models): the models a request can go to now are the provider's chat models, served through the
router's OpenAI-compatible ``/v1``, and classifier models too — the loaded and sleeping ones and,
when the router autoloads (``/props`` ``models_autoload``, asked only when there is one), the
unloaded presets it would load on their first request, as pi 1.6 lists them (decision models only that: they answer through ``/v1/systemone``; chat models through
``llama-cpp-classify``). ``/llama`` lists every model of the router as pi's does (the
loaded ones first, then by name; a loaded one's context size, another's status when it is neither
loaded nor unloaded); choosing an unloaded one loads it (asking first whether to unload the others)
with a progress view that follows the router's events, where Escape asks "Stop loading?" (yes: the
router is told to unload it and the models unloaded for it are loaded again, as pi does), choosing
a loaded one unloads it, and the provider's models follow.
"Download model…" finds a GGUF repository on Hugging Face (``hugging_face``) and has the router
download it, with the same progress view ("Stop download?").
"""

from __future__ import annotations

import contextlib
import math
from typing import TYPE_CHECKING, Any

from tau.extensions.loader import ExtensionSource
from tau.extensions.ui import ComponentUI
from tau.llama_cpp.client import (
    LlamaClient,
    LlamaError,
    RouterModel,
    inference_url,
    normalize_server_url,
    says_autoload,
)
from tau.llama_cpp.events import format_bytes
from tau.llama_cpp.fallback import LLAMA_COMMAND, LLAMA_DESCRIPTION, NOT_HERE
from tau.llama_cpp.hub_search import EXACT, HubSearchView, compact_count
from tau.llama_cpp.hugging_face import RECOMMENDED, HuggingFaceClient, find_token
from tau.llama_cpp.progress import Stopped, run_with_progress

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.extensions.context import ExtensionCommandContext

__all__ = ["PROVIDER", "classifier_entry", "llama_extension_source", "provider_config"]

PROVIDER = "llama.cpp"
_STARTUP_TIMEOUT_S = 2.0
_DOWNLOAD = "Download model…"
_SEARCHES: dict[str, dict[str, list[Any]]] = {}
"""Each hub's answers by query, kept for the session as pi keeps them."""
_DOWNLOAD_HELP = "Hugging Face owner/repository[:quant]"
_ROW_NAME = (36, 56)  # the name column's narrowest and widest, as pi's list
_NOT_CONFIGURED = f"Configure llama.cpp with /login {PROVIDER}"


def provider_config(
    server_url: str, api_key: str | None, models: list[RouterModel], *, router_autoload: bool = False
) -> dict[str, Any]:
    """The provider as a models.json entry: the catalogue's chat models a request can go to
    (``RouterModel.is_selectable``: loaded, sleeping, or an unloaded preset of a router that
    autoloads), and each of those models as a classifier (``type: "classifier"``)."""
    selectable = [model for model in models if model.is_selectable(router_autoload)]
    return {
        "api": "openai-completions",
        "baseUrl": inference_url(server_url),
        "apiKey": api_key or "local",
        "models": [
            {
                "id": model.id,
                "name": model.id,
                "reasoning": False,
                "input": ["text", "image"] if model.input_images else ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": model.context_window,
                "maxTokens": model.context_window,
                "compat": {
                    "supportsStore": False,
                    "supportsReasoningEffort": False,
                    "supportsUsageInStreaming": True,
                    "supportsStrictMode": False,
                    "maxTokensField": "max_tokens",
                },
            }
            for model in selectable
            if model.is_chat
        ]
        + [classifier_entry(server_url, model) for model in selectable],
    }


def classifier_entry(server_url: str, model: RouterModel) -> dict[str, Any]:
    """A loaded model as a classifier, as pi lists it: a decision model answers through the router's
    System One endpoint (``/v1/systemone``, images as Clef's data URLs when it takes them); a chat
    model through ``llama-cpp-classify`` (next-token probabilities of answer labels, text only)."""
    decision = model.is_decision
    image = decision and model.input_images
    entry: dict[str, Any] = {
        "type": "classifier",
        "id": model.id,
        "name": model.id,
        "api": "typesafe-system-one" if decision else "llama-cpp-classify",
        "provider": PROVIDER,
        "baseUrl": inference_url(server_url) if decision else normalize_server_url(server_url),
        "input": ["text", "image"] if image else ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": model.context_window,
    }
    if image:
        entry["compat"] = {"imageInput": "images", "sendImageOptInHeader": False}
    return entry


def _catalog_now(server_url: str, api_key: str | None) -> tuple[list[RouterModel], bool]:
    """The catalogue at start-up (synchronous, short timeout), and whether the router autoloads
    (asked only when an unloaded preset makes it matter); no models when the router cannot answer."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    root = LlamaClient(server_url).server_url
    try:
        with httpx.Client(timeout=_STARTUP_TIMEOUT_S, trust_env=False) as http:
            models = [RouterModel(m) for m in http.get(f"{root}/models", headers=headers).json()["data"]]
            if not any(model.is_autoload_preset for model in models):
                return models, False
            try:
                props = http.get(f"{root}/props", headers=headers).json()
            except Exception:  # a router that cannot say does not autoload (pi's reading)
                return models, False
            return models, says_autoload(props)
    except Exception:  # a router that is down or not a router: no models, /llama says why
        return [], False


def llama_extension_source(
    server_url: str | None, api_key: str | None, *, interactive: bool, offline: bool = False
) -> ExtensionSource:
    """The extension; ``server_url`` ``None``: not configured (``/llama`` says how).
    ``interactive``: the terminal UI runs (``/llama`` is its dialog, as in pi; RPC and print modes
    get one line)."""

    def setup(tau: ExtensionAPI) -> None:
        if server_url is not None:
            models, autoload = ([], False) if offline else _catalog_now(server_url, api_key)
            tau.register_provider(
                PROVIDER, provider_config(server_url, api_key, models, router_autoload=autoload)
            )

        async def llama(args: str, ctx: ExtensionCommandContext) -> None:
            if not interactive or not ctx.has_ui:
                ctx.ui.notify(NOT_HERE, "warning")
                return
            if server_url is None:
                ctx.ui.notify(_NOT_CONFIGURED, "warning")
                return
            await _manage(tau, ctx, LlamaClient(server_url, api_key))

        tau.register_command(LLAMA_COMMAND, llama, description=LLAMA_DESCRIPTION)

    return ExtensionSource("inline", "llama.cpp", "<builtin:llama.cpp>", setup=setup)


async def _sync(tau: ExtensionAPI, client: LlamaClient) -> list[RouterModel]:
    """The router's catalogue now, with the provider's models brought up to date."""
    catalog = await client.list()
    await _register(tau, client, catalog)
    return catalog


async def _register(tau: ExtensionAPI, client: LlamaClient, catalog: list[RouterModel]) -> None:
    """The provider's models as ``catalog`` makes them."""
    autoload = await client.autoloads(catalog)
    tau.register_provider(
        PROVIDER, provider_config(client.server_url, client.api_key, catalog, router_autoload=autoload)
    )


async def _catalog(
    tau: ExtensionAPI, ctx: ExtensionCommandContext, client: LlamaClient
) -> list[RouterModel] | None:
    """The catalogue, or ``None`` when the router cannot be read and the user closes pi's
    "llama.cpp unavailable" question rather than retry."""
    while True:
        try:
            return await _sync(tau, client)
        except LlamaError as exc:
            choice = await ctx.ui.select(
                f"llama.cpp unavailable\n{client.server_url}\n\n{exc}", ["Retry", "Close"]
            )
            if choice != "Retry":
                return None


async def _manage(tau: ExtensionAPI, ctx: ExtensionCommandContext, client: LlamaClient) -> None:
    ui = ctx.ui
    catalog = await _catalog(tau, ctx, client)
    while catalog is not None:
        labels = _rows(catalog)
        download = _row(_DOWNLOAD, _DOWNLOAD_HELP, _name_width(catalog))
        choice = await ui.select(f"llama.cpp models\n{client.server_url}", [*labels, download])
        if choice != download and choice not in labels:
            return
        failure: LlamaError | None = None
        try:
            if choice == download:
                await _download(tau, ctx, client)
            elif labels[choice].is_loaded:
                await _unload(tau, ctx, client, labels[choice])
            elif labels[choice].status == "unloaded":
                await _load(tau, ctx, client, catalog, labels[choice])
            else:
                ui.notify(f"{labels[choice].id} is {labels[choice].status}", "warning")
        except LlamaError as exc:
            failure = exc
        # As pi: the router's state again (asking to retry when it is gone), then what went wrong.
        catalog = await _catalog(tau, ctx, client)
        if catalog is not None and failure is not None:
            ui.notify(str(failure), "error")


async def _unload(
    tau: ExtensionAPI, ctx: ExtensionCommandContext, client: LlamaClient, model: RouterModel
) -> None:
    if await ctx.ui.confirm("Unload model?", model.id):
        await client.unload_and_wait(model.id)
        await _sync(tau, client)
        ctx.ui.notify(f"Unloaded {model.id}")


async def _load(
    tau: ExtensionAPI,
    ctx: ExtensionCommandContext,
    client: LlamaClient,
    catalog: list[RouterModel],
    target: RouterModel,
) -> None:
    ui = ctx.ui
    others = [m for m in catalog if m.id != target.id and m.is_loaded]
    if others:
        choice = await ui.select(
            f"{len(others)} model{' is' if len(others) == 1 else 's are'} loaded",
            ["Unload all and load", "Keep loaded and load", "Cancel"],
        )
        if choice not in ("Unload all and load", "Keep loaded and load"):
            return
        if choice == "Unload all and load":
            for model in others:
                await client.unload_and_wait(model.id)
        else:
            others = []  # kept loaded: nothing to restore

    async def restore() -> None:
        # As pi: the models unloaded for this one come back when it does not load.
        if others:
            ui.notify("Restoring previously loaded models")
            for model in others:
                await client.load_and_wait(model.id)
            await _sync(tau, client)

    try:
        result = await run_with_progress(
            ui,
            title="Loading model",
            model=target.id,
            stop_title="Stop loading?",
            run=lambda update: client.load_and_wait(target.id, update),
            cancel=lambda: client.unload(target.id),  # the router is told to stop
        )
    except LlamaError:
        with contextlib.suppress(LlamaError):  # the load's error is the one to show
            await restore()
        raise
    if isinstance(result, Stopped):
        await restore()
        return
    loaded = next((model for model in await _sync(tau, client) if model.id == target.id), None)
    ui.notify(
        f"Loaded {target.id}"
        if loaded is not None and loaded.status == "loaded"
        else f"Load started for {target.id}"
    )


async def _download(tau: ExtensionAPI, ctx: ExtensionCommandContext, client: LlamaClient) -> None:
    """pi's "Download model…": a Hugging Face search (or an exact ``owner/repository[:quant]``),
    a warning for a gated repository, the quantization, then the router downloads it."""
    ui = ctx.ui
    hub = HuggingFaceClient(find_token())
    drawn: list[HubSearchView] = []
    picked = None
    if isinstance(ui, ComponentUI):  # pi's search as you type, where components are drawn
        cache = _SEARCHES.setdefault(hub.endpoint, {})

        def view(tui: Any, _theme: Any, keybindings: Any, done: Any) -> HubSearchView:
            drawn.append(HubSearchView(tui, keybindings, done, hub.search, cache))
            return drawn[-1]

        picked = await ui.custom(view)
    if drawn:
        if not picked:
            return
        selected = str(picked)
    elif not (
        query := (await ui.input("Download model", "Model name or owner/repository[:quant]") or "").strip()
    ):
        return
    elif EXACT.fullmatch(query):
        selected = query
    else:
        if len(query) < 2:
            ui.notify("Type at least 2 characters", "warning")
            return
        found = await hub.search(query)
        if not found:
            ui.notify(f"No GGUF models found for {query}", "warning")
            return
        rows = {f"{model.id}  {compact_count(model.downloads)} downloads": model.id for model in found}
        choice = await ui.select(f"Hugging Face models for {query}", list(rows))
        if choice not in rows:
            return
        selected = rows[choice]
    colon = selected.find(":", selected.find("/") + 1)
    repository, quantization = (selected, "") if colon < 0 else (selected[:colon], selected[colon + 1 :])
    details = await hub.details(repository)
    if details.gated is not None:
        approval = "Manual approval is required" if details.gated == "manual" else "Accept the access terms"
        access = await ui.select(
            f"Hugging Face access required\n{details.id}\n\n{approval} at:\n{hub.endpoint}/{details.id}\n\n"
            "The llama.cpp server needs HF_TOKEN with access.",
            ["Continue", "Back"],
        )
        if access != "Continue":
            return
    if not quantization and details.quantizations:
        options = [
            " · ".join(
                part
                for part in (
                    entry.name,
                    format_bytes(entry.size) if entry.size is not None else "",
                    "recommended" if entry.name == RECOMMENDED else "",
                )
                if part
            )
            for entry in details.quantizations
        ]
        picked = await ui.select(f"Select quantization\n{details.id}", options)
        if picked not in options:
            return
        quantization = details.quantizations[options.index(picked)].name
    model = f"{details.id}:{quantization}" if quantization else details.id
    result = await run_with_progress(
        ui,
        title="Downloading model",
        model=model,
        stop_title="Stop download?",
        run=lambda update: client.download_and_wait(model, update),
        cancel=lambda: client.unload(model),
    )
    if isinstance(result, Stopped):
        return
    await _register(tau, client, result)
    ui.notify(f"Downloaded {model}")


def _rows(catalog: list[RouterModel]) -> dict[str, RouterModel]:
    """The list's rows as pi's: the loaded models first, then by name; each a name column and
    what pi says of the model ("loaded · 33k context", "loading", nothing when unloaded)."""
    width = _name_width(catalog)
    ordered = sorted(catalog, key=lambda model: (model.status != "loaded", model.id.casefold(), model.id))
    return {_row(model.id, _description(model), width): model for model in ordered}


def _name_width(catalog: list[RouterModel]) -> int:
    """The name column: the longest name and two spaces, within pi's bounds."""
    widest = max([len(_DOWNLOAD) + 2, *(len(model.id) + 2 for model in catalog)])
    return max(_ROW_NAME[0], min(_ROW_NAME[1], widest))


def _row(name: str, description: str, width: int) -> str:
    if not description:
        return name
    shown = name if len(name) <= width - 2 else name[: width - 2]
    return shown.ljust(width) + description


def _description(model: RouterModel) -> str:
    """``loaded · 33k context``; ``sleeping`` counts as loaded, ``unloaded`` says nothing."""
    details = []
    if model.is_loaded:
        details.append("loaded")
        context = _context_label(model)
        if context:
            details.append(f"{context} context")
    elif model.status != "unloaded":
        details.append(model.status)
    return " · ".join(details)


def _context_label(model: RouterModel) -> str | None:
    """The context as pi labels it (``33k`` for 32768): the model's ``n_ctx``, else its training
    context, else ``-c``/``--ctx-size`` of its arguments."""
    meta = model.raw.get("meta") or {}
    context = meta.get("n_ctx") if meta.get("n_ctx") is not None else meta.get("n_ctx_train")
    if not isinstance(context, int) or context <= 0:
        context = model.context_argument
    if context is None:
        return None
    return f"{math.floor(context / 1000 + 0.5)}k" if context >= 1000 else str(context)

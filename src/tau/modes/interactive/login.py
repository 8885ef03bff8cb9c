"""``/login`` and ``/logout``: sign in with an account (OAuth, as ``tau auth login``) or save an API
key, and remove a stored credential.

The OAuth flow runs in a worker thread; what it asks (a method, a domain, a pasted code) becomes a
dialog on the event loop, and what it says becomes a notice in the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from tau.accounts.oauth import OAUTH_PROVIDERS, LoginCancelledError, LoginError, SelectOption, get_oauth_flow
from tau.accounts.provider_names import provider_name
from tau.modes.interactive.dialogs import Dialog, InputDialog, ListDialog, ListItem
from tau.modes.interactive.editor import ArgumentChoice
from tau.modes.interactive.fuzzy import pi_fuzzy_filter
from tau.modes.interactive.host import DialogHost
from tau.modes.interactive.login_methods import account_login_label, login_method_name

__all__ = ["login_argument_choices", "login_command", "logout_command"]

T = TypeVar("T")
_ACCOUNT = "Sign in with an account"
_API_KEY = "Sign in with an API key"


class LoginHost(DialogHost, Protocol):
    """What ``/login`` and ``/logout`` use of the mode: dialogs, notices, and the footer (whose
    provider and subscription marks a changed credential alters)."""

    def footer_changed(self) -> None: ...


async def login_command(mode: LoginHost, argument: str) -> None:
    ref = argument.strip()
    if ref.lower() in _OWN_DIALOGS:
        await _api_key_login(mode, ref.lower())
        return
    if not ref:
        await _pick_method(mode)
        return
    options = _login_options(mode, None)
    # as pi 1.6: a provider's id or name (case ignored) starts its sign-in, or asks which kind
    # when it has both; anything else searches both lists at once
    matched = [o for o in options if ref.lower() in (o[1].lower(), o[2].lower())]
    if len(matched) == 1:
        await _start(mode, matched[0][0], matched[0][1])
    elif matched and len({provider for _, provider, _ in matched}) == 1:
        await _pick_method(mode, matched)
    else:
        dialog = _provider_dialog(mode, options)
        dialog.query.text = ref
        picked = await mode.show_dialog(dialog)
        if picked is not None:
            await _start(mode, *picked.value)


async def _pick_method(mode: LoginHost, options: list[tuple[str, str, str]] | None = None) -> None:
    """pi 1.6's first screen: an account or an API key, then Radius's own sign-in with its status;
    for one provider with both kinds (``options``), its two ways to sign in."""
    if options is None:
        name = OAUTH_PROVIDERS[_RADIUS][0]
        radius = f"Sign in with {name}{_status(mode, _RADIUS, 'oauth')}"
        items = [ListItem(_ACCOUNT, _ACCOUNT), ListItem(_API_KEY, _API_KEY), ListItem(radius, _RADIUS)]
        chosen = await mode.show_dialog(ListDialog("Select authentication method:", items))
        if chosen is None:
            return
        if chosen.value == _RADIUS:
            await _oauth_login(mode, _RADIUS)
            return
        auth_type = "oauth" if chosen.value == _ACCOUNT else "api_key"
        picked = await mode.show_dialog(_provider_dialog(mode, _login_options(mode, auth_type)))
        if picked is not None:
            await _start(mode, *picked.value)
        return
    provider, name = options[0][1], options[0][2]
    items = [ListItem(account_login_label(provider), "oauth"), ListItem(_API_KEY, "api_key")]
    chosen = await mode.show_dialog(ListDialog(f"Select authentication method for {name}:", items))
    if chosen is not None:
        await _start(mode, chosen.value, provider)


async def _start(mode: LoginHost, auth_type: str, provider: str) -> None:
    if auth_type == "oauth":
        await _oauth_login(mode, provider)
    else:
        await _api_key_login(mode, provider)


_PICK_TITLE = "Select provider to configure:"
_OWN_DIALOGS = frozenset({"llama.cpp", "google-vertex"})  # providers whose login asks more than a key
# pi 1.6's partner providers: first in its lists, in this order, marked with ✦
_RADIUS = "radius"
_PREFERRED = (_RADIUS, "openrouter")
# the providers whose account sign-in pi 1.6 calls a subscription (its others: an account)
_SUBSCRIPTION = frozenset(
    {"anthropic", "openai", "openai-codex", "github-copilot", "kimi-coding", "meta", "xai"}
)
# providers with an account sign-in and no API key (pi 1.6 lists them only under accounts)
_ACCOUNT_ONLY = frozenset({"openai-codex", "google-gemini-cli", "google-antigravity"})
_ENV_NAMES = re.compile(r"^[A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*$")
# tau's sources of a configured key, in the words pi 1.6's list shows (an env variable aside)
_SOURCE_WORDS = {"runtime": "runtime", "api_key": "stored", "oauth": "stored", "fallback": "models_json_key"}


def _type_word(auth_type: str, provider: str) -> str:
    if auth_type == "api_key":
        return "API key"
    return "subscription" if provider in _SUBSCRIPTION else "account"


def _status(mode: LoginHost, provider: str, auth_type: str) -> str:
    """pi 1.6's end of a row: not configured, configured another way, or where the key comes from."""
    registry = mode.session.services.model_registry
    status = registry.get_auth_status(provider)
    if not status.configured:
        return " • not configured"
    configured_type = "oauth" if registry.is_using_oauth_provider(provider) else "api_key"
    if configured_type != auth_type:
        return f" • {_type_word(configured_type, provider)} configured"
    source = status.detail if status.source == "env" and status.detail else None
    if source is None:
        source = _SOURCE_WORDS.get(status.source or "", status.detail or status.source or "")
    if not source:
        return " ✓ configured"
    return f" ✓ env: {source}" if _ENV_NAMES.match(source) else f" ✓ {source}"


def _login_options(mode: LoginHost, auth_type: str | None) -> list[tuple[str, str, str]]:
    """``/login``'s (auth type, provider, name) choices in pi 1.6's order: partners first, the rest
    by name, a provider's account sign-in above its API key."""
    options: list[tuple[str, str, str]] = []
    for provider in mode.session.services.model_registry.get_providers():
        if auth_type in (None, "oauth") and provider in OAUTH_PROVIDERS:
            options.append(("oauth", provider, OAUTH_PROVIDERS[provider][0]))
        if auth_type in (None, "api_key") and provider not in _ACCOUNT_ONLY:
            options.append(("api_key", provider, provider_name(provider)))
    listed = {(kind, provider) for kind, provider, _ in options}
    if auth_type in (None, "oauth"):
        options += [
            ("oauth", provider, name)
            for provider, (name, _, _) in OAUTH_PROVIDERS.items()
            if ("oauth", provider) not in listed
        ]

    def rank(option: tuple[str, str, str]) -> tuple[int, str, int]:
        kind, provider, name = option
        partner = _PREFERRED.index(provider) if provider in _PREFERRED else len(_PREFERRED)
        return (partner, name.casefold(), 0 if kind == "oauth" else 1)

    return sorted(options, key=rank)


def login_argument_choices(mode: LoginHost, typed: str) -> list[ArgumentChoice] | None:
    """``/login``'s argument suggestions, as pi 1.6's: each provider once, in the list's order,
    with its name and kinds of sign-in (``Anthropic · subscription/API key``), matched on its id,
    name and kinds."""
    providers: dict[str, tuple[str, list[str]]] = {}
    for kind, provider, name in _login_options(mode, None):
        providers.setdefault(provider, (name, []))[1].append(kind)

    def kinds(provider: str, words: bool) -> list[str]:
        types = sorted(providers[provider][1], key=lambda kind: kind != "oauth")
        return [
            f"{kind} {_type_word(kind, provider)}" if words else _type_word(kind, provider) for kind in types
        ]

    def search_text(provider: str) -> str:
        return " ".join([provider, providers[provider][0], *kinds(provider, True)])

    found = pi_fuzzy_filter(typed, list(providers), search_text)
    choices = []
    for provider in found:
        name, described = providers[provider][0], "/".join(kinds(provider, False))
        choices.append(
            ArgumentChoice(provider, provider, described if name == provider else f"{name} · {described}")
        )
    return choices or None


def _provider_dialog(mode: LoginHost, options: list[tuple[str, str, str]]) -> ListDialog[tuple[str, str]]:
    """The provider list for ``options`` as pi 1.6's: each row with how it is configured, and with
    its kind of sign-in when the list has both kinds; a search ranks rows as pi's does."""
    mixed = len({kind for kind, _, _ in options}) > 1
    items: list[ListItem[tuple[str, str]]] = []
    for kind, provider, name in options:
        label = name + (" ✦" if provider in _PREFERRED else "")
        if mixed:
            label += f" [{_type_word(kind, provider)}]"
        label += _status(mode, provider, kind)
        search = f"{name} {provider} {kind} {login_method_name(provider, kind)}"
        items.append(ListItem(label, (kind, provider), "", search))
    return ListDialog(
        _PICK_TITLE,
        items,
        matcher=lambda query, rows: pi_fuzzy_filter(query, rows, lambda r: r.search_text or r.label),
    )


async def _api_key_login(mode: LoginHost, provider: str) -> None:
    registry = mode.session.services.model_registry
    if provider == "google-vertex":
        await _vertex_login(mode)
        return
    if provider == "llama.cpp":
        await _llama_login(mode)
        return
    key = await mode.show_dialog(
        InputDialog(
            f"Login to {provider_name(provider)}\n{_key_prompt(provider)}",
            placeholder="kept in auth.json (mode 0600)",
            password=True,
        )
    )
    if not key or not key.strip():
        return
    from tau.accounts.provider_settings import login_settings

    settings: dict[str, str] = {}
    for setting in login_settings(provider):  # as pi's login: Cloudflare's account and gateway
        value = await mode.show_dialog(InputDialog(setting.prompt))
        if not value or not value.strip():
            return
        settings[setting.variable] = value.strip()
    if settings:
        credential = {"type": "api_key", "key": key.strip(), "env": settings}
        registry.auth_storage.set(provider, credential)
    else:
        registry.auth_storage.set_api_key(provider, key.strip())
    _after_change(mode)
    hint = "" if mode.session.model is not None else "; choose a model with /model"
    mode.chat.add_notice(f"Saved the API key for {provider_name(provider)}{hint}")
    if registry.is_account_listed(provider):  # as pi after /login: the gateway's list for this key
        from tau.accounts.account_models import refresh_account_models

        failed = await asyncio.to_thread(refresh_account_models, registry, [provider], rebuild=False)
        registry.refresh()
        if provider in failed:
            mode.chat.add_notice(
                f"The {provider_name(provider)} model list could not be refreshed: {failed[provider]}",
                "warning",
            )


def _key_prompt(provider: str) -> str:
    """The line that asks for the key, in pi 1.6's words (its providers that name themselves)."""
    if provider == "anthropic":
        return "Enter Anthropic API key"
    if provider in ("cloudflare-workers-ai", "cloudflare-ai-gateway"):
        return "Enter Cloudflare API key"
    return "Enter API key"


async def _llama_login(mode: LoginHost) -> None:
    """pi's ``/login llama.cpp``: the router's URL and an optional key, checked against the router
    (its model list) and kept as an ``api_key`` credential whose ``env`` names the URL."""
    import os

    from tau.llama_cpp.client import DEFAULT_SERVER_URL, LlamaClient, LlamaError, normalize_server_url

    default = os.environ.get("LLAMA_BASE_URL") or DEFAULT_SERVER_URL
    url = await mode.show_dialog(InputDialog("llama.cpp server URL", placeholder=default))
    if url is None:
        return
    key = await mode.show_dialog(InputDialog("API key (optional)", password=True))
    if key is None:
        return
    try:
        server = normalize_server_url(url.strip() or default)
        await LlamaClient(server, key.strip() or None).list()
    except LlamaError as error:
        mode.chat.add_notice(str(error), "error")
        return
    credential: dict[str, Any] = {"type": "api_key", "env": {"LLAMA_BASE_URL": server}}
    if key.strip():
        credential["key"] = key.strip()
    mode.session.services.model_registry.auth_storage.set("llama.cpp", credential)
    _after_change(mode)
    mode.chat.add_notice(
        f"Saved the llama.cpp router {server}; /reload picks up its models, /llama loads them"
    )


async def _vertex_login(mode: LoginHost) -> None:
    from tau.accounts import vertex_login

    items = [ListItem(option.label, option.id) for option in vertex_login.METHODS]
    chosen = await mode.show_dialog(ListDialog(vertex_login.METHOD_MESSAGE, items))
    if chosen is None:
        return
    if chosen.value == "adc":
        mode.chat.add_notice(vertex_login.ADC_HINT)
    answers: dict[str, str] = {}
    for key, prompt in vertex_login.questions_for(chosen.value):
        answer = await mode.show_dialog(InputDialog(prompt, password=key == "key"))
        if answer is None:
            mode.chat.add_notice("Login cancelled.", "warning")
            return
        answers[key] = answer
    try:
        credential = vertex_login.vertex_credential(chosen.value, answers)
    except vertex_login.VertexLoginError as error:
        mode.chat.add_notice(str(error), "error")
        return
    mode.session.services.model_registry.auth_storage.set(vertex_login.PROVIDER, credential)
    _after_change(mode)
    mode.chat.add_notice("Saved the Google Vertex AI credentials")


async def _oauth_login(mode: LoginHost, provider: str) -> None:
    from tau.config.config_errors import ConfigError

    flow = get_oauth_flow(provider)
    if flow is None:
        mode.chat.add_notice(f'"{provider}" has no account sign-in: use "Sign in with an API key"', "error")
        return
    ui = _DialogInteraction(mode, asyncio.get_running_loop())
    try:
        credential = await asyncio.to_thread(flow.login, ui)
    except LoginCancelledError:
        mode.chat.add_notice("Login cancelled.", "warning")
        return
    except LoginError as error:
        mode.chat.add_notice(f"Failed to log in to {flow.name}: {error}", "error")
        return
    finally:
        ui.finish()
    try:
        mode.session.services.model_registry.auth_storage.set(provider, credential)
    except ConfigError as error:
        mode.chat.add_notice(str(error), "error")
        return
    _after_change(mode)
    hint = "" if mode.session.model is not None else "; choose a model with /model"
    mode.chat.add_notice(f"Logged in to {flow.name}{hint}")


async def logout_command(mode: LoginHost, argument: str) -> None:
    storage = mode.session.services.model_registry.auth_storage
    stored = storage.list()
    if not stored:
        mode.chat.add_notice(
            "No stored credentials to remove. /logout only removes credentials saved by /login; "
            "environment variables and models.json config are unchanged."
        )
        return
    if argument.strip() in stored:
        provider = argument.strip()
    else:
        chosen = await mode.show_dialog(
            ListDialog(
                "Remove the stored credential of",
                [ListItem(provider_name(p), p, _kind(mode, p), f"{provider_name(p)} {p}") for p in stored],
            )
        )
        if chosen is None:
            return
        provider = chosen.value
    credential = storage.get(provider) or {}
    storage.remove(provider)
    _after_change(mode)
    if credential.get("type") == "oauth":
        mode.chat.add_notice(f"Logged out of {provider_name(provider)}")
    else:
        mode.chat.add_notice(
            f"Removed stored API key for {provider_name(provider)}. "
            "Environment variables and models.json config are unchanged."
        )


def _after_change(mode: LoginHost) -> None:
    mode.session.services.model_registry.refresh()
    mode.footer_changed()


def _kind(mode: LoginHost, provider: str) -> str:
    credential = mode.session.services.model_registry.auth_storage.get(provider) or {}
    return "account" if credential.get("type") == "oauth" else "API key"


class _DialogInteraction:
    """A login's questions as TUI dialogs and its messages as chat notices (called from the flow's thread)."""

    def __init__(self, mode: LoginHost, loop: asyncio.AbstractEventLoop) -> None:
        self.cancelled = threading.Event()
        self._mode = mode
        self._loop = loop
        self._open: tuple[int, Dialog] | None = None  # the paste or waiting dialog shown while the flow waits
        self._offers = 0
        self._withdrawn_upto = 0

    def _notice(self, text: str, level: str = "info") -> None:
        def show() -> None:
            self._mode.chat.add_notice(text, level)
            self._mode.invalidate()

        self._loop.call_soon_threadsafe(show)

    def _await(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(make(), self._loop).result()

    def show_url(self, url: str, instructions: str) -> None:
        self._notice(f"Open this URL to sign in:\n{url}\n{instructions}")
        _open_browser(url)

    def show_device_code(self, url: str, code: str) -> None:
        self._notice(f"Open {url} and enter code: {code}\nWaiting for authentication...")
        _open_browser(url)

        def waiting() -> Dialog:
            item = ListItem("Cancel the login", "cancel")
            return ListDialog(
                f"Enter code {code} at {url}", [item], hint="waiting for authentication · esc cancels"
            )

        # Whatever the user answers, it ends the wait: the only way out before the code is entered.
        self._offer(waiting, lambda answer: self.cancelled.set())

    def progress(self, message: str) -> None:
        self._notice(message)

    def notice(self, message: str) -> None:
        self._notice(message, "warning")

    def ask(self, message: str, placeholder: str = "") -> str:
        async def ask() -> str | None:
            answer: str | None = await self._mode.show_dialog(InputDialog(message, placeholder=placeholder))
            return answer

        answer = self._await(ask)
        if answer is None:
            self.cancelled.set()
            raise LoginCancelledError("Login cancelled.")
        return answer

    def select(self, message: str, options: list[SelectOption]) -> str:
        async def select() -> str | None:
            items = [ListItem(option.label, option.id) for option in options]
            chosen = await self._mode.show_dialog(ListDialog(message, items))
            return chosen.value if chosen is not None else None

        answer = self._await(select)
        if answer is None:
            self.cancelled.set()
            raise LoginCancelledError("Login cancelled.")
        return answer

    def start_paste(self, message: str, placeholder: str, deliver: Callable[[str | None], None]) -> None:
        def paste() -> Dialog:
            return InputDialog(f"{message} (or finish in the browser)", placeholder=placeholder)

        def answered(answer: Any) -> None:
            if answer is None:
                self.cancelled.set()  # Esc: the user gives up on this login
            else:
                deliver(answer)

        self._offer(paste, answered)

    def stop_paste(self) -> None:
        self._withdraw()

    def finish(self) -> None:
        """The flow is over: withdraw a dialog still open and stop anything still waiting."""
        self.cancelled.set()
        self._withdraw()

    def _offer(self, make: Callable[[], Dialog], answered: Callable[[Any], None]) -> None:
        """Show ``make()`` until the user answers it (``answered``) or the flow withdraws it.

        Offers are numbered in the flow's thread, so a withdrawal reaching the event loop before
        the dialog it withdraws (the browser answered at once) still keeps that dialog away."""
        self._offers += 1
        number = self._offers

        async def show() -> None:
            if number <= self._withdrawn_upto:
                return
            dialog = make()
            self._open = (number, dialog)
            answer = await self._mode.show_dialog(dialog)
            if number > self._withdrawn_upto:
                answered(answer)

        asyncio.run_coroutine_threadsafe(show(), self._loop)

    def _withdraw(self) -> None:
        upto = self._offers

        def withdraw() -> None:
            self._withdrawn_upto = max(self._withdrawn_upto, upto)
            if self._open is not None and self._open[0] <= upto:
                self._open[1].close(None)
                self._open = None

        self._loop.call_soon_threadsafe(withdraw)


def _open_browser(url: str) -> None:
    import webbrowser

    with contextlib.suppress(Exception):
        webbrowser.open(url)

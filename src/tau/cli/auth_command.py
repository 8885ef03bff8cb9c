"""``tau auth``: log in to and out of providers, show how each is authenticated, and print the
credentials for other programs (pi 1.6's ``pi auth`` verbs, plus ``status``).

Every failure is one line on stderr and exit code 1 (``check``: 1 not ready, 2 invalid).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tau.accounts.oauth import OAUTH_PROVIDERS
from tau.accounts.oauth.interaction import SelectOption
from tau.accounts.provider_names import api_key_name, provider_name
from tau.errors import TauError

if TYPE_CHECKING:
    from tau.accounts.auth_storage import AuthStorage
    from tau.accounts.model_registry import ModelRegistry

__all__ = ["AUTH_HELP", "run_auth"]

AUTH_HELP = """Usage:
  tau auth login [provider] [--api-key] [--no-browser]
  tau auth logout [provider]
  tau auth status
  tau auth print-api-key [--provider <provider>] [--model <model>]
  tau auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  tau auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Log in to and out of model providers, see how each is authenticated, or print its credentials for
other programs. Credentials are stored in <agent dir>/auth.json (mode 0600).

Commands:
  login [provider]      Sign in with an account in the browser, or save an API key
  logout [provider]     Remove the stored credential; environment variables and models.json stay
  status                List the providers that have credentials, and where each comes from
  print-api-key         Print the resolved API key (not a login's token)
  print-bearer-token    Print a login's OAuth access token (refreshed if it expires sooner than 30m)
  check                 Print ready, not_ready or invalid; exit with 0, 1 or 2

Options:
  --api-key             Save an API key instead of signing in with an account
  --no-browser          Open no browser; use the provider's other sign-in (copy code, device code)
  --min-expiry <d>      print-bearer-token: minimum remaining lifetime, e.g. 30m or 1h
  --json                check: print the result as JSON
  --credentials         check: print the credential instead of "ready" (with --json: as "credentials")
  --no-refresh          check: do not refresh an expiring login
"""

_RADIUS_MCP_URL = "https://radius.pi.dev/mcp"  # pi's, whichever gateway the login used
_DURATION = re.compile(r"^(\d+)(ms|s|m|h)$", re.IGNORECASE)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


class _AuthUsageError(TauError):
    """A wrong ``tau auth`` command line; one line."""


def run_auth(argv: list[str]) -> int:
    """Run ``tau auth <argv>``; the exit code."""
    verb, rest = (argv[0], argv[1:]) if argv else ("help", [])
    if verb in ("help", "--help", "-h") or "--help" in rest or "-h" in rest:
        sys.stdout.write(AUTH_HELP)
        return 0
    commands: dict[str, Callable[[list[str]], int]] = {
        "login": _login,
        "logout": _logout,
        "status": _status,
        "print-api-key": lambda args: _print_credential(args, bearer=False),
        "print-bearer-token": lambda args: _print_credential(args, bearer=True),
        "check": _check,
    }
    command = commands.get(verb)
    try:
        if command is None:
            raise _AuthUsageError(
                f'Unknown auth command "{verb}": use login, logout, status, print-api-key, print-bearer-token or check'
            )
        return command(rest)
    except _AuthUsageError as error:
        _error(str(error))
        return 2 if verb == "check" else 1
    except KeyboardInterrupt:
        _error("Login cancelled." if verb == "login" else "Interrupted.")
        return 130


# ---- login / logout ---------------------------------------------------------------------------


def _login(args: list[str]) -> int:
    from tau.accounts.oauth import LoginCancelledError, LoginError, get_oauth_flow

    api_key = "--api-key" in args
    browser = "--no-browser" not in args
    positional = [a for a in args if a not in ("--api-key", "--no-browser")]
    if any(a.startswith("-") for a in positional) or len(positional) > 1:
        raise _AuthUsageError("Usage: tau auth login [provider] [--api-key] [--no-browser]")
    if api_key and not browser:
        raise _AuthUsageError("--no-browser only applies to account sign-in; omit it with --api-key.")
    storage = _storage()
    registry = _registry(storage)
    known = set(registry.get_providers()) | set(OAUTH_PROVIDERS)
    if positional:
        provider = positional[0]
    elif sys.stdin.isatty():
        choices = sorted(OAUTH_PROVIDERS) if not api_key else sorted(known)
        provider = _choose("Log in to which provider?", choices)
    else:
        raise _AuthUsageError(
            f"Usage: tau auth login <provider>; providers with a login: {', '.join(OAUTH_PROVIDERS)}"
        )
    if provider not in known:
        if registry.get_error() is not None:  # the provider may be declared in the rejected file
            _error(str(registry.get_error()))
        _error(f'Unknown provider "{_printable(provider)}".')
        _error(f"Providers: {', '.join(sorted(known))}")
        return 1
    flow = None if api_key else get_oauth_flow(provider)
    if flow is None and provider == "google-vertex":
        return _vertex_login(storage)
    if flow is None:
        saved = _save_api_key(storage, provider)
        if saved == 0 and provider in registry.account_listed_providers():
            _refresh_listed_models(registry, provider)
        if saved == 0 and provider == "radius":
            _configure_radius_mcp()
        return saved
    ui = _TerminalInteraction(browser=browser, provider=provider)
    try:
        credential = flow.login(ui)
    except LoginCancelledError:
        _error("Login cancelled.")
        return 1
    except LoginError as error:
        _error(f"Failed to log in to {flow.name}: {error}")
        return 1
    except KeyboardInterrupt:
        ui.cancelled.set()
        _error("Login cancelled.")
        return 1
    saved = _saved(storage, provider, credential, f"Logged in to {flow.name}")
    if saved == 0 and provider == "radius":
        _configure_radius_mcp()
    return saved


def _configure_radius_mcp() -> None:
    """As pi after ``auth login radius``: the global mcp.json's Radius MCP server is made to use the
    Radius login (added as ``radius`` when missing, its own sign-in dropped), unless one already does.
    Decided and written under the file's lock, from the file as it is then."""
    from tau.config.mcp_servers import edit_servers, global_config_path
    from tau.config.paths import agent_dir

    path = global_config_path(str(agent_dir()))
    chosen: tuple[str, bool] | None = None

    def change(servers: dict[str, Any]) -> bool:
        nonlocal chosen
        existing = next((n for n, raw in servers.items() if _radius_server(raw)), None)
        if existing is not None:
            raw = servers[existing]
            auth = raw.get("auth")
            if isinstance(auth, dict) and auth.get("provider") == "radius":
                return False
            name, entry = existing, {key: value for key, value in raw.items() if key != "oauth"}
        else:
            taken = {server.replace("-", "_") for server in servers}
            name, suffix = "radius", 1
            while name.replace("-", "_") in taken:
                name = "radius-mcp" if suffix == 1 else f"radius-mcp-{suffix}"
                suffix += 1
            entry = {"url": _RADIUS_MCP_URL}
        entry["auth"] = {"provider": "radius"}
        servers[name] = entry
        chosen = name, existing is not None
        return True

    try:
        edit_servers(path, change)
    except (OSError, ValueError) as error:
        _error(f"Could not update {path}: {error}")
        return
    if chosen is not None:
        name, replaced = chosen
        print(f'{"Updated" if replaced else "Added"} MCP server "{name}" in {path} to use the Radius login.')


def _radius_server(raw: object) -> bool:
    url = raw.get("url") if isinstance(raw, dict) else None
    return isinstance(url, str) and url.rstrip("/") == _RADIUS_MCP_URL


def _save_api_key(storage: AuthStorage, provider: str) -> int:
    import getpass

    try:
        key = (
            getpass.getpass(f"Enter {api_key_name(provider)}: ")
            if sys.stdin.isatty()
            else sys.stdin.readline()
        )
    except (EOFError, KeyboardInterrupt):
        _error("Login cancelled.")
        return 1
    if not key.strip():
        _error("No API key given; nothing saved.")
        return 1
    credential: dict[str, Any] = {"type": "api_key", "key": key.strip()}
    from tau.accounts.provider_settings import login_settings

    settings: dict[str, str] = {}
    for setting in login_settings(provider):  # as pi's login: Cloudflare's account and gateway
        try:
            value = input(f"{setting.prompt}: ") if sys.stdin.isatty() else sys.stdin.readline()
        except (EOFError, KeyboardInterrupt):
            _error("Login cancelled.")
            return 1
        if not value.strip():
            _error(f"No {setting.what} ID given; nothing saved.")
            return 1
        settings[setting.variable] = value.strip()
    if settings:
        credential["env"] = settings
    return _saved(storage, provider, credential, f"Saved API key for {provider_name(provider)}")


def _vertex_login(storage: AuthStorage) -> int:
    """pi's Vertex login: an API key, or the project and location (and a service-account file) that
    Google Cloud credentials need."""
    from tau.accounts import vertex_login

    try:
        method = _select_in_terminal(vertex_login.METHOD_MESSAGE, vertex_login.METHODS)
        if method == "adc":
            print(vertex_login.ADC_HINT, flush=True)
        answers = {
            key: _read_secret(f"{prompt}: ") if key == "key" else input(f"{prompt}: ")
            for key, prompt in vertex_login.questions_for(method)
        }
        credential = vertex_login.vertex_credential(method, answers)
    except (EOFError, KeyboardInterrupt):
        _error("Login cancelled.")
        return 1
    except vertex_login.VertexLoginError as error:
        _error(str(error))
        return 1
    done = "Saved the API key" if "key" in credential else "Saved the project and location"
    return _saved(storage, vertex_login.PROVIDER, credential, f"{done} for Google Vertex AI")


def _read_secret(prompt: str) -> str:
    import getpass

    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _refresh_listed_models(registry: ModelRegistry, provider: str) -> None:
    """After a key is saved, the models the gateway lists for it (pi refreshes the catalog then)."""
    from tau.accounts.account_models import refresh_account_models

    reason = refresh_account_models(registry, [provider]).get(provider)
    if reason is not None:
        print(
            f"The {provider_name(provider)} model list could not be refreshed ({reason}); tau update --models retries"
        )


def _saved(storage: AuthStorage, provider: str, credential: dict[str, object], done: str) -> int:
    from tau.config.config_errors import ConfigError

    try:
        storage.set(provider, credential)
    except ConfigError as error:
        _error(str(error))
        return 1
    print(f"{done}. Credentials saved to {storage.path}")
    return 0


def _logout(args: list[str]) -> int:
    if len(args) > 1 or any(a.startswith("-") for a in args):
        raise _AuthUsageError("Usage: tau auth logout [provider]")
    storage = _storage()
    stored = storage.list()
    if args:
        provider = args[0]
    elif stored and sys.stdin.isatty():
        provider = _choose("Log out of which provider?", stored)
    else:
        raise _AuthUsageError(
            f"Usage: tau auth logout <provider>; stored credentials: {', '.join(stored) or 'none'}"
        )
    name = provider_name(provider)
    credential = storage.get(provider)
    if credential is None:
        known = set(_registry(storage).get_providers()) | set(OAUTH_PROVIDERS)
        if provider not in known:
            _error(f'Unknown provider "{_printable(provider)}".')
            _error(f"Stored credentials: {', '.join(sorted(stored)) or 'none'}")
            return 1
        print(
            f"No stored credentials for {name}. Environment variables and models.json config are unchanged."
        )
        return 0
    from tau.config.config_errors import ConfigError

    try:
        storage.remove(provider)
    except ConfigError as error:
        _error(f"Logout failed: {error}")
        return 1
    if credential.get("type") == "oauth":
        print(f"Logged out of {name}.")
    else:
        print(
            f"Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    return 0


# ---- status / print / check --------------------------------------------------------------------


def _status(args: list[str]) -> int:
    if args:
        raise _AuthUsageError("Usage: tau auth status")
    storage = _storage()
    registry = _registry(storage)
    providers = list(dict.fromkeys([*storage.list(), *registry.get_providers()]))
    lines = []
    for provider in providers:
        credential = storage.get(provider)
        status = registry.get_auth_status(provider)
        if credential is not None and credential.get("type") == "oauth":
            lines.append((provider, _oauth_status(provider, credential)))
        elif status.configured:
            lines.append((provider, _source_text(status.source, status.detail)))
    print(f"Credentials: {storage.path}")
    if not lines:
        print(
            'No provider has credentials: log in with "tau auth login <provider>" or set an API key variable'
        )
        return 0
    width = max(len(provider) for provider, _ in lines)
    for provider, text in lines:
        print(f"  {provider:<{width}}  {text}")
    return 0


def _oauth_status(provider: str, credential: dict[str, object]) -> str:
    expires = credential.get("expires")
    left_ms = float(expires) - time.time() * 1000 if isinstance(expires, int | float) else 0.0
    refreshable = provider in OAUTH_PROVIDERS and bool(credential.get("refresh"))
    if isinstance(expires, int | float) and expires >= 2**53 - 1:
        timing = "does not expire"  # OpenRouter's login is a permanent key
    elif left_ms > 0:
        timing = f"token valid for {_duration(left_ms)}"
    else:
        timing = "token expired, refreshed on next use" if refreshable else "token expired: log in again"
    email = credential.get("email")
    who = f" as {email}" if isinstance(email, str) and email else ""
    return f"logged in{who} (OAuth), {timing}"


def _source_text(source: str | None, detail: str | None) -> str:
    if source == "api_key":
        return "API key in auth.json"
    if source == "env":
        return f"${detail}" if detail and detail != "ambient credentials" else "ambient credentials"
    if source == "fallback":
        return 'models.json "apiKey"'
    if source == "runtime":
        return "--api-key"
    return source or ""


def _duration(ms: float) -> str:
    minutes = int(ms // 60_000)
    if minutes < 60:
        return f"{max(minutes, 0)}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes}m" if hours < 48 else f"{hours // 24}d"


def _print_credential(args: list[str], *, bearer: bool) -> int:
    """pi's print-api-key (an API key, never a login's token) and print-bearer-token (a login's
    access token with at least ``--min-expiry`` left, default 30 minutes; refreshed if needed)."""
    from tau.accounts.auth_storage import InvalidApiKeyError, OAuthRefreshError

    options = _options(
        args, allowed={"--provider", "--model", "--min-expiry"} if bearer else {"--provider", "--model"}
    )
    storage = _storage()
    registry = _registry(storage)
    provider = _target_provider(options, registry, what="Credential printing")
    if provider not in set(registry.get_providers()) | set(OAUTH_PROVIDERS) | set(storage.list()):
        raise _AuthUsageError(
            f'Unknown provider "{_printable(provider)}". Use --list-models to see available providers.'
        )
    stored = storage.get(provider)
    is_oauth = stored is not None and stored.get("type") == "oauth"
    try:
        if bearer:
            if not is_oauth:
                raise _AuthUsageError(f'Provider "{provider}" is not configured with an OAuth bearer token')
            value = _bearer_token(storage, provider, _duration_ms(options.get("--min-expiry", "30m")))
        else:
            if is_oauth:
                raise _AuthUsageError(f'Provider "{provider}" is configured with OAuth, not an API key')
            key = registry.get_api_key_for_provider(provider)
            if key is None:
                raise _AuthUsageError("No usable API key is configured")
            value = key
    except (InvalidApiKeyError, OAuthRefreshError) as error:
        _error(str(error))
        return 1
    sys.stdout.write(value + "\n")
    return 0


def _bearer_token(storage: AuthStorage, provider: str, min_validity_ms: int) -> str:
    from tau.accounts.auth_storage import OAUTH_MIN_VALIDITY_MS

    fresh = storage.refresh_oauth(provider, min_validity_ms=max(OAUTH_MIN_VALIDITY_MS, min_validity_ms))
    if fresh is None:
        raise _AuthUsageError(f'Provider "{provider}" is not configured with an OAuth bearer token')
    expires = fresh.get("expires")
    if isinstance(expires, int | float) and time.time() * 1000 + min_validity_ms > expires:
        raise _AuthUsageError(f"OAuth refresh returned a token that expires too soon for {provider}")
    return str(fresh.get("access"))


def _check(args: list[str]) -> int:
    """pi's check: ready / not_ready / invalid; an expiring login is refreshed unless --no-refresh."""
    from tau.accounts.auth_storage import AuthStorage, OAuthRefreshError

    flags = {"--json", "--no-refresh", "--credentials"}
    options = _options(args, allowed={"--provider", "--model", *flags}, flags=flags)
    storage = AuthStorage.create()
    registry = _registry(storage)
    provider = _target_provider(options, registry, what="Auth checks")
    result: dict[str, str]
    if storage.load_error is not None or registry.get_error() is not None:
        result = {"status": "invalid", "provider": provider, "reason": "invalid_state"}
    elif provider not in set(registry.get_providers()) | set(OAUTH_PROVIDERS) | set(storage.list()):
        result = {"status": "not_ready", "provider": provider, "reason": "provider_not_found"}
    else:
        status = registry.get_auth_status(provider)
        # pi names the kind of credential, not where it came from: a login, else a key
        result = {"status": "ready", "provider": provider, "authType": _auth_type(status.source)}
        if not status.configured:
            result = {"status": "not_ready", "provider": provider, "reason": "credentials_not_configured"}
        elif status.source == "oauth" and "--no-refresh" not in options:
            try:
                storage.refresh_oauth(provider)
            except OAuthRefreshError:
                result = {"status": "invalid", "provider": provider, "reason": "invalid_state"}
    credential: str | None = None
    if "--credentials" in options and result["status"] == "ready":
        credential = _check_credential(storage, registry, provider)
        if credential is None:
            result = {"status": "not_ready", "provider": provider, "reason": "credential_not_available"}
    if "--json" in options:
        print(json.dumps(result | ({"credentials": credential} if credential else {}), separators=(",", ":")))
    else:
        print(credential or result["status"])
    return {"ready": 0, "not_ready": 1}.get(result["status"], 2)


def _auth_type(source: str | None) -> str:
    """``check --json``'s ``authType`` as pi 1.6 prints it: ``oauth`` for a login, ``api_key`` for a
    key from anywhere (auth.json, the environment, models.json, ``--api-key``, ambient credentials)."""
    return "oauth" if source == "oauth" else "api_key"


def _check_credential(storage: AuthStorage, registry: ModelRegistry, provider: str) -> str | None:
    """``check --credentials``: what a client would send, as pi emits it: a login's access token
    (as stored, after check's refresh), else the resolved API key."""
    stored = storage.get(provider)
    if stored is not None and stored.get("type") == "oauth":
        access = stored.get("access")
        return access if isinstance(access, str) and access else None
    from tau.accounts.auth_storage import InvalidApiKeyError

    try:
        key = registry.get_api_key_for_provider(provider)
    except InvalidApiKeyError:
        return None
    return key if isinstance(key, str) and key else None


# ---- helpers ----------------------------------------------------------------------------------


def _options(args: list[str], *, allowed: set[str], flags: set[str] | None = None) -> dict[str, str]:
    flags = flags or set()
    options: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in flags:
            options[arg] = ""
        elif arg in allowed:
            if index + 1 >= len(args):
                raise _AuthUsageError(f"{arg} needs a value")
            options[arg] = args[index + 1]
            index += 1
        elif not arg.startswith("-") and "--provider" not in options:
            options["--provider"] = arg  # ``tau auth print-api-key anthropic``
        else:
            raise _AuthUsageError(f'Unknown option {arg} for "tau auth"')
        index += 1
    return options


def _target_provider(options: dict[str, str], registry: ModelRegistry, *, what: str) -> str:
    provider = options.get("--provider", "").strip()
    model = options.get("--model", "").strip()
    if model:
        if "/" in model and not provider:
            return model.split("/", 1)[0]
        matches = [
            m for m in registry.get_all() if m.id == model and (not provider or m.provider == provider)
        ]
        if not matches:
            raise _AuthUsageError(f'Unknown model "{_printable(model)}"')
        return matches[0].provider
    if not provider:
        raise _AuthUsageError(f"{what} requires --provider <provider> or --model <model>")
    return provider


def _duration_ms(text: str) -> int:
    match = _DURATION.match(text)
    if not match:
        raise _AuthUsageError("--min-expiry must use a duration such as 30m or 1h")
    return int(match.group(1)) * _UNIT_MS[match.group(2).lower()]


def _storage() -> AuthStorage:
    from tau.accounts.auth_storage import AuthStorage

    storage = AuthStorage.create()
    for warning in storage.drain_warnings():
        _error(f"warning: {warning}")
    if storage.load_error is not None:
        raise _AuthUsageError(str(storage.load_error))
    return storage


def _registry(storage: AuthStorage) -> ModelRegistry:
    from tau.accounts.model_registry import ModelRegistry
    from tau.config.paths import models_path

    return ModelRegistry(storage, models_path())


def _choose(message: str, choices: list[str]) -> str:
    return _select_in_terminal(message, [SelectOption(c, c) for c in choices])


def _select_in_terminal(message: str, options: list[SelectOption]) -> str:
    print(message)
    for number, option in enumerate(options, 1):
        print(f"  {number}. {option.label}")
    while True:
        try:
            answer = input(f"Select 1-{len(options)}: ").strip()
        except EOFError:
            raise KeyboardInterrupt from None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1].id
        print(f"Enter a number from 1 to {len(options)}.")


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _error(line: str) -> None:
    from tau.ai.redaction import redact

    print(f"tau: {redact(line)}", file=sys.stderr, flush=True)


class _TerminalInteraction:
    """A login in the terminal: URLs and codes on stdout, answers from stdin, the browser opened with
    ``webbrowser`` unless ``--no-browser``. stdin need not be a terminal (a pasted code can be piped)."""

    def __init__(self, *, browser: bool, provider: str) -> None:
        self.cancelled = threading.Event()
        self._browser = browser
        self._provider = provider
        self._skipped: list[str] = []
        self._pasting = threading.Event()

    def show_url(self, url: str, instructions: str) -> None:
        print(f"Open this URL to sign in:\n  {url}", flush=True)
        print(instructions, flush=True)
        if self._browser:
            self._open(url)
        if len(self._skipped) == 1:
            print(
                f'To use "{self._skipped[0]}" instead, run "tau auth login {self._provider} --no-browser"',
                flush=True,
            )

    def show_device_code(self, url: str, code: str) -> None:
        print(f"Open {url} and enter code: {code}", flush=True)
        if self._browser:
            self._open(url)
        print("Waiting for authentication...", flush=True)

    def progress(self, message: str) -> None:
        print(message, flush=True)

    def notice(self, message: str) -> None:
        _error(message)

    def ask(self, message: str, placeholder: str = "") -> str:
        hint = f" ({placeholder})" if placeholder else ""
        try:
            return input(f"{message}{hint}: ")
        except EOFError:
            from tau.accounts.oauth import LoginCancelledError

            raise LoginCancelledError("Login cancelled.") from None

    def select(self, message: str, options: list[SelectOption]) -> str:
        first, others = options[0], options[1:]
        if self._browser or not others:
            self._skipped = [option.label for option in others]
            return first.id
        if len(others) > 1:
            return _select_in_terminal(message, others)
        print(f"{message} {others[0].label}", flush=True)
        return others[0].id

    def start_paste(self, message: str, placeholder: str, deliver: Callable[[str | None], None]) -> None:
        self._pasting.set()
        sys.stdout.write(f"{message}: ")
        sys.stdout.flush()

        def read() -> None:
            with contextlib.suppress(OSError, ValueError):
                while self._pasting.is_set():
                    line = sys.stdin.readline()
                    if not line:
                        deliver(None)
                        return
                    if line.strip():
                        deliver(line)
                        return

        threading.Thread(target=read, name="oauth-paste", daemon=True).start()

    def stop_paste(self) -> None:
        if self._pasting.is_set():
            self._pasting.clear()
            print(flush=True)

    @staticmethod
    def _open(url: str) -> None:
        import webbrowser

        with contextlib.suppress(Exception):
            webbrowser.open(url)

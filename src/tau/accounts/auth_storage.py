"""Credentials in ``<agent dir>/auth.json``, and the order in which an API key is looked for.

The file is pi's: ``{"<provider>": {"type": "api_key", "key": "..."}}`` or ``{"type": "oauth",
"access": ..., "refresh": ..., "expires": <ms epoch>, ...}``. It is created with mode 0600 in a 0700
directory and re-chmodded on every write; an existing file that other users may read is tightened to
0600 when loaded, with a warning. Every write happens under the file's lock, re-reads the file first
(another tau may have logged in meanwhile) and replaces it atomically. A file that fails to parse is
reported and never overwritten.

A key for a provider is found in this order: a runtime override (``--api-key``, never stored), the
stored ``api_key`` credential, a stored OAuth access token that has not expired, the provider's
environment variables, and finally the caller's fallback (models.json ``apiKey``). Stored keys and
fallbacks are config values: ``!command`` runs a shell command and uses its trimmed output (10 s
limit, successful results cached for the life of the process), otherwise the name of a set
environment variable yields that variable, otherwise the text is the key itself. Every key is
trimmed of surrounding whitespace (a key pasted from a CRLF file ends in ``\r``); one with a control
or non-ASCII character inside is refused with an error naming where it came from, never the key.
Keys and tokens in use are registered with ``tau.ai.redaction``, so no error text can carry them.

An OAuth credential of a provider tau can log in to (``tau.accounts.oauth``) owns that provider, as
in pi: its token is refreshed when less than five minutes of it are left, under auth.json's lock,
so two tau processes that find it stale at once make one refresh request between them (the second
re-reads the file under the lock and finds the fresh token). The key such a login yields is the
flow's (the access token; Google's logins a JSON of token and project). A refused refresh raises
``OAuthRefreshError`` saying to log in again and leaves the file as it was. An OAuth credential of
another provider is used while it has not expired and skipped after that.
"""

from __future__ import annotations

import contextlib
import copy
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.accounts.provider_settings import missing_setting
from tau.ai.env_keys import AUTHENTICATED, find_env_keys, get_env_api_key, key_problem
from tau.ai.redaction import register_secret
from tau.ai.types import JsonObject
from tau.config.config_errors import ConfigError, read_json_file
from tau.config.config_values import interpolate, missing_variables, variable_names
from tau.config.paths import (
    STORE_STALE_S,
    LockTimeoutError,
    auth_path,
    forget_old_lock_file,
    make_private_dir,
    update_json_file,
)
from tau.errors import TauError

__all__ = [
    "AuthSource",
    "AuthStatus",
    "AuthStorage",
    "InvalidApiKeyError",
    "OAuthRefreshError",
    "clear_config_value_cache",
    "resolve_config_value",
    "unresolved_reason",
]

AuthSource: TypeAlias = Literal["runtime", "api_key", "oauth", "env", "fallback"]

COMMAND_TIMEOUT_S = 10.0
# pi refreshes a token with less than this left; the stored expiry is already 5 minutes early.
OAUTH_MIN_VALIDITY_MS = 5 * 60 * 1000
# A refresh holds the lock for its HTTP round trip; others wait for it rather than refresh again.
REFRESH_LOCK_TIMEOUT_S = 60.0

_command_cache: dict[str, str] = {}


class InvalidApiKeyError(TauError, ValueError):
    """A key that cannot be sent (a control or non-ASCII character inside it); the text names its source."""


class OAuthRefreshError(TauError, ValueError):
    """A stored login could not be refreshed; the text is one line saying what to do."""


def resolve_config_value(value: str) -> str | None:
    """A configured secret as used, trimmed: ``!cmd`` output, else the value with its ``$NAME`` /
    ``${NAME}`` variables filled in (``tau.config.config_values``; a bare name is literal, as pi 1.6).

    ``None`` when a command fails, times out or prints nothing, a variable it names is unset, or
    the value is blank.
    """
    value = value.strip()
    if value.startswith("!"):
        return _run_command(value[1:])
    return (interpolate(value) or "").strip() or None


def unresolved_reason(value: str) -> str:
    """Why config value ``value`` resolved to nothing, for an error line."""
    value = value.strip()
    if value.startswith("!"):
        return f"the command `{value[1:].strip()}` failed or printed nothing"
    missing = missing_variables(value)
    if missing:
        return f"environment variable{'s' if len(missing) > 1 else ''} {', '.join(missing)} not set"
    return "it is blank"


def _describe_config_value(value: str, where: str) -> str:
    """Where the secret of config value ``value`` (found at ``where``) comes from, for error messages."""
    value = value.strip()
    if value.startswith("!"):
        return f"the command in {where}"
    names = variable_names(value)
    if names:
        return f"{', '.join('$' + name for name in names)} (named in {where})"
    return where


def clear_config_value_cache() -> None:
    """Forget cached ``!command`` results (tests; a user who just unlocked a password manager)."""
    _command_cache.clear()


def _run_command(command: str) -> str | None:
    cached = _command_cache.get(command)
    if cached is not None:
        return cached
    from tau import _process_groups as process_groups

    try:
        completed = process_groups.run(
            command,
            shell=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=COMMAND_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0:
        return None
    output: str = completed.stdout.decode("utf-8", errors="replace").strip()
    if not output:
        return None
    # Only successes are cached: a failure (locked vault, expired login) may be fixed and retried.
    _command_cache[command] = output
    return output


class AuthStatus(Struct, frozen=True):
    """How a provider is authenticated, without the secret: where the key comes from and, for env, which variable."""

    configured: bool
    source: AuthSource | None = None
    detail: str | None = None


class AuthStorage:
    """auth.json plus runtime overrides: read credentials, store them, and find a provider's key."""

    def __init__(self, path: Path | None) -> None:
        """Credentials from ``path``; ``None`` keeps them in memory only (tests, embedding)."""
        self._path = path
        self._data: dict[str, JsonObject] = {}
        self._runtime_keys: dict[str, str] = {}
        self._load_error: ConfigError | None = None
        self._errors: list[ConfigError] = []
        self._warnings: list[str] = []
        self.reload()

    @classmethod
    def create(cls, agent_dir_path: Path | None = None) -> AuthStorage:
        """The store in ``<agent dir>/auth.json`` (default agent dir: ``agent_dir()``), creating the
        agent dir with mode 0700 if it does not exist yet: it holds keys and conversations."""
        path = auth_path(agent_dir_path)
        # A read-only home: reading still works, and a write reports the problem.
        with contextlib.suppress(OSError):
            make_private_dir(path.parent)
        return cls(path)

    @classmethod
    def in_memory(cls, data: dict[str, JsonObject] | None = None) -> AuthStorage:
        """Credentials held in memory only, preset to ``data``."""
        storage = cls(None)
        storage._data = copy.deepcopy(data or {})
        return storage

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def load_error(self) -> ConfigError | None:
        """Why auth.json could not be read at the last (re)load, or ``None``."""
        return self._load_error

    def drain_errors(self) -> list[ConfigError]:
        """Errors collected since the last call, oldest first."""
        drained, self._errors = self._errors, []
        return drained

    def drain_warnings(self) -> list[str]:
        """Warnings (one line each) collected since the last call, oldest first."""
        drained, self._warnings = self._warnings, []
        return drained

    def reload(self) -> None:
        """Re-read auth.json; on failure keep the previous credentials and record the error."""
        if self._path is None:
            return
        self._make_private(self._path)
        forget_old_lock_file(self._path)
        try:
            self._data = self._read(self._path)
            self._load_error = None
        except ConfigError as error:
            self._load_error = error
            self._errors.append(error)
        for credential in self._data.values():
            if credential.get("type") == "oauth":
                register_secret(_string(credential.get("access")))
                register_secret(_string(credential.get("refresh")))

    def _make_private(self, path: Path) -> None:
        """Tighten an auth.json that other users may read to 0600, saying so."""
        if os.name == "nt":
            return
        try:
            mode = path.stat().st_mode
        except OSError:
            return
        if not stat.S_ISREG(mode) or not mode & 0o077:
            return
        old = f"{stat.S_IMODE(mode):o}"
        try:
            os.chmod(path, 0o600)
        except OSError as error:
            self._warnings.append(
                f"{path}: other users may read this file (mode {old}) and it could not be changed "
                f"({error.strerror}): run chmod 600 {path}"
            )
            return
        self._warnings.append(f"{path}: other users could read this file (mode {old}); changed it to 600")

    # ---- stored credentials ----------------------------------------------------------------------

    def get(self, provider: str) -> JsonObject | None:
        """A copy of the stored credential of ``provider``, or ``None``."""
        credential = self._data.get(provider)
        return copy.deepcopy(credential) if credential is not None else None

    def list(self) -> list[str]:
        """Providers with a stored credential, in file order."""
        return list(self._data)

    def has(self, provider: str) -> bool:
        """Whether auth.json holds a credential for ``provider``."""
        return provider in self._data

    def set(self, provider: str, credential: JsonObject) -> None:
        """Store ``credential`` for ``provider`` (merged into the current file under its lock)."""
        if not isinstance(credential.get("type"), str):
            raise ValueError('a credential needs a "type" ("api_key" or "oauth")')
        self._write(provider, copy.deepcopy(credential))

    def set_api_key(self, provider: str, key: str) -> None:
        """Store an API key (or a ``!command`` / variable name that yields one) for ``provider``."""
        self.set(provider, {"type": "api_key", "key": key})

    def remove(self, provider: str) -> None:
        """Delete the stored credential of ``provider`` (no error when there is none)."""
        self._write(provider, None)

    # ---- runtime overrides -----------------------------------------------------------------------

    def set_runtime_api_key(self, provider: str, key: str) -> None:
        """Use ``key`` for ``provider`` in this process only (``--api-key``); wins over everything."""
        self._runtime_keys[provider] = key.strip()
        register_secret(key)

    def remove_runtime_api_key(self, provider: str) -> None:
        self._runtime_keys.pop(provider, None)

    # ---- key resolution --------------------------------------------------------------------------

    def has_auth(self, provider: str, *, fallback: str | None = None) -> bool:
        """Whether any source could authenticate ``provider``. Runs no command and refreshes nothing."""
        return self.get_auth_status(provider, fallback=fallback).configured

    def get_auth_status(self, provider: str, *, fallback: str | None = None) -> AuthStatus:
        """Where ``provider``'s key would come from (first source in priority order), without the
        key. As pi, a provider whose requests need settings beside the key (Cloudflare's account and
        gateway: ``tau.accounts.provider_settings``) is configured only when they are all set."""
        status = self.key_status(provider, fallback=fallback)
        if status.configured and missing_setting(provider, self.get_credential_env(provider)) is not None:
            return AuthStatus(False)
        return status

    def key_status(self, provider: str, *, fallback: str | None = None) -> AuthStatus:
        """Where ``provider``'s key would come from, whatever else its requests need."""
        if self._runtime_keys.get(provider):
            return AuthStatus(True, "runtime")
        credential = self._data.get(provider)
        expired_oauth = False
        if credential is not None:
            kind = credential.get("type")
            if kind == "api_key":
                return AuthStatus(True, "api_key")
            if kind == "oauth":
                if _oauth_access(credential) is not None or _refreshable(provider, credential):
                    return AuthStatus(True, "oauth")
                expired_oauth = True
        env_names = find_env_keys(provider)
        if env_names:
            return AuthStatus(True, "env", env_names[0])
        if get_env_api_key(provider) is not None:
            return AuthStatus(True, "env", "ambient credentials")
        if fallback:
            return AuthStatus(True, "fallback")
        # An expired login still counts as configured: refreshing it (or /login) makes it usable.
        return AuthStatus(True, "oauth", "expired") if expired_oauth else AuthStatus(False)

    def get_api_key(self, provider: str, *, fallback: str | None = None) -> str | None:
        """The key for ``provider`` from the first source that yields one; ``fallback`` is a config value
        (models.json ``apiKey``). Raises ``InvalidApiKeyError`` for a key HTTP cannot carry."""
        key, source = self._find_api_key(provider, fallback)
        if key is None:
            return None
        problem = key_problem(key)
        if problem is not None:
            raise InvalidApiKeyError(
                f'The API key of provider "{provider}" from {source} {problem}: fix it there'
            )
        register_secret(key)
        return key

    def _find_api_key(self, provider: str, fallback: str | None) -> tuple[str | None, str]:
        """The trimmed key from the first source that yields one, and a description of that source."""
        runtime = self._runtime_keys.get(provider)
        if runtime:
            return runtime, "--api-key"
        credential = self._data.get(provider)
        where = f'auth.json ("{provider}")'
        if credential is not None:
            kind = credential.get("type")
            stored = credential.get("key")
            if kind == "api_key" and isinstance(stored, str):
                return resolve_config_value(stored), _describe_config_value(stored, where)
            if kind == "api_key" and self.get_credential_env(provider):
                # pi's Google Vertex login stores settings for ambient credentials, not a key.
                return AUTHENTICATED, f"the settings in {where}"
            if kind == "oauth" and _refreshable(provider, credential):
                return self._oauth_api_key(provider), f"the OAuth login in {where}"
            if kind == "oauth":
                access = _oauth_access(credential)
                if access is not None:
                    return access.strip(), f"the OAuth token in {where}"
        env_key = get_env_api_key(provider)
        if env_key is not None:
            names = find_env_keys(provider)
            return env_key, f"${names[0]}" if names else "the environment"
        if fallback:
            where = f'models.json ("apiKey" of provider "{provider}")'
            return resolve_config_value(fallback), _describe_config_value(fallback, where)
        return None, ""

    def get_credential_env(self, provider: str) -> dict[str, str]:
        """The variables a stored ``api_key`` credential sets for its requests (pi's ``env``, e.g.
        ``GOOGLE_CLOUD_PROJECT`` from a Vertex login); they win over the process environment."""
        credential = self._data.get(provider)
        env = (
            credential.get("env") if credential is not None and credential.get("type") == "api_key" else None
        )
        if not isinstance(env, dict):
            return {}
        return {
            name: value.strip() for name, value in env.items() if isinstance(value, str) and value.strip()
        }

    # ---- OAuth logins ----------------------------------------------------------------------------

    def oauth_refresh_due(self, provider: str) -> bool:
        """Whether resolving ``provider``'s key will refresh its login first (network, maybe a lock
        wait): async callers then resolve it in a worker thread. No I/O."""
        credential = self._data.get(provider)
        return (
            credential is not None
            and credential.get("type") == "oauth"
            and _refreshable(provider, credential)
            and _expires_within(credential, OAUTH_MIN_VALIDITY_MS)
        )

    def get_oauth_base_url(self, provider: str) -> str | None:
        """The API base URL ``provider``'s login must be used with (Copilot's per-account host), if any."""
        credential = self._data.get(provider)
        if credential is None or credential.get("type") != "oauth":
            return None
        from tau.accounts.oauth import get_oauth_flow

        flow = get_oauth_flow(provider)
        return flow.base_url(credential) if flow is not None else None

    def _oauth_api_key(self, provider: str) -> str | None:
        credential = self.refresh_oauth(provider)
        if credential is None:
            return None
        from tau.accounts.oauth import get_oauth_flow

        flow = get_oauth_flow(provider)
        key = flow.api_key(credential) if flow is not None else None
        return key.strip() if key else None

    def refresh_oauth(
        self, provider: str, *, min_validity_ms: int = OAUTH_MIN_VALIDITY_MS
    ) -> JsonObject | None:
        """``provider``'s OAuth credential with at least ``min_validity_ms`` left, refreshed if needed
        (once across processes: the check is repeated under the file's lock). ``None`` when there is
        no OAuth login (logged out meanwhile). Raises ``OAuthRefreshError``."""
        credential = self._data.get(provider)
        if credential is None or credential.get("type") != "oauth":
            return None
        if not _expires_within(credential, min_validity_ms):
            return copy.deepcopy(credential)
        path = self._path
        if path is None:
            fresh = self._refreshed(provider, credential)
            self._data[provider] = fresh
            return copy.deepcopy(fresh)

        written: dict[str, Any] = {}

        def refresh(raw: dict[str, Any]) -> JsonObject | None:
            # The check again, under the lock: another process may have refreshed or logged out meanwhile.
            nonlocal written
            written = raw
            current = raw.get(provider)
            if not isinstance(current, dict) or current.get("type") != "oauth":
                return None
            if _expires_within(current, min_validity_ms):
                current = raw[provider] = self._refreshed(provider, current)
            return current

        try:
            current = update_json_file(
                path,
                refresh,
                read=_read_object,
                timeout_s=REFRESH_LOCK_TIMEOUT_S,
                stale_s=STORE_STALE_S,
                mode=0o600,
            )
        except (OSError, LockTimeoutError, ConfigError) as error:
            raise OAuthRefreshError(f'Could not refresh the login for "{provider}": {error}') from error
        if current is None:
            self._data.pop(provider, None)
            return None
        raw = written
        self._data = {name: entry for name, entry in raw.items() if isinstance(entry, dict)}
        register_secret(_string(current.get("access")))
        register_secret(_string(current.get("refresh")))
        return copy.deepcopy(current)

    @staticmethod
    def _refreshed(provider: str, credential: JsonObject) -> JsonObject:
        from tau.accounts.oauth import LoginError, RefreshRejectedError, get_oauth_flow

        flow = get_oauth_flow(provider)
        if flow is None:
            raise OAuthRefreshError(f'tau cannot refresh logins of "{provider}": log in again')
        try:
            fresh = flow.refresh(credential)
        except RefreshRejectedError as error:
            raise OAuthRefreshError(
                f'The login for "{provider}" was refused when refreshing it ({error.reason}): '
                f'log in again with "tau auth login {provider}"'
            ) from error
        except LoginError as error:
            raise OAuthRefreshError(
                f'Could not refresh the login for "{provider}" ({error}): try again, '
                f'or log in again with "tau auth login {provider}"'
            ) from error
        register_secret(_string(fresh.get("access")))
        register_secret(_string(fresh.get("refresh")))
        return fresh

    # ---- file access -----------------------------------------------------------------------------

    @staticmethod
    def _read(path: Path) -> dict[str, JsonObject]:
        data = read_json_file(path)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(path, "expected a JSON object mapping provider names to credentials")
        # Entries that are not objects cannot be credentials; keep them out of the lookups.
        return {name: entry for name, entry in data.items() if isinstance(entry, dict)}

    def _write(self, provider: str, credential: JsonObject | None) -> None:
        """Apply one provider's change to the file: lock, re-read, merge, replace (mode 0600)."""
        path = self._path
        if path is None:
            _apply(self._data, provider, credential)
            return
        if self._load_error is not None:
            raise ConfigError(
                path, f"not saved: the file could not be read earlier ({self._load_error.problem})"
            )
        current: dict[str, Any] = {}

        def apply(raw: dict[str, Any]) -> None:
            nonlocal current
            _apply(raw, provider, credential)
            current = raw

        try:
            make_private_dir(path.parent)
            update_json_file(path, apply, read=_read_object, stale_s=STORE_STALE_S, mode=0o600)
        except ConfigError as error:
            raise ConfigError(
                path, f"not saved: {error.problem}", line=error.line, column=error.column
            ) from error
        except (OSError, LockTimeoutError) as error:
            raise ConfigError(path, f"cannot write credentials: {error}") from error
        self._data = {name: entry for name, entry in current.items() if isinstance(entry, dict)}


def _read_object(path: Path) -> dict[str, Any]:
    """auth.json as it is now: ``{}`` when missing; ``ConfigError`` when it is not a JSON object."""
    raw = read_json_file(path)
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(path, "expected a JSON object at the top level")
    return raw or {}


def _apply(data: dict[str, Any], provider: str, credential: JsonObject | None) -> None:
    if credential is None:
        data.pop(provider, None)
    else:
        data[provider] = credential


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _refreshable(provider: str, credential: JsonObject) -> bool:
    """Whether tau can refresh this login itself (its provider has a flow and it has a refresh token)."""
    from tau.accounts.oauth import OAUTH_PROVIDERS

    return (
        provider in OAUTH_PROVIDERS
        and isinstance(credential.get("refresh"), str)
        and bool(credential["refresh"])
    )


def _expires_within(credential: JsonObject, window_ms: int) -> bool:
    expires = credential.get("expires")
    if not isinstance(expires, int | float) or not credential.get("access"):
        return True
    return time.time() * 1000 + window_ms >= expires


def _oauth_access(credential: JsonObject) -> str | None:
    """The OAuth access token while it is valid (``expires`` is epoch milliseconds)."""
    access = credential.get("access")
    expires = credential.get("expires")
    if not isinstance(access, str) or not access:
        return None
    if isinstance(expires, int | float) and time.time() * 1000 >= expires:
        return None
    return access

"""A fake OAuth provider on 127.0.0.1 for tests: the sign-in endpoints of Anthropic, OpenAI (Codex),
GitHub Copilot, Google (Gemini CLI, Antigravity), xAI, Kimi Code, Meta, OpenRouter and the Radius
gateway, with real PKCE checks, refresh-token rotation, revocation, and a count of refresh requests.

The Radius gateway (``radius.pi.dev``) also answers ``GET /v1/config`` for a signed-in caller (or
one with ``radius_api_key``) with ``radius_models`` served at ``radius_base_url`` (set it to a
``FakeLLMServer``'s ``/pi/v1``). ``ACME_GATEWAY`` is a second, self-hosted Radius gateway (a models.json
provider with ``"oauth": "radius"``): the same endpoints, its own tokens and ``acme_models``.

Point tau at it with the test-only variable ``TAU_OAUTH_TEST_HOSTS`` (``server.hosts_env()``); each
real host is served under ``/<host>/…``. A test plays the browser by GETting the authorise URL tau
prints: the answer is a redirect to tau's callback carrying ``code`` and ``state`` (or ``error`` when
``deny`` is set). Requests to Copilot's API host other than its model list are forwarded to
``copilot_upstream`` (a ``FakeLLMServer``), so a chat request arrives there with its headers::

    with FakeOAuthServer() as oauth:
        env["TAU_OAUTH_TEST_HOSTS"] = oauth.hosts_env()
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from msgspec import Struct, field

__all__ = ["ACME_GATEWAY", "FakeOAuthServer", "codex_access_token"]

ACME_GATEWAY = "radius.acme.example"

_HOSTS = (
    "claude.ai",
    "platform.claude.com",
    "auth.openai.com",
    "github.com",
    "api.github.com",
    "api.individual.githubcopilot.com",
    "accounts.google.com",
    "oauth2.googleapis.com",
    "www.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "daily-cloudcode-pa.sandbox.googleapis.com",
    "auth.x.ai",
    "auth.kimi.com",
    "openrouter.ai",
    "auth.meta.com",
    "api.meta.ai",
    "radius.pi.dev",
    ACME_GATEWAY,
)
_PROVIDER_OF_TOKEN_HOST = {
    "platform.claude.com": "anthropic",
    "auth.openai.com": "openai-codex",
    "oauth2.googleapis.com": "google",
    "auth.x.ai": "xai",
    "auth.kimi.com": "kimi-coding",
    "auth.meta.com": "meta",
    "auth.openai.com#chatgpt": "openai",
    "radius.pi.dev": "radius",
    ACME_GATEWAY: "radius-acme",
}
_GATEWAY_OF_HOST = {"radius.pi.dev": "radius", ACME_GATEWAY: "radius-acme"}
_DEVICE_CODES = {
    "xai": "xai-device-1",
    "kimi-coding": "kimi-device-1",
    "meta": "meta-device-1",
    "radius": "radius-device-1",
    "radius-acme": "acme-device-1",
}
# What the fake Radius gateway lists for a signed-in account (its org may have disabled the rest).
RADIUS_MODELS: list[dict[str, Any]] = [
    {
        "id": "balanced",
        "name": "Balanced",
        "reasoning": True,
        "input": ["text", "image"],
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 0},
        "contextWindow": 1048576,
        "maxTokens": 262144,
    },
    {
        "id": "team-only",
        "name": "Team Only",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 200000,
        "maxTokens": 32000,
    },
]


def codex_access_token(account_id: str, serial: str) -> str:
    """An unsigned JWT naming a ChatGPT account, as Codex access tokens do."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": account_id}, "jti": serial}
    return f"{part({'alg': 'none'})}.{part(claims)}.sig"


class _Grant(Struct, dict=True):
    challenge: str
    redirect_uri: str
    client_id: str


class FakeOAuthServer(Struct, dict=True):
    """The fake; ``start()``/``stop()`` or ``with``. Its settings may be changed between requests."""

    expires_in: int = 3600
    deny: bool = False  # the user refuses in the browser: error=access_denied on the callback or device poll
    refresh_delay_s: float = 0.3  # widens the window in which a second refresher would slip in
    copilot_upstream: str | None = None
    device_interval_s: float = 1.0  # the polling interval device logins are told to keep
    device_pending_polls: int = 0  # the next device-login polls that answer "not yet"
    google_onboarding: bool = False  # the Google account has no project yet: onboardUser provisions one
    account_id: str = "acct-fake-123"
    radius_base_url: str = "https://radius.pi.dev/v1"
    radius_models: list[dict[str, Any]] = field(default_factory=lambda: [dict(m) for m in RADIUS_MODELS])
    radius_api_key: str = "radius-key-123"  # a RADIUS_API_KEY both gateways know
    acme_models: list[dict[str, Any]] = field(
        default_factory=lambda: [{**RADIUS_MODELS[1], "id": "acme-coder", "name": "Acme Coder"}]
    )
    refresh_counts: Counter[str] = field(default_factory=Counter)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._grants: dict[str, _Grant] = {}
        self._live_refresh: dict[str, str] = {}  # refresh token -> provider
        self._revoked: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.issued: list[dict[str, Any]] = []

    # ---- life cycle ------------------------------------------------------------------------------

    def start(self) -> FakeOAuthServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                owner._dispatch(self, "GET")

            def do_POST(self) -> None:
                owner._dispatch(self, "POST")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOAuthServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def hosts_env(self) -> str:
        """The value of ``TAU_OAUTH_TEST_HOSTS`` that sends every provider host here."""
        return json.dumps({host: f"{self.url}/{host}" for host in _HOSTS})

    # ---- test controls ---------------------------------------------------------------------------

    @staticmethod
    def write_browser(path: Path, *, elsewhere: Path | None = None) -> Path:
        """An executable at ``path`` for ``BROWSER``: it loads the URL it is given and follows the
        redirect to tau's callback, as a browser does once the user approves (quietly). With
        ``elsewhere`` it only writes the URL there: the browser is on another machine (SSH)."""
        action = (
            f"open({str(elsewhere)!r}, 'w').write(sys.argv[1])\n"
            if elsewhere is not None
            else "httpx.get(sys.argv[1], follow_redirects=True, timeout=10)\n"
        )
        path.write_text(f"#!{sys.executable}\nimport sys, httpx\n{action}")
        path.chmod(0o700)
        return path

    def issue_login(self, provider: str = "anthropic") -> dict[str, Any]:
        """A valid auth.json login for ``provider`` (``anthropic``, ``openai-codex``), as if signed in."""
        tokens = self._issue(provider)
        credential: dict[str, Any] = {
            "type": "oauth",
            "refresh": tokens["refresh_token"],
            "access": tokens["access_token"],
            "expires": int(time.time() * 1000) + self.expires_in * 1000,
        }
        if provider == "openai-codex":
            credential["accountId"] = self.account_id
        return credential

    def revoke_all(self) -> None:
        """Revoke every refresh token issued so far (the user signed out everywhere)."""
        with self._lock:
            self._revoked.update(self._live_refresh)

    # ---- dispatch --------------------------------------------------------------------------------

    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        host, _, path = parts.path.lstrip("/").partition("/")
        path = "/" + path
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self._lock:
            self.requests.append((method, f"{host}{path}", headers))
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        body = _parse_body(raw, headers.get("content-type", ""))
        if host == "api.individual.githubcopilot.com" and not path.startswith("/models"):
            self._forward(handler, method, path, raw, headers)
            return
        route = _ROUTES.get((method, host, path))
        if route is None and path.startswith("/models/") and path.endswith("/policy"):
            route = FakeOAuthServer._copilot_policy
        if route is None:
            _send(handler, 404, {"error": f"fake oauth: no route {method} {host}{path}"})
            return
        route(self, handler, host, path, query, body, headers)

    # ---- browser side ----------------------------------------------------------------------------

    def _authorize(self, handler: Any, host: str, path: str, query: dict[str, str], *_: Any) -> None:
        redirect = query.get("redirect_uri", "")
        state = query.get("state", "")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            _send(handler, 400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
            return
        if self.deny:
            _redirect(handler, redirect, _DENIED | {"state": state})
            return
        code = "code-" + secrets.token_hex(8)
        with self._lock:
            self._grants[code] = _Grant(query["code_challenge"], redirect, query.get("client_id", ""))
        _redirect(handler, redirect, {"code": code, "state": state})

    # ---- token endpoints -------------------------------------------------------------------------

    def _token(
        self, handler: Any, host: str, path: str, query: dict[str, str], body: dict[str, Any], *_: Any
    ) -> None:
        provider = _PROVIDER_OF_TOKEN_HOST[host]
        grant_type = body.get("grant_type")
        if grant_type == "urn:ietf:params:oauth:grant-type:device_code" and provider in _DEVICE_CODES:
            with self._lock:
                pending = self.device_pending_polls > 0
                self.device_pending_polls -= pending
            if self.deny:
                _send(handler, 400, _DENIED)
            elif pending:
                _send(handler, 400, {"error": "authorization_pending"})
            elif body.get("device_code") != _DEVICE_CODES[provider]:
                _send(handler, 400, {"error": "expired_token"})
            else:
                _send(handler, 200, self._issue(provider))
            return
        if grant_type == "authorization_code":
            with self._lock:
                grant = self._grants.pop(str(body.get("code")), None)
            verifier = str(body.get("code_verifier", ""))
            if (
                grant is None
                or _s256(verifier) != grant.challenge
                or body.get("redirect_uri") != grant.redirect_uri
            ):
                _send(
                    handler,
                    400,
                    {"error": "invalid_grant", "error_description": "bad code, verifier or redirect_uri"},
                )
                return
            if provider == "google" and not body.get("client_secret"):
                _send(handler, 401, {"error": "invalid_client"})
                return
            _send(handler, 200, self._issue(provider))
            return
        if grant_type == "refresh_token":
            token = str(body.get("refresh_token"))
            with self._lock:
                self.refresh_counts[provider] += 1
                known = self._live_refresh.get(token) == provider and token not in self._revoked
            time.sleep(self.refresh_delay_s)
            if not known:
                _send(handler, 400, {"error": "invalid_grant", "error_description": "Refresh token revoked"})
                return
            with self._lock:
                if provider != "google":  # Google keeps the refresh token; the others rotate it
                    self._live_refresh.pop(token, None)
            answer = self._issue(provider)
            if provider == "google":
                answer.pop("refresh_token")
            if provider == "openai":
                answer["scope"] = "openid offline_access chatgpt.tokens.use.direct"
            _send(handler, 200, answer)
            return
        _send(handler, 400, {"error": "unsupported_grant_type"})

    def _issue(self, provider: str) -> dict[str, Any]:
        serial = secrets.token_hex(6)
        if provider == "anthropic":
            access, refresh = f"sk-ant-oat01-{serial}", f"sk-ant-ort01-{serial}"
        elif provider == "openai-codex":
            access, refresh = codex_access_token(self.account_id, serial), f"rt-{serial}"
        elif provider == "openai":
            access, refresh = f"chatgpt-at-{serial}", f"chatgpt-rt-{serial}"
        elif provider in _DEVICE_CODES:
            access, refresh = f"{provider}-at-{serial}", f"{provider}-rt-{serial}"
        else:
            access, refresh = f"ya29.{serial}", f"1//google-{serial}"
        with self._lock:
            self._live_refresh[refresh] = provider
            if provider == "meta":  # Meta's identity token (the access token here) mints its API keys
                self._live_refresh[access] = provider
            self.issued.append({"provider": provider, "access": access, "refresh": refresh})
        return {
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": self.expires_in,
            "token_type": "Bearer",
        }

    # ---- the Radius gateway -------------------------------------------------------------------------

    def _radius_discovery(self, handler: Any, host: str, *_: Any) -> None:
        _send(handler, 200, {"authorizationEndpoint": f"https://{host}/oauth/authorize"})

    def _radius_device_code(
        self, handler: Any, host: str, path: str, query: Any, body: dict[str, Any], *_: Any
    ) -> None:
        if body.get("client_id") != "pi-gateway":
            _send(handler, 400, {"error": "invalid_client"})
            return
        _send(
            handler,
            200,
            _device_answer(
                _GATEWAY_OF_HOST[host], "RAD-2468", f"https://{host}/device?code=", self.device_interval_s
            ),
        )

    def _radius_config(
        self, handler: Any, host: str, path: str, query: Any, body: Any, headers: dict[str, str]
    ) -> None:
        token = headers.get("authorization", "").removeprefix("Bearer ")
        gateway = _GATEWAY_OF_HOST[host]
        with self._lock:
            known = any(entry["access"] == token for entry in self.issued if entry["provider"] == gateway)
        if not known and token != self.radius_api_key:
            _send(handler, 401, {"error": {"message": "Sign in to Radius first", "code": "unauthorized"}})
            return
        models = self.radius_models if gateway == "radius" else self.acme_models
        _send(handler, 200, {"baseUrl": self.radius_base_url, "models": models})

    # ---- OpenAI "Sign in with ChatGPT": each login registers its own client --------------------------

    def _chatgpt_authorize(self, handler: Any, host: str, path: str, query: dict[str, str], *_: Any) -> None:
        if query.get("client_id") != "dynamic_agent_client" or not query.get(
            "ext_agent_host_id", ""
        ).startswith("urn:uuid:"):
            _send(handler, 400, {"error": "invalid_request"})
            return
        if self.deny:
            _redirect(handler, query.get("redirect_uri", ""), _DENIED | {"state": query.get("state", "")})
            return
        code = "code-" + secrets.token_hex(8)
        client_id = "app_issued_" + secrets.token_hex(4)
        with self._lock:
            self._grants[code] = _Grant(
                query.get("code_challenge", ""), query.get("redirect_uri", ""), client_id
            )
        answer = {"code": code, "state": query.get("state", ""), "client_id": client_id}
        _redirect(handler, query.get("redirect_uri", ""), answer)

    def _chatgpt_token(
        self, handler: Any, host: str, path: str, query: Any, body: dict[str, Any], *_: Any
    ) -> None:
        if body.get("resource") != "https://api.openai.com/v1":
            _send(handler, 400, {"error": "invalid_target"})
            return
        if body.get("grant_type") == "authorization_code":
            with self._lock:
                grant = self._grants.pop(str(body.get("code")), None)
            if (
                grant is None
                or grant.client_id != body.get("client_id")
                or _s256(str(body.get("code_verifier", ""))) != grant.challenge
            ):
                _send(handler, 400, {"error": "invalid_grant"})
                return
            answer = self._issue("openai")
            answer.update(
                id_token="id." + secrets.token_hex(4), scope="openid offline_access chatgpt.tokens.use.direct"
            )
            _send(handler, 200, answer)
            return
        self._token(handler, "auth.openai.com#chatgpt", path, query, body)

    # ---- OpenAI device code ----------------------------------------------------------------------

    def _codex_device_start(self, handler: Any, *_: Any) -> None:
        _send(
            handler,
            200,
            {"device_auth_id": "dev-1", "user_code": "ABCD-1234", "interval": str(self.device_interval_s)},
        )

    def _codex_device_poll(self, handler: Any, *_: Any) -> None:
        with self._lock:
            pending = self.device_pending_polls > 0
            self.device_pending_polls -= pending
        if self.deny:
            _send(handler, 400, {"error": {"code": "access_denied", "message": _DENIED["error_description"]}})
            return
        if pending:  # the user has not entered the code yet
            _send(handler, 403, {"error": {"code": "deviceauth_authorization_pending"}})
            return
        verifier = secrets.token_urlsafe(32)
        code = "code-" + secrets.token_hex(8)
        with self._lock:
            self._grants[code] = _Grant(_s256(verifier), "https://auth.openai.com/deviceauth/callback", "")
        _send(handler, 200, {"authorization_code": code, "code_verifier": verifier})

    def _xai_device_code(self, handler: Any, *_: Any) -> None:
        _send(
            handler,
            200,
            {
                "device_code": "xai-device-1",
                "user_code": "XAI-7788",
                "verification_uri": "https://accounts.x.ai/device",
                "verification_uri_complete": "https://accounts.x.ai/device?code=XAI-7788",
                "interval": self.device_interval_s,
                "expires_in": 60,
            },
        )

    def _kimi_device_code(self, handler: Any, *_: Any) -> None:
        _send(
            handler,
            200,
            _device_answer(
                "kimi-coding", "KIMI-4455", "https://www.kimi.com/device?user_code=", self.device_interval_s
            ),
        )

    def _meta_device_code(self, handler: Any, *_: Any) -> None:
        _send(
            handler,
            200,
            _device_answer(
                "meta", "META-1122", "https://auth.meta.com/device?user_code=", self.device_interval_s
            ),
        )

    def _meta_mint(
        self, handler: Any, host: str, path: str, query: Any, body: Any, headers: dict[str, str]
    ) -> None:
        identity = headers.get("authorization", "").removeprefix("Bearer ").strip()
        with self._lock:
            self.refresh_counts["meta"] += 1
            known = self._live_refresh.get(identity) == "meta" and identity not in self._revoked
        if not known:
            _send(handler, 401, {"error": {"message": "Session expired"}})
            return
        key = "meta-key-" + secrets.token_hex(6)
        with self._lock:
            self.issued.append({"provider": "meta", "access": key, "refresh": identity})
        _send(handler, 200, {"api_key": key})

    def _openrouter_authorize(
        self, handler: Any, host: str, path: str, query: dict[str, str], *_: Any
    ) -> None:
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            _send(handler, 400, {"error": "PKCE S256 required"})
            return
        if self.deny:
            _redirect(handler, query.get("callback_url", ""), _DENIED)
            return
        code = "or-code-" + secrets.token_hex(8)
        with self._lock:
            self._grants[code] = _Grant(query["code_challenge"], query.get("callback_url", ""), "")
        _redirect(handler, query.get("callback_url", ""), {"code": code})

    def _openrouter_keys(
        self, handler: Any, host: str, path: str, query: Any, body: dict[str, Any], *_: Any
    ) -> None:
        with self._lock:
            grant = self._grants.pop(str(body.get("code")), None)
        if grant is None or _s256(str(body.get("code_verifier", ""))) != grant.challenge:
            _send(handler, 403, {"error": {"message": "Invalid code or verifier"}})
            return
        key = "sk-or-v1-" + secrets.token_hex(8)
        with self._lock:
            self.issued.append({"provider": "openrouter", "access": key, "refresh": ""})
        _send(handler, 200, {"key": key, "user_id": "user-1"})

    # ---- GitHub Copilot --------------------------------------------------------------------------

    def _github_device_code(self, handler: Any, *_: Any) -> None:
        _send(
            handler,
            200,
            {
                "device_code": "gh-device-1",
                "user_code": "WDJB-MJHT",
                "verification_uri": "https://github.com/login/device",
                "interval": self.device_interval_s,
                "expires_in": 60,
            },
        )

    def _github_access_token(
        self, handler: Any, host: str, path: str, query: Any, body: dict[str, Any], *_: Any
    ) -> None:
        with self._lock:
            pending = self.device_pending_polls > 0
            self.device_pending_polls -= pending
        if body.get("device_code") != "gh-device-1":
            _send(handler, 200, {"error": "expired_token"})
        elif self.deny:  # GitHub answers 200 with the error
            _send(handler, 200, _DENIED)
        elif pending:
            _send(handler, 200, {"error": "authorization_pending"})
        else:
            token = "gho_" + secrets.token_hex(8)
            with self._lock:
                self._live_refresh[token] = "github-copilot"
            _send(handler, 200, {"access_token": token, "token_type": "bearer", "scope": "read:user"})

    def _copilot_token(
        self, handler: Any, host: str, path: str, query: Any, body: Any, headers: dict[str, str]
    ) -> None:
        github_token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        with self._lock:
            self.refresh_counts["github-copilot"] += 1
            known = (
                self._live_refresh.get(github_token) == "github-copilot" and github_token not in self._revoked
            )
        time.sleep(self.refresh_delay_s)
        if not known:
            _send(handler, 401, {"message": "Bad credentials"})
            return
        expires_at = int(time.time()) + self.expires_in
        token = f"tid={secrets.token_hex(6)};exp={expires_at};sku=free;proxy-ep=proxy.individual.githubcopilot.com;"
        with self._lock:
            self.issued.append({"provider": "github-copilot", "access": token, "refresh": github_token})
        _send(handler, 200, {"token": token, "expires_at": expires_at, "refresh_in": 1500})

    def _copilot_models(self, handler: Any, *_: Any) -> None:
        from tau.ai.catalogue import get_models

        # The account's list: one model enabled, one whose policy the login must enable, one without tools.
        first, second = (model.id for model in get_models("github-copilot")[:2])
        data = [
            {"id": first, "model_picker_enabled": True, "policy": {"state": "enabled"}},
            {"id": second, "model_picker_enabled": True, "policy": {"state": "unconfigured"}},
            {
                "id": "no-tools",
                "model_picker_enabled": True,
                "capabilities": {"supports": {"tool_calls": False}},
            },
        ]
        _send(handler, 200, {"data": data})

    def _copilot_policy(self, handler: Any, *_: Any) -> None:
        _send(handler, 200, {"state": "enabled"})

    def _forward(self, handler: Any, method: str, path: str, raw: bytes, headers: dict[str, str]) -> None:
        import httpx

        if not self.copilot_upstream:
            _send(handler, 502, {"error": "fake oauth: no copilot_upstream set"})
            return
        keep = {k: v for k, v in headers.items() if k not in ("host", "content-length", "connection")}
        answer = httpx.request(
            method, self.copilot_upstream.rstrip("/") + path, headers=keep, content=raw, timeout=30
        )
        handler.send_response(answer.status_code)
        for name in ("content-type",):
            if name in answer.headers:
                handler.send_header(name, answer.headers[name])
        handler.send_header("Content-Length", str(len(answer.content)))
        handler.end_headers()
        handler.wfile.write(answer.content)

    # ---- Google ----------------------------------------------------------------------------------

    def _google_userinfo(self, handler: Any, *_: Any) -> None:
        _send(handler, 200, {"email": "user@example.com"})

    def _load_code_assist(self, handler: Any, *_: Any) -> None:
        if self.google_onboarding:
            _send(handler, 200, {"allowedTiers": [{"id": "free-tier", "isDefault": True}]})
        else:
            _send(
                handler, 200, {"currentTier": {"id": "free-tier"}, "cloudaicompanionProject": "proj-fake-42"}
            )

    def _onboard_user(self, handler: Any, *_: Any) -> None:
        _send(
            handler, 200, {"done": True, "response": {"cloudaicompanionProject": {"id": "proj-onboarded-7"}}}
        )


_ROUTES: dict[tuple[str, str, str], Any] = {
    ("GET", "claude.ai", "/oauth/authorize"): FakeOAuthServer._authorize,
    ("POST", "platform.claude.com", "/v1/oauth/token"): FakeOAuthServer._token,
    ("GET", "auth.openai.com", "/oauth/authorize"): FakeOAuthServer._authorize,
    ("POST", "auth.openai.com", "/oauth/token"): FakeOAuthServer._token,
    ("GET", "auth.openai.com", "/api/accounts/authorize"): FakeOAuthServer._chatgpt_authorize,
    ("POST", "auth.openai.com", "/api/accounts/oauth/token"): FakeOAuthServer._chatgpt_token,
    ("POST", "auth.openai.com", "/api/accounts/deviceauth/usercode"): FakeOAuthServer._codex_device_start,
    ("POST", "auth.openai.com", "/api/accounts/deviceauth/token"): FakeOAuthServer._codex_device_poll,
    ("POST", "github.com", "/login/device/code"): FakeOAuthServer._github_device_code,
    ("POST", "github.com", "/login/oauth/access_token"): FakeOAuthServer._github_access_token,
    ("GET", "api.github.com", "/copilot_internal/v2/token"): FakeOAuthServer._copilot_token,
    ("GET", "api.individual.githubcopilot.com", "/models"): FakeOAuthServer._copilot_models,
    ("GET", "accounts.google.com", "/o/oauth2/v2/auth"): FakeOAuthServer._authorize,
    ("POST", "oauth2.googleapis.com", "/token"): FakeOAuthServer._token,
    ("GET", "www.googleapis.com", "/oauth2/v1/userinfo"): FakeOAuthServer._google_userinfo,
    ("POST", "cloudcode-pa.googleapis.com", "/v1internal:loadCodeAssist"): FakeOAuthServer._load_code_assist,
    ("POST", "cloudcode-pa.googleapis.com", "/v1internal:onboardUser"): FakeOAuthServer._onboard_user,
    ("POST", "auth.x.ai", "/oauth2/device/code"): FakeOAuthServer._xai_device_code,
    ("POST", "auth.x.ai", "/oauth2/token"): FakeOAuthServer._token,
    ("POST", "auth.kimi.com", "/api/oauth/device_authorization"): FakeOAuthServer._kimi_device_code,
    ("POST", "auth.kimi.com", "/api/oauth/token"): FakeOAuthServer._token,
    ("POST", "auth.meta.com", "/oidc/device/authorization/"): FakeOAuthServer._meta_device_code,
    ("POST", "auth.meta.com", "/oidc/device/token/"): FakeOAuthServer._token,
    ("POST", "api.meta.ai", "/muse-code/key"): FakeOAuthServer._meta_mint,
    ("GET", "openrouter.ai", "/auth"): FakeOAuthServer._openrouter_authorize,
    ("POST", "openrouter.ai", "/api/v1/auth/keys"): FakeOAuthServer._openrouter_keys,
    ("GET", "radius.pi.dev", "/v1/oauth"): FakeOAuthServer._radius_discovery,
    ("GET", "radius.pi.dev", "/oauth/authorize"): FakeOAuthServer._authorize,
    ("POST", "radius.pi.dev", "/v1/oauth/device"): FakeOAuthServer._radius_device_code,
    ("POST", "radius.pi.dev", "/v1/oauth/token"): FakeOAuthServer._token,
    ("GET", "radius.pi.dev", "/v1/config"): FakeOAuthServer._radius_config,
    ("GET", ACME_GATEWAY, "/v1/oauth"): FakeOAuthServer._radius_discovery,
    ("GET", ACME_GATEWAY, "/oauth/authorize"): FakeOAuthServer._authorize,
    ("POST", ACME_GATEWAY, "/v1/oauth/device"): FakeOAuthServer._radius_device_code,
    ("POST", ACME_GATEWAY, "/v1/oauth/token"): FakeOAuthServer._token,
    ("GET", ACME_GATEWAY, "/v1/config"): FakeOAuthServer._radius_config,
}


# What the provider's page sends back when the user refuses (OAuth's error redirect).
_DENIED = {"error": "access_denied", "error_description": "The user denied access"}


def _device_answer(provider: str, user_code: str, page: str, interval_s: float) -> dict[str, Any]:
    return {
        "device_code": _DEVICE_CODES[provider],
        "user_code": user_code,
        "verification_uri": page.split("?")[0],
        "verification_uri_complete": page + user_code,
        "interval": interval_s,
        "expires_in": 60,
    }


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def _parse_body(raw: bytes, content_type: str) -> dict[str, Any]:
    if not raw:
        return {}
    if "json" in content_type:
        data = json.loads(raw)
        return data if isinstance(data, dict) else {}
    return {k: v[0] for k, v in parse_qs(raw.decode()).items()}


def _redirect(handler: Any, target: str, query: dict[str, str]) -> None:
    """The browser sent on to ``target`` (tau's callback) with ``query``, as after the user's choice."""
    handler.send_response(302)
    handler.send_header("Location", f"{target}?{urlencode(query)}")
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _send(handler: Any, status: int, data: Any) -> None:
    body = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)

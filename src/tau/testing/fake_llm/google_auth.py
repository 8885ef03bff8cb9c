"""Google's OAuth token endpoint and credential checks, for the fake Vertex AI route.

The token endpoint (``TOKEN_PATH``, POSTed as a form) answers the two grants google-auth makes:
a service account's JWT (``urn:ietf:params:oauth:grant-type:jwt-bearer``; the assertion's RS256
signature is verified with the public key registered for its ``iss``, and its ``aud`` must be
Google's token URL) and ``refresh_token`` (for registered refresh tokens). Each grant issues a new token that
the fake Vertex route then accepts until it expires. Tokens and API keys can also be allowed
directly, and every token can be expired at once to test a stale credential::

    server.google.add_service_account("sa@p.iam.gserviceaccount.com", public_pem)
    server.google.allow_api_key("key")
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from typing import Any, Final
from urllib.parse import parse_qs

TOKEN_PATH: Final = "/google-oauth2/token"
# The audience Google requires in a service account's assertion, whichever URL it is posted to.
GOOGLE_TOKEN_URL: Final = "https://oauth2.googleapis.com/token"
JWT_GRANT: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLOUD_PLATFORM_SCOPE: Final = "https://www.googleapis.com/auth/cloud-platform"

Rejection = tuple[int, dict[str, Any]]


class FakeGoogleAuth:
    """Issued tokens, allowed keys and the service accounts the fake trusts (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tokens: dict[str, float] = {}
        self._api_keys: set[str] = set()
        self._refresh_tokens: set[str] = set()
        self._public_keys: dict[str, bytes] = {}
        self._numbers = itertools.count(1)
        self.token_lifetime_s = 3600
        self.grants: list[dict[str, str]] = []

    # -- configuration -------------------------------------------------------------------------

    def add_service_account(self, client_email: str, public_key_pem: bytes) -> None:
        with self._lock:
            self._public_keys[client_email] = public_key_pem

    def add_refresh_token(self, refresh_token: str) -> None:
        with self._lock:
            self._refresh_tokens.add(refresh_token)

    def allow_token(self, token: str, lifetime_s: float = 3600) -> None:
        with self._lock:
            self._tokens[token] = time.time() + lifetime_s

    def allow_api_key(self, key: str) -> None:
        with self._lock:
            self._api_keys.add(key)

    def expire_tokens(self) -> None:
        """Every token issued or allowed so far is expired from now on."""
        with self._lock:
            self._tokens = dict.fromkeys(self._tokens, 0.0)

    # -- the token endpoint --------------------------------------------------------------------

    def token_response(self, raw_form: bytes, token_url: str) -> Rejection:
        """The status and JSON answering one POST to the token endpoint."""
        form = {key: values[0] for key, values in parse_qs(raw_form.decode()).items()}
        with self._lock:
            self.grants.append(form)
        grant = form.get("grant_type")
        if grant == JWT_GRANT:
            problem = self._check_assertion(form.get("assertion", ""), token_url)
        elif grant == "refresh_token":
            with self._lock:
                known = form.get("refresh_token") in self._refresh_tokens
            problem = None if known else "Token has been expired or revoked."
        else:
            return 400, {"error": "unsupported_grant_type", "error_description": f"grant {grant!r}"}
        if problem is not None:
            return 400, {"error": "invalid_grant", "error_description": problem}
        token = f"ya29.fake-{next(self._numbers)}"
        self.allow_token(token, self.token_lifetime_s)
        return 200, {"access_token": token, "expires_in": self.token_lifetime_s, "token_type": "Bearer"}

    def _check_assertion(self, assertion: str, token_url: str) -> str | None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        try:
            header_b64, payload_b64, signature_b64 = assertion.split(".")
            header = json.loads(_unb64(header_b64))
            claims = json.loads(_unb64(payload_b64))
        except ValueError:
            return "Invalid JWT: not three base64url JSON parts."
        if header.get("alg") != "RS256":
            return f"Invalid JWT: algorithm {header.get('alg')!r}."
        with self._lock:
            pem = self._public_keys.get(str(claims.get("iss")))
        if pem is None:
            return f"Invalid JWT: unknown service account {claims.get('iss')!r}."
        key = serialization.load_pem_public_key(pem)
        assert isinstance(key, rsa.RSAPublicKey)
        try:
            key.verify(
                _unb64(signature_b64),
                f"{header_b64}.{payload_b64}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except InvalidSignature:
            return "Invalid JWT Signature."
        if claims.get("aud") not in (GOOGLE_TOKEN_URL, token_url):
            return f"Invalid JWT: audience {claims.get('aud')!r} is not {GOOGLE_TOKEN_URL!r}."
        if not isinstance(claims.get("exp"), int) or claims["exp"] < time.time():
            return "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe."
        if CLOUD_PLATFORM_SCOPE not in str(claims.get("scope", "")).split():
            return f"Invalid JWT: scope {claims.get('scope')!r} lacks cloud-platform."
        return None

    # -- the model routes ----------------------------------------------------------------------

    def check(self, headers: dict[str, str]) -> Rejection | None:
        """``None`` when the request carries an allowed API key or a live token, else Google's 401."""
        key = headers.get("x-goog-api-key")
        authorization = headers.get("authorization", "")
        with self._lock:
            if key is not None:
                if key in self._api_keys:
                    return None
                return 400, _error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
            token = authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None
            expiry = self._tokens.get(token) if token else None
        if expiry is not None and expiry > time.time():
            return None
        return 401, _error(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
            "or other valid authentication credential.",
            "UNAUTHENTICATED",
        )


def service_disabled_body(project_number: str, service: str = "aiplatform.googleapis.com") -> dict[str, Any]:
    """The 403 Google sends when ``service`` is not enabled for the project (script it as a fault body)."""
    url = f"https://console.developers.google.com/apis/api/{service}/overview?project={project_number}"
    body = _error(
        403,
        f"{service} has not been used in project {project_number} before or it is disabled. Enable it by "
        f"visiting {url} then retry.",
        "PERMISSION_DENIED",
    )
    body["error"]["details"] = [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "SERVICE_DISABLED",
            "domain": "googleapis.com",
            "metadata": {"service": service, "consumer": f"projects/{project_number}", "activationUrl": url},
        }
    ]
    return body


def _error(code: int, message: str, status: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

"""Checking an AWS Signature Version 4 the way an AWS endpoint does, for the fake Bedrock server.

Written from the published algorithm with hashlib alone, not with botocore, so that a client's
signing mistake cannot be mirrored by the checker: canonical request (method, the path URI-encoded
once more, the sorted query, the signed headers with trimmed values, the payload's SHA-256), string
to sign over the credential scope, and the HMAC chain from the secret key.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from urllib.parse import quote

from msgspec import Struct

_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=(?P<key>[^/,]+)/(?P<date>\d{8})/(?P<region>[^/,]+)/(?P<service>[^/,]+)"
    r"/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;_.-]+),\s*Signature=(?P<signature>[0-9a-f]{64})$"
)


class SignedRequest(Struct, frozen=True):
    """What a request's ``authorization`` header claims."""

    access_key: str
    date: str
    region: str
    service: str
    signed_headers: list[str]
    signature: str


def parse_authorization(value: str) -> SignedRequest | None:
    found = _AUTHORIZATION.match(value.strip())
    if found is None:
        return None
    return SignedRequest(
        access_key=found["key"],
        date=found["date"],
        region=found["region"],
        service=found["service"],
        signed_headers=found["signed"].split(";"),
        signature=found["signature"],
    )


def expected_signature(
    claim: SignedRequest,
    secret_key: str,
    *,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
) -> str:
    """The signature a client holding ``secret_key`` must have sent (``headers``: lower-case names)."""
    canonical_headers = "".join(
        f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in claim.signed_headers
    )
    payload_hash = headers.get("x-amz-content-sha256") or hashlib.sha256(body).hexdigest()
    canonical_request = "\n".join(
        [
            method.upper(),
            quote(path or "/", safe="/~"),
            _canonical_query(query),
            canonical_headers,
            ";".join(claim.signed_headers),
            payload_hash,
        ]
    )
    scope = f"{claim.date}/{claim.region}/{claim.service}/aws4_request"
    string_to_sign = "\n".join(
        [
            "AWS4-HMAC-SHA256",
            headers.get("x-amz-date", ""),
            scope,
            hashlib.sha256(canonical_request.encode()).hexdigest(),
        ]
    )
    key = f"AWS4{secret_key}".encode()
    for part in (claim.date, claim.region, claim.service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()


def _canonical_query(query: str) -> str:
    if not query:
        return ""
    pairs = [pair.partition("=") for pair in query.split("&")]
    return "&".join(f"{key}={value}" for key, _, value in sorted(pairs))

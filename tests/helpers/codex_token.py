"""A stand-in for a ChatGPT (Codex) OAuth access token: an unsigned JWT naming the account (tests only)."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

ACCOUNT_CLAIM = "https://api.openai.com/auth"


def codex_access_token(account_id: str, *, expires_in_s: int = 3600, **claims: Any) -> str:
    """A token whose payload carries ``chatgpt_account_id`` under OpenAI's auth claim, as logins issue."""
    payload = {
        ACCOUNT_CLAIM: {"chatgpt_account_id": account_id},
        "exp": int(time.time()) + expires_in_s,
        **claims,
    }
    return f"{_segment({'alg': 'RS256', 'typ': 'JWT'})}.{_segment(payload)}.c2lnbmF0dXJl"


def _segment(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

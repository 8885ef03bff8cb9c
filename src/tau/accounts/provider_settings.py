"""The settings a provider needs beside its key, as pi 1.6's Cloudflare logins keep them.

Cloudflare's endpoints name the account (Workers AI) and the account and AI Gateway (AI Gateway) the
request is for. pi's ``/login`` asks for them after the key and stores them in the ``api_key``
credential's ``env`` in auth.json (``{"type": "api_key", "key": ..., "env": {"CLOUDFLARE_ACCOUNT_ID":
..., "CLOUDFLARE_GATEWAY_ID": ...}}``); each one is taken from there first, then from the process
environment. As in pi, a provider missing one of them has no usable credentials: its models are not
available, and a request to one ends, before anything is sent, with one line saying what to set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from msgspec import Struct

ACCOUNT_VARIABLE = "CLOUDFLARE_ACCOUNT_ID"
GATEWAY_VARIABLE = "CLOUDFLARE_GATEWAY_ID"


class Setting(Struct, frozen=True):
    variable: str
    prompt: str
    """What ``/login`` asks (pi's words)."""
    what: str
    """What it names, for the message when it is missing."""


_ACCOUNT = Setting(ACCOUNT_VARIABLE, "Enter Cloudflare account ID", "Cloudflare account")
_GATEWAY = Setting(GATEWAY_VARIABLE, "Enter Cloudflare AI Gateway ID", "Cloudflare AI Gateway")

SETTINGS: dict[str, tuple[Setting, ...]] = {
    "cloudflare-workers-ai": (_ACCOUNT,),
    "cloudflare-ai-gateway": (_ACCOUNT, _GATEWAY),
}

__all__ = [
    "ACCOUNT_VARIABLE",
    "GATEWAY_VARIABLE",
    "SETTINGS",
    "Setting",
    "login_settings",
    "missing_setting",
    "missing_setting_message",
]


def login_settings(provider: str) -> tuple[Setting, ...]:
    """What ``/login provider`` asks for after the key, in order (nothing for most providers)."""
    return SETTINGS.get(provider, ())


def missing_setting(provider: str, credential_env: Mapping[str, str]) -> Setting | None:
    """The first setting ``provider`` needs that neither the stored credential's ``env`` nor the
    environment gives, if any."""
    for setting in SETTINGS.get(provider, ()):
        stored = credential_env.get(setting.variable, "").strip()
        if not stored and not os.environ.get(setting.variable, "").strip():
            return setting
    return None


def missing_setting_message(provider: str, setting: Setting) -> str:
    return (
        f'No {setting.what} for provider "{provider}": set {setting.variable}, '
        f"or store it with the key (/login {provider})"
    )

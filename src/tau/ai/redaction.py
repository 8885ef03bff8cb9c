"""The secrets this process uses, and their removal from every error text before it is shown or saved.

A key is registered when it is resolved (``register_secret``): by the request layer for the keys and
credential headers it sends, and by the runtime for the keys it reads from auth.json, models.json
and ``--api-key``. The provider keys set in the environment count as registered too. ``redact`` is
applied where an error text is formed (an assistant message's ``errorMessage``, a fatal CLI error),
so no error, today's or a future one, can carry a key into a session file, an export or an output.
"""

from __future__ import annotations

import os
import threading

from tau.ai.env_keys import AUTHENTICATED, secret_variable_names

__all__ = ["REDACTED", "clear_secrets", "redact", "register_secret"]

REDACTED = "[redacted]"

# Shorter values are placeholders ("ollama", "x", "none"), not secrets; replacing them would
# mangle ordinary words in error texts.
_MIN_SECRET_LENGTH = 8

_secrets: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret in use, so that ``redact`` removes it (no-op for short values)."""
    for form in _forms(value):
        with _lock:
            _secrets.add(form)


def clear_secrets() -> None:
    """Forget the registered secrets (tests; the environment's keys are always known)."""
    with _lock:
        _secrets.clear()


def redact(text: str) -> str:
    """``text`` with every known secret replaced by ``[redacted]``."""
    if not text:
        return text
    with _lock:
        known = set(_secrets)
    for name in secret_variable_names():
        known.update(_forms(os.environ.get(name)))
    # Longest first: a key that contains another key is removed whole.
    for secret in sorted(known, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _forms(value: str | None) -> list[str]:
    """How ``value`` can appear in a message: as is (trimmed), and with control characters escaped
    as Python and h11 print them (``b'Bearer sk-...\\r'``)."""
    if value is None:
        return []
    stripped = value.strip()
    if len(stripped) < _MIN_SECRET_LENGTH or stripped == AUTHENTICATED:
        return []
    if stripped.isascii() and stripped.isprintable() and "\\" not in stripped:
        return [stripped]  # nothing to escape (and no codec to load for it: most keys)
    escaped = stripped.encode("unicode_escape").decode("ascii")
    return [stripped] if escaped == stripped else [stripped, escaped]

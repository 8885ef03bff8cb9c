"""Import asyncio without loading ``ssl`` until something uses TLS.

asyncio imports ``ssl`` when it is imported, and loading it (OpenSSL's shared libraries and the
module around them) is the largest single import of a ``tau -p``: about 8 ms, which a run against
a plain-``http`` endpoint, ``--help`` or a session replay never needs. The command imports asyncio
through :func:`import_asyncio` instead: asyncio's modules fall back to their "no ssl" name while
it loads, and that name is then pointed at a stand-in that loads the real module on first use, so
TLS works exactly as before (the first ``https`` connection, ``start_tls`` or any ``import ssl``
pays the load). Library users importing tau are left alone.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


def import_asyncio() -> None:
    """Import asyncio with ``ssl`` deferred; a no-op once either is loaded."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # `import ssl` fails: asyncio sets ssl = None
    try:
        __import__("asyncio")
    except ImportError:  # some module on the way needs ssl itself: import as usual
        del sys.modules["ssl"]
        __import__("asyncio")
    else:
        del sys.modules["ssl"]
    _point_asyncio(None, _STAND_IN)


class _SSLOnFirstUse(ModuleType):
    """Where asyncio's modules expect ``ssl``: an attribute read loads the real module, hands it
    to those modules in its place and answers from it. The one exception is asyncio's check, on
    every connection, that a socket is not an ``ssl.SSLSocket``: while ssl is not loaded no such
    socket can exist, so the answer is a class nothing is an instance of."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "SSLSocket" and "ssl" not in sys.modules:
            return _NoSocket
        return getattr(_load(), attribute)


class _NoSocket:
    """A class without instances."""


_STAND_IN = _SSLOnFirstUse("ssl", "the ssl module, loaded on first use")


def _load() -> ModuleType:
    import ssl

    _point_asyncio(_STAND_IN, ssl)
    sslproto = sys.modules.get("asyncio.sslproto")
    if sslproto is not None and not hasattr(sslproto, "SSLAgainErrors"):
        # asyncio.sslproto defines this at import time only when it found ssl
        sslproto.SSLAgainErrors = (ssl.SSLWantReadError, ssl.SSLSyscallError)  # type: ignore[attr-defined]
    return ssl


def _point_asyncio(holding: object, to: object) -> None:
    """Set ``ssl`` to ``to`` in each of asyncio's modules where it is ``holding``."""
    for name, module in list(sys.modules.items()):
        if (name == "asyncio" or name.startswith("asyncio.")) and vars(module).get("ssl", to) is holding:
            setattr(module, "ssl", to)  # noqa: B010  (a module's global, not an attribute mypy knows)

"""The limit book of a local run, served from the driver to its worker processes.

A ``multiprocessing`` manager listening on 127.0.0.1 with a random key: a worker's call is one
round trip on a local socket, and only the driver's own workers know the key.
"""

from __future__ import annotations

import secrets
import threading
from multiprocessing.managers import BaseManager
from typing import Any, cast

from tau.batch.limits import LimitBook, LimitClient

__all__ = ["LimitServer", "connect"]


class _BookManager(BaseManager):
    pass


class LimitServer:
    """Serves ``book`` on a thread of the driver; ``address`` is what a worker needs to connect."""

    def __init__(self, book: LimitBook) -> None:
        self.book = book
        key = secrets.token_bytes(16)
        manager = _BookManager(address=("127.0.0.1", 0), authkey=key)
        manager.register("book", callable=lambda: book)
        server = manager.get_server()
        host, port = cast(tuple[str, int], server.address)
        self.address: dict[str, Any] = {"host": host, "port": port, "key": key.hex()}
        threading.Thread(target=server.serve_forever, name="limit-book", daemon=True).start()


def connect(address: dict[str, Any]) -> LimitClient:
    _BookManager.register("book")
    manager = _BookManager(address=(address["host"], address["port"]), authkey=bytes.fromhex(address["key"]))
    manager.connect()
    return cast(LimitClient, manager.book())  # type: ignore[attr-defined]

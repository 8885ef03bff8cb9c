"""Where new ids and timestamps come from: 8-hex entry ids, UUIDv7 session ids, ISO entry times.

Everything goes through an ``IdSource`` so tests can inject a clock and a uuid generator and get
byte-identical files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container
from datetime import UTC, datetime

from msgspec import Struct

from tau.ai.types import now_ms

_MAX_SHORT_ID_TRIES = 100


def random_uuid() -> str:
    """A random (version 4) UUID string."""
    value = int.from_bytes(os.urandom(16), "big")
    return _uuid_text(value & ~(0xF << 76) & ~(0b11 << 62) | 0x4 << 76 | 0b10 << 62)


def uuid7(ms: int | None = None) -> str:
    """A time-ordered (version 7) UUID string: 48 bits of epoch milliseconds, then random bits."""
    ms = now_ms() if ms is None else ms
    rand = int.from_bytes(os.urandom(10), "big")
    rand_a = (rand >> 62) & 0xFFF
    rand_b = rand & ((1 << 62) - 1)
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    return _uuid_text(value)


def _uuid_text(value: int) -> str:
    """``uuid.UUID(int=value)``'s text, without the uuid module (and the platform module it loads)."""
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def iso_from_ms(ms: int) -> str:
    """``2025-12-09T00:53:29.825Z``: the entry timestamp format (JavaScript's ``toISOString``)."""
    seconds, millis = divmod(ms, 1000)
    return datetime.fromtimestamp(seconds, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}Z"


def ms_from_iso(text: object) -> int | None:
    """Epoch milliseconds of an ISO timestamp, or ``None`` when it is not one (naive times count as UTC)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return round(parsed.timestamp() * 1000)


class IdSource(Struct, frozen=True):
    """The clock and uuid generators a session manager uses; inject deterministic ones in tests."""

    clock: Callable[[], int] = now_ms
    random_uuid: Callable[[], str] = random_uuid
    session_uuid: Callable[[], str] | None = None

    def entry_id(self, taken: Container[str]) -> str:
        """Eight hex chars not in ``taken``; a full uuid after 100 collisions."""
        for _ in range(_MAX_SHORT_ID_TRIES):
            candidate = self.random_uuid()[:8]
            if candidate not in taken:
                return candidate
        return self.random_uuid()

    def session_id(self) -> str:
        return self.session_uuid() if self.session_uuid is not None else uuid7(self.clock())

    def now_iso(self) -> str:
        return iso_from_ms(self.clock())

"""Building many long-lived objects at once with the cyclic garbage collector paused.

Loading a big session, or converting its history for the first request, makes millions of small
objects (JSON dicts, entries, messages, wire fragments). With the collector on, a pass runs every
few hundred allocations, and the older generations' passes rescan everything built so far, which
makes the work superlinear in the history's size (a 200 MB session took twice as long to open).
These objects are acyclic data, so nothing is lost by not collecting while they are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# A block that leaves more new objects than this (a whole history converted) has them frozen.
BIG_BLOCK_OBJECTS = 200_000


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """Run the block with automatic collection off; it is switched back on (if it was on) even
    when the block raises.

    ``freeze`` (for a big load): collect first, then move every object that exists after the block
    to the permanent generation (``gc.freeze``), so later passes skip what was loaded. Frozen
    objects are still freed when nothing refers to them; only a cycle among them, unreachable
    later, would never be collected, and collecting first leaves no garbage to freeze.

    Without ``freeze``, a block that still leaves over ``BIG_BLOCK_OBJECTS`` new objects is frozen
    as well (without the collection first): otherwise the first allocations after it pay for
    passes over all of them (1.9 s after converting the 138k messages of a 200 MB session).
    """
    if freeze:
        gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        # While collection is off, the youngest generation's count is the objects made since.
        if freeze or gc.get_count()[0] > BIG_BLOCK_OBJECTS:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()

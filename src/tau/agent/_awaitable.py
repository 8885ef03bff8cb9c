"""Let callbacks be plain functions or coroutines."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def resolve(value: T | Awaitable[T]) -> T:
    """Await ``value`` if it is awaitable, else return it."""
    # ``None`` first: most callbacks return it, and the awaitable check is an ABC check.
    if value is not None and inspect.isawaitable(value):
        return await value
    return value

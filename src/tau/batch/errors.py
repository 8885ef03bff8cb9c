"""The errors of a batch run as a whole, apart from the engines that raise them."""

from __future__ import annotations

from tau.errors import TauError

__all__ = ["BatchUsageError"]


class BatchUsageError(TauError):
    """Something about the run as a whole is wrong (no task file, an unknown --model, no ray)."""

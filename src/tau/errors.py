"""The root of tau's own errors.

Every error a layer raises on purpose derives from ``TauError`` (beside the standard class it
always had, such as ``ValueError`` or ``LookupError``, so existing ``except`` clauses still hold),
and a program embedding tau can catch them all in one clause::

    from tau.errors import TauError

    try:
        ...
    except TauError as error:
        print(f"tau: {error}")
"""

from __future__ import annotations

__all__ = ["TauError"]


class TauError(Exception):
    """An error tau raised on purpose, with a message meant for the user."""

"""``/scoped-models``' bulk keys as pi 1.6's: every model (or every one the search shows) on or
off, a provider's models on or off, and a chosen model earlier or later in Ctrl+P's order. The
chosen models are ``provider/id`` keys in cycling order."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["clear_all", "enable_all", "move", "toggle_provider"]


def enable_all(chosen: Sequence[str], targets: Sequence[str]) -> list[str]:
    """``chosen`` with each of ``targets`` it lacks added at the end, in their order."""
    return [*chosen, *(key for key in targets if key not in chosen)]


def clear_all(chosen: Sequence[str], targets: Sequence[str]) -> list[str]:
    """``chosen`` without ``targets``."""
    return [key for key in chosen if key not in set(targets)]


def toggle_provider(chosen: Sequence[str], every: Sequence[str], provider: str) -> list[str]:
    """The models of ``provider`` (among ``every``) all off when they are all on, else all on."""
    own = [key for key in every if key.split("/", 1)[0] == provider]
    if own and all(key in chosen for key in own):
        return clear_all(chosen, own)
    return enable_all(chosen, own)


def move(chosen: Sequence[str], key: str, delta: int) -> list[str]:
    """``key`` ``delta`` places later in the order (earlier when negative); unchanged when it is
    not chosen or would leave the list."""
    order = list(chosen)
    if key not in order:
        return order
    index = order.index(key)
    target = index + delta
    if not 0 <= target < len(order):
        return order
    order.insert(target, order.pop(index))
    return order

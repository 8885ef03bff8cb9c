"""The session picker's orders, as pi 1.6's ``/resume``: ``threaded`` (the default: each fork
under the session it was forked from, newest first at each level), ``recent`` (newest first, a
search only filters) and ``relevance`` (a search's best match first)."""

from __future__ import annotations

from collections.abc import Sequence

from tau.session.listing import SessionInfo

__all__ = ["SORT_MODES", "next_sort_mode", "threaded"]

SORT_MODES = ("threaded", "recent", "relevance")


def next_sort_mode(mode: str) -> str:
    return SORT_MODES[(SORT_MODES.index(mode) + 1) % len(SORT_MODES)] if mode in SORT_MODES else SORT_MODES[0]


def threaded(infos: Sequence[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """``infos`` as a tree, flattened: ``(session, depth)``, each fork right under its parent (a
    fork whose parent is not listed is a root); newest first among siblings."""
    listed = {info.path for info in infos}
    children: dict[str | None, list[SessionInfo]] = {}
    for info in infos:
        parent = info.parent_session_path if info.parent_session_path in listed else None
        children.setdefault(parent, []).append(info)
    out: list[tuple[SessionInfo, int]] = []

    def visit(parent: str | None, depth: int, seen: frozenset[str]) -> None:
        for info in sorted(children.get(parent, []), key=lambda i: i.modified, reverse=True):
            if info.path in seen:  # a loop of parents in broken files: shown once
                continue
            out.append((info, depth))
            visit(info.path, depth + 1, seen | {info.path})

    visit(None, 0, frozenset())
    shown = {info.path for info, _ in out}
    out += [(info, 0) for info in infos if info.path not in shown]  # only inside a loop: still listed
    return out

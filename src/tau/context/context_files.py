"""Project instructions: the ``AGENTS.md`` / ``CLAUDE.md`` (or ``AGENTS.override.md``) files that go
into ``<project_context>``."""

from __future__ import annotations

import os
from collections.abc import Iterator

from msgspec import Struct

from tau.context.diagnostics import ResourceDiagnostic

CONTEXT_FILE_NAMES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
"""Looked for in this order; a folder contributes only the first one it has, so an
``AGENTS.override.md`` stands in for that folder's ``AGENTS.md`` (as in pi 1.x) and no other."""


class ContextFile(Struct, frozen=True):
    """One instructions file: its absolute path and its text."""

    path: str
    content: str


def find_context_file(folder: str) -> str | None:
    """The path of ``folder``'s instructions file: ``AGENTS.override.md``, else ``AGENTS.md``, else
    ``CLAUDE.md``."""
    for name in CONTEXT_FILE_NAMES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return candidate
    return None


def load_context_files(cwd: str, agent_dir: str) -> tuple[list[ContextFile], list[ResourceDiagnostic]]:
    """The instructions files in the order the model should read them, and warnings for unreadable ones.

    The agent dir's file comes first (global rules), then one file per folder from the filesystem
    root down to ``cwd``, so the most specific instructions come last.
    """
    files: list[ContextFile] = []
    diagnostics: list[ResourceDiagnostic] = []
    seen: set[str] = set()
    for folder in (os.path.abspath(agent_dir), *_root_to(os.path.abspath(cwd))):
        path = find_context_file(folder)
        if path is None:
            continue
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        try:
            with open(path, encoding="utf-8") as f:
                files.append(ContextFile(path=path, content=f.read()))
        except (OSError, UnicodeDecodeError) as exc:
            diagnostics.append(ResourceDiagnostic("warning", f"could not read context file: {exc}", path))
    return files, diagnostics


def _root_to(folder: str) -> Iterator[str]:
    """Every folder from the filesystem root down to ``folder``, root first."""
    chain = [folder]
    while (parent := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    yield from reversed(chain)

"""``export_session_html``: a session (live or a file) to one HTML file on disk."""

from __future__ import annotations

import os
from collections.abc import Sequence

from tau.ai.types import Tool
from tau.export.errors import ExportError
from tau.export.extension_tools import ExtensionToolHtml
from tau.export.page import build_page
from tau.export.source import source_from_file, source_from_manager
from tau.session.manager import SessionManager


def default_output_path(session_file: str) -> str:
    """``tau-session-<session file name without .jsonl>.html`` in the current directory."""
    base = os.path.basename(session_file)
    return f"tau-session-{base.removesuffix('.jsonl')}.html"


def export_session_html(
    session: SessionManager | str | os.PathLike[str],
    output_path: str | os.PathLike[str] | None = None,
    *,
    system_prompt: str | None = None,
    tools: Sequence[Tool] | None = None,
    tool_renderers: ExtensionToolHtml | None = None,
) -> str:
    """Write the session as a self-contained HTML page; returns the absolute path written.

    ``session`` is a live manager (it must be persisted and already written) or the path of a
    session file (any version; the file is only read). ``system_prompt`` and ``tools`` are shown
    in the page header when given; ``tool_renderers`` draws tools as extensions' renderers do.
    Raises ``ExportError`` with a one-line message.
    """
    if isinstance(session, SessionManager):
        source = source_from_manager(session)
    else:
        source = source_from_file(os.fspath(session))
    page = build_page(source, system_prompt=system_prompt, tools=tools, tool_renderers=tool_renderers)
    path = os.path.abspath(
        os.fspath(output_path) if output_path else default_output_path(source.session_file)
    )
    try:
        # errors="replace": a lone surrogate read from a session cannot be written as UTF-8.
        with open(path, "w", encoding="utf-8", errors="replace", newline="") as f:
            f.write(page)
    except OSError as exc:
        raise ExportError(f"Cannot write {path}: {exc.strerror or exc}") from None
    return path

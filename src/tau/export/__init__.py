"""Export a session to one self-contained HTML file: ``tau --export``, ``/export``, RPC ``export_html``.

    from tau.export import export_session_html

    export_session_html("session.jsonl")                  # ./tau-session-<name>.html
    export_session_html(manager, "out.html", system_prompt=prompt, tools=tools)

The page shows the whole session tree: a sidebar with every entry and branch, the branch root →
leaf in the main column (click any entry to show its branch), markdown and code highlighted,
thinking and tool output collapsible, edit diffs coloured, images inline, model, tokens and cost
per reply, compactions and branch summaries marked. It needs no network to open.

All of it is rendered here, in Python, at export time (``markup``, ``tool_html``, ``entry_html``,
``sidebar``, assembled by ``page``); the page's small script only shows and hides those escaped
nodes and never turns session text into HTML. Importing this package loads markdown-it-py and
Pygments, so callers import it only when an export runs (names are imported on first access, so
the modules of this package can import each other without going through it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.export.errors import ExportError
    from tau.export.exporter import default_output_path, export_session_html

_HOMES = {"ExportError": "errors", "default_output_path": "exporter", "export_session_html": "exporter"}

__all__ = ["ExportError", "default_output_path", "export_session_html"]

__getattr__, __dir__ = lazy_exports(globals(), _HOMES)

"""Export a session to one self-contained HTML file: ``tau --export``, ``/export``, RPC ``export_html``.

    from tau.runtime.export_html import export_session_html

    export_session_html("session.jsonl")                  # ./tau-session-<name>.html
    export_session_html(manager, "out.html", system_prompt=prompt, tools=tools)

The page shows the whole session tree: a sidebar with every entry and branch, the branch root →
leaf in the main column (click any entry to show its branch), markdown and code highlighted,
thinking and tool output collapsible, edit diffs coloured, images inline, model, tokens and cost
per reply, compactions and branch summaries marked. It needs no network to open.

All of it is rendered here, in Python, at export time (``markup``, ``tool_html``, ``entry_html``,
``sidebar``, assembled by ``page``); the page's small script only shows and hides those escaped
nodes and never turns session text into HTML. Importing this package loads markdown-it-py and
Pygments, so callers import it only when an export runs.
"""

from tau.runtime.export_html.errors import ExportError
from tau.runtime.export_html.exporter import default_output_path, export_session_html

__all__ = ["ExportError", "default_output_path", "export_session_html"]

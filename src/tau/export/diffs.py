"""Edit diffs as coloured lines.

The edit tool's own numbered diff (``details.diff`` of its result: ``+n`` added, ``-n`` removed,
`` n`` context, tau and pi write the same format) is preferred; without a result (an aborted or
failed call) the diff is computed from the call's ``oldText``/``newText`` pairs, unnumbered since
the file itself is not in the session.
"""

from __future__ import annotations

import difflib
from typing import Any

from tau.export.formatting import as_text
from tau.export.markup import escape_text
from tau.tools.edit import prepare_edit_arguments

_GAP = "  ..."


def render_diff(diff: str) -> str:
    lines: list[str] = []
    for line in diff.split("\n"):
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"
        lines.append(f'<span class="d-{kind}">{escape_text(line)}\n</span>')
    return f'<pre class="diff"><code>{"".join(lines)}</code></pre>'


def diff_from_arguments(arguments: dict[str, Any]) -> str:
    """The line diff of every replacement an edit call asked for, in order."""
    edits = prepare_edit_arguments(arguments).get("edits")
    chunks: list[str] = []
    for edit in edits if isinstance(edits, list) else []:
        if not isinstance(edit, dict):
            continue
        old = as_text(edit.get("oldText")).split("\n")
        new = as_text(edit.get("newText")).split("\n")
        # unified_diff starts with two file header lines; hunk headers carry no line numbers worth showing.
        body = [line for line in difflib.unified_diff(old, new, lineterm="", n=3)][2:]
        chunks.append("\n".join(line for line in body if not line.startswith("@@")))
    return f"\n{_GAP}\n".join(chunk for chunk in chunks if chunk)

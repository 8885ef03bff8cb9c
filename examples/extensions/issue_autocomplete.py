"""``#1234`` completions for the open issues of the repository, on top of tau's own completion.

At session start the extension reads the latest open issues with ``gh issue list`` (GitHub CLI,
in a GitHub checkout; without it nothing is added) and stacks a provider on the editor's
completion (``ctx.ui.add_autocomplete_provider``): after a ``#`` it offers the issues whose number
or title match, and otherwise hands over to ``current``, tau's slash-command and file completion.

    tau -e examples/extensions/issue_autocomplete.py
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tau.extensions import ExtensionAPI, ExtensionContext

_HASH = re.compile(r"(?:^|[ \t])#([^\s#]*)$")


class IssueProvider:
    trigger_characters = ("#",)

    def __init__(self, current: Any, issues: list[dict[str, Any]]) -> None:
        self.current = current
        self.issues = issues

    def get_suggestions(
        self, lines: Sequence[str], cursor_line: int, cursor_col: int, options: Mapping[str, Any]
    ) -> Any:
        match = _HASH.search(lines[cursor_line][:cursor_col])
        if match is None:
            return self.current.get_suggestions(lines, cursor_line, cursor_col, options)
        query = match.group(1).lower()
        items = [
            {"value": f"#{issue['number']}", "label": f"#{issue['number']}", "description": issue["title"]}
            for issue in self.issues
            if query in str(issue["number"]) or query in issue["title"].lower()
        ]
        return {"prefix": f"#{match.group(1)}", "items": items[:20]}


def setup(tau: ExtensionAPI) -> None:
    @tau.on("session_start")
    async def start(event: Any, ctx: ExtensionContext) -> None:
        found = await tau.exec(
            "gh", ["issue", "list", "--limit", "100", "--json", "number,title"], timeout=10
        )
        if found.code != 0:
            return
        try:
            issues = [i for i in json.loads(found.stdout) if isinstance(i, dict) and "number" in i]
        except ValueError:
            return
        ctx.ui.add_autocomplete_provider(lambda current: IssueProvider(current, issues))  # type: ignore[attr-defined]

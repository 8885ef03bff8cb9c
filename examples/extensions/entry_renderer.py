"""Durable notes in the chat that the model never sees: custom entries with a renderer.

``/status-card [message]`` saves a ``status-card`` entry in the session (``tau.append_entry``);
``tau.register_entry_renderer`` draws it in the interactive chat, now and when the session is
resumed. Ctrl+O (expand tool output) adds the time it was written. Entries are not part of the
model's context, so the card costs no tokens.

    tau -e examples/extensions/entry_renderer.py
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text

from tau.extensions import ExtensionAPI, ExtensionCommandContext

ENTRY_TYPE = "status-card"


def setup(tau: ExtensionAPI) -> None:
    @tau.register_entry_renderer(ENTRY_TYPE)
    def draw(entry: Any, options: Any, theme: Any) -> Text:
        data = entry.data if isinstance(entry.data, dict) else {}
        card = Text("[status] ", style="bold cyan")
        card.append(str(data.get("message", "No data")))
        if options.expanded and isinstance(data.get("timestamp"), (int, float)):
            written = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(data["timestamp"]))
            card.append(f"\n{written}", style="dim")
        return card

    @tau.register_command(ENTRY_TYPE, description="Show a status card that is not sent to the model")
    def add_card(args: str, ctx: ExtensionCommandContext) -> None:
        tau.append_entry(ENTRY_TYPE, {"message": args.strip() or "Status card", "timestamp": time.time()})

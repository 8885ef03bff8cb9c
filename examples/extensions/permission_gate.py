"""Permission gate: ask the user before the model runs a dangerous shell command.

Hooks ``tool_call``. When the model calls ``bash`` with a command that deletes recursively, runs
as root, force-pushes, pipes a download into a shell or writes to a raw disk, the user is asked
with ``ctx.ui.confirm``. Declining blocks the call: the model receives the reason as an error
result and can choose another way. Without a UI (``tau -p``, ``--mode json``) nobody can answer,
so such commands are blocked outright.

    tau -e examples/extensions/permission_gate.py
"""

from __future__ import annotations

import re
from typing import Any

from tau.extensions import ExtensionAPI, ExtensionContext, ToolCallEvent

DANGEROUS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)\b"), "recursive delete"),
    (re.compile(r"(^|[;&|]\s*)sudo\b"), "runs as root"),
    (re.compile(r"\bgit\s+push\b.*(--force\b|\s-f\b)"), "force push"),
    (re.compile(r"\b(curl|wget)\b[^|]*\|\s*(ba|z)?sh\b"), "pipes a download into a shell"),
    (re.compile(r"\b(mkfs|dd\s+.*\bof=/dev/)"), "writes to a disk device"),
    (re.compile(r"\bchmod\s+(-R\s+)?777\b"), "makes files writable by everyone"),
]


def danger_of(command: str) -> str | None:
    """Why ``command`` is dangerous, or ``None`` when it looks harmless."""
    for pattern, reason in DANGEROUS:
        if pattern.search(command):
            return reason
    return None


def setup(tau: ExtensionAPI) -> None:
    @tau.on("tool_call")
    async def gate(event: ToolCallEvent, ctx: ExtensionContext) -> dict[str, Any] | None:
        if event.tool_name != "bash":
            return None
        command = str(event.input.get("command", ""))
        reason = danger_of(command)
        if reason is None:
            return None
        if not ctx.has_ui:
            return {"block": True, "reason": f"Blocked ({reason}): no user is present to confirm `{command}`"}
        allowed = await ctx.ui.confirm(
            "Allow this command?", f"{command}\n\nThis {reason}.", signal=ctx.signal
        )
        if allowed:
            return None
        return {"block": True, "reason": f"The user declined `{command}` ({reason}); do not retry it"}

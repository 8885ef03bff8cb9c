"""Git checkpoints: snapshot the working tree at the start of every turn.

Hooks ``turn_start``. ``git stash create`` writes a commit of the uncommitted changes without
touching the working tree, the index or the stash list (with a clean tree, ``HEAD`` is the
snapshot). The commit is kept alive under ``refs/tau-checkpoints/`` and recorded in the session
with ``tau.append_entry`` (never sent to the model), so every turn can be traced back to the code
as it was. ``/checkpoints`` lists them; restore one with ``git checkout <ref> -- .``. Outside a
git repository the extension does nothing.

    tau -e examples/extensions/git_checkpoint.py
"""

from __future__ import annotations

import time

from tau.extensions import ExtensionAPI, ExtensionCommandContext, ExtensionContext, TurnStartEvent
from tau.session.entries import CustomEntry

ENTRY_TYPE = "git-checkpoint"


def setup(tau: ExtensionAPI) -> None:
    async def git(ctx: ExtensionContext, *args: str) -> str | None:
        result = await tau.exec("git", list(args), cwd=ctx.cwd, timeout=30)
        return result.stdout.strip() if result.code == 0 else None

    @tau.on("turn_start")
    async def checkpoint(event: TurnStartEvent, ctx: ExtensionContext) -> None:
        if await git(ctx, "rev-parse", "--is-inside-work-tree") != "true":
            return
        ref = await git(ctx, "stash", "create", f"tau checkpoint, turn {event.turn_index}")
        clean = not ref
        if clean:
            ref = await git(ctx, "rev-parse", "HEAD")
        if not ref:
            return  # a repository without commits
        name = f"refs/tau-checkpoints/{int(time.time() * 1000)}-{event.turn_index}"
        await git(ctx, "update-ref", name, ref)
        tau.append_entry(
            ENTRY_TYPE, {"turnIndex": event.turn_index, "ref": ref, "name": name, "clean": clean}
        )

    @tau.register_command("checkpoints", description="List the git checkpoints of this session")
    def list_checkpoints(args: str, ctx: ExtensionCommandContext) -> None:
        lines = [
            f"turn {e.data['turnIndex']}: {e.data['ref'][:12]}{' (clean)' if e.data['clean'] else ''}"
            for e in ctx.session_manager.get_branch()
            if isinstance(e, CustomEntry) and e.custom_type == ENTRY_TYPE and isinstance(e.data, dict)
        ]
        ctx.ui.notify("\n".join(lines) if lines else "No checkpoints yet.")

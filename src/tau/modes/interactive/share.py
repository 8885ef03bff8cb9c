"""``/share``: upload the session's HTML page as a private GitHub gist with the GitHub CLI.

pi 1.6 shares to a Radius artifact or a gist (``sessionShareDestination``: ``auto``, ``gist``,
``radius``); tau has no Radius account, so ``auto`` and ``gist`` both make a gist and ``radius`` is
refused saying so.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.modes.interactive.host import SessionHost

__all__ = ["share_session"]

GH_MISSING = "GitHub CLI (gh) is not installed. Install it from https://cli.github.com/"
GH_LOGGED_OUT = "GitHub CLI is not logged in. Run 'gh auth login' first."


async def share_session(mode: SessionHost) -> None:
    destination = mode.session.services.settings_manager.get("sessionShareDestination", "auto")
    if destination == "radius":
        mode.chat.add_notice(
            'tau cannot share to Radius: set "sessionShareDestination" to "gist" or "auto"', "error"
        )
        return
    try:
        status = await _run("gh", "auth", "status")
    except FileNotFoundError:
        mode.chat.add_notice(GH_MISSING, "error")
        return
    if status[0] != 0:
        mode.chat.add_notice(GH_LOGGED_OUT, "error")
        return
    from tau.export import ExportError

    with tempfile.TemporaryDirectory(prefix="tau-share-") as folder:
        page = os.path.join(folder, "session.html")
        try:
            mode.session.export_to_html(page, theme=mode.theme())
        except ExportError as exc:
            mode.chat.add_notice(f"Failed to export session: {exc}", "error")
            return
        mode.chat.add_notice("Creating gist…")
        code, out, err = await _run("gh", "gist", "create", "--public=false", page)
    if code != 0:
        mode.chat.add_notice(f"Failed to create gist: {err.strip() or 'unknown error'}", "error")
        return
    url = out.strip().splitlines()[-1].strip() if out.strip() else ""
    if not url.startswith(("https://", "http://")):
        mode.chat.add_notice(f"Failed to read the gist's address from gh's output: {out.strip()!r}", "error")
        return
    from tau._env_twins import env_twin

    viewer = env_twin("SHARE_VIEWER_URL")
    if viewer:
        mode.chat.add_notice(f"Share URL: {viewer}#{url.rstrip('/').rsplit('/', 1)[-1]}")
    mode.chat.add_notice(f"Gist: {url}")


async def _run(*command: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")

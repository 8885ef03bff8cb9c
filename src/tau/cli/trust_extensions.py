"""The ``project_trust`` event at start-up: the user's and ``-e`` extensions may decide whether the
folder is trusted before tau asks or applies its saved decisions (pi 1.6).

They are loaded first, without the folder's own extensions (those wait for the decision), and
kept: the session's extensions are these plus, once trusted, the folder's. Their failures are
warnings and never decide.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from tau.extensions.ui import NotifyLevel, NoUI

if TYPE_CHECKING:
    from tau.config.project_trust import ProjectTrust
    from tau.extensions.context import TrustMode
    from tau.extensions.runner import ExtensionRunner
    from tau.extensions.ui import ExtensionUI
    from tau.runtime.extension_loading import ExtensionOptions

__all__ = ["decide_trust_by_extensions"]


class _StderrNotices(NoUI):
    """Where no screen exists: dialogs answer "no answer", notices go to stderr."""

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        print(message if level in (None, "info") else f"{level}: {message}", file=sys.stderr)


async def decide_trust_by_extensions(
    cwd: str,
    agent_dir: str,
    options: ExtensionOptions,
    trust: ProjectTrust,
    mode: TrustMode,
    *,
    at_start: bool = True,
) -> ExtensionRunner | None:
    """Load the extensions that may take part and let their ``project_trust`` handlers decide for
    ``cwd`` (into ``trust``); the loaded runner, for the session to keep (``None``: there are none).
    Only at start-up can the terminal UI show their dialogs; a folder met later, by switching
    sessions, gets dialogs that answer at once (``has_ui`` false), as in pi 1.6."""
    from tau.config.settings import SettingsManager
    from tau.extensions.context import ProjectTrustContext
    from tau.runtime.extension_loading import load_extension_runner

    settings = SettingsManager.create(cwd, agent_dir, project=False)
    runner, _ = load_extension_runner(cwd, agent_dir, settings, options, include_project=False)
    if runner is None or not runner.registry.has_handlers("project_trust"):
        return runner
    ui: ExtensionUI
    if mode != "tui":
        ui = _StderrNotices()
    elif at_start:
        from tau.modes.interactive.trust import StartupUI

        ui = StartupUI()
    else:
        ui = NoUI()  # the terminal UI is running: nothing may write past it
    context = ProjectTrustContext(cwd, mode, ui, has_ui=mode == "tui" and at_start)
    result, problems = await runner.emit_project_trust(context)
    for problem in problems:
        if at_start or mode != "tui":
            print(f"tau: warning: {problem}", file=sys.stderr)
    if result is not None:
        trust.decide(cwd, result.trusted == "yes", remember=result.remember)
    return runner

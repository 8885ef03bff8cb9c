"""What the user invokes directly: ``/commands``, key shortcuts, and custom-message renderers.

A command's handler gets the rest of the line (after the first space) and an
``ExtensionCommandContext``; a shortcut's handler gets a ``ctx``. Failures are reported (events
``command``, ``shortcut``, ``render``) and never raised to the host.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from tau.extensions.context import ExtensionCommandContext, ExtensionContext
from tau.extensions.registry import ExtensionRegistry, normalize_key
from tau.extensions.reporting import ErrorReporter
from tau.extensions.types import RegisteredCommand, RenderOptions
from tau.session.messages import CustomMessage

__all__ = ["Invocations"]


class Invocations:
    def __init__(
        self,
        registry: ExtensionRegistry,
        reporter: ErrorReporter,
        make_context: Callable[[], ExtensionContext],
        make_command_context: Callable[[], ExtensionCommandContext],
    ) -> None:
        self._registry = registry
        self._reporter = reporter
        self._make_context = make_context
        self._make_command_context = make_command_context

    def get_command(self, text: str) -> RegisteredCommand | None:
        """The command ``/name args`` invokes, if an extension registered ``name``."""
        if not text.startswith("/"):
            return None
        name = text[1:].split(" ", 1)[0]
        return self._registry.commands().get(name)

    async def run_command(self, text: str) -> bool:
        command = self.get_command(text)
        if command is None:
            return False
        name, _, args = text[1:].partition(" ")
        try:
            outcome = command.handler(args, self._make_command_context())
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            # As pi 1.6, a failed command is reported as ``command:<name>`` (where it failed is in
            # the report's location).
            owner = self._registry.owner(command.path)
            self._reporter.report(owner, "command", error, command.handler, reported_as=f"command:{name}")
        return True

    async def run_shortcut(self, key: str) -> bool:
        shortcut = self._registry.shortcuts().get(normalize_key(key))
        if shortcut is None:
            return False
        try:
            outcome = shortcut.handler(self._make_context())
            if inspect.isawaitable(outcome):
                await outcome
        except Exception as error:
            self._reporter.report(self._registry.owner(shortcut.path), "shortcut", error, shortcut.handler)
        return True

    def render_message(self, message: CustomMessage, expanded: bool, theme: Any) -> Any:
        registered = self._registry.renderers().get(message.custom_type)
        if registered is None or not message.display:
            return None
        try:
            return registered.renderer(message, RenderOptions(expanded), theme)
        except Exception as error:
            self._reporter.report(self._registry.owner(registered.path), "render", error, registered.renderer)
            return None

"""Where extension failures at run time go: kept (the latest 100) and handed to listeners.

Each report names the extension, the event (or ``command``, ``shortcut``, ``render``, ``task``,
``bus:<channel>``) and the file and line: where the exception was raised inside the extension,
or, for a result of the wrong shape, where the handler is defined.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from tau.extensions.errors import (
    ExtensionErrorReport,
    describe_exception,
    exception_location,
    format_stack,
    function_location,
)
from tau.extensions.registry import Extension

__all__ = ["ErrorListener", "ErrorReporter"]

ErrorListener = Callable[[ExtensionErrorReport], None]

_log = logging.getLogger("tau.extensions")
MAX_KEPT_ERRORS = 100


class ErrorReporter:
    """Collects ``ExtensionErrorReport``s; without listeners they go to the ``tau.extensions`` logger."""

    def __init__(self) -> None:
        self.errors: list[ExtensionErrorReport] = []
        self._listeners: list[ErrorListener] = []

    def on_error(self, listener: ErrorListener) -> Callable[[], None]:
        """Call ``listener(report)`` for every failure; returns an unsubscriber."""
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    def report(
        self,
        extension: Extension,
        event: str,
        error: BaseException | str,
        handler: Any = None,
        *,
        reported_as: str | None = None,
    ) -> None:
        """Record a failure of ``extension`` in ``event``: an exception, or a message about a
        malformed result (located at ``handler``'s definition). ``reported_as`` replaces the
        extension's path in the report (pi's ``command:<name>`` for a failed command)."""
        if isinstance(error, BaseException):
            where = exception_location(error, extension.root) or function_location(handler)
            message, stack = describe_exception(error), format_stack(error)
        else:
            where = function_location(handler)
            message, stack = error, ""
        report = ExtensionErrorReport(
            extension.name,
            reported_as or extension.path,
            event,
            message,
            stack,
            line=where.line if where else None,
            path=where.path if where else None,
        )
        self._deliver(report)

    def report_problem(self, source: str, event: str, problem: str) -> None:
        """Record a problem of tau's own at an extension boundary, under ``source`` (``<boundary>``)."""
        self._deliver(ExtensionErrorReport(source, source, event, problem))

    def _deliver(self, report: ExtensionErrorReport) -> None:
        self.errors.append(report)
        del self.errors[:-MAX_KEPT_ERRORS]
        if not self._listeners:
            _log.warning("%s", report)
        for listener in list(self._listeners):
            try:
                listener(report)
            except Exception:
                _log.exception("an extension error listener failed")

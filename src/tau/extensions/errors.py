"""What goes wrong with extensions, and how it is reported: exceptions, diagnostics, error reports.

Loading problems become ``ExtensionDiagnostic``s (the extension is skipped, the others load).
A handler that raises at run time becomes an ``ExtensionErrorReport`` handed to the runner's error
listeners (the next handler still runs). Both name the extension and the file and line to look at.
"""

from __future__ import annotations

import os
import traceback
from types import CodeType, TracebackType
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.errors import TauError

__all__ = [
    "DiagnosticType",
    "ExtensionDiagnostic",
    "ExtensionError",
    "ExtensionErrorReport",
    "ExtensionNotReadyError",
    "MalformedResultError",
    "SourceLocation",
    "StaleContextError",
]

DiagnosticType: TypeAlias = Literal["error", "warning"]


class ExtensionError(TauError):
    """Base class of the errors ``tau.extensions`` raises."""


class StaleContextError(ExtensionError):
    """An extension used its ``tau`` object or a context after its session was replaced or reloaded."""


class ExtensionNotReadyError(ExtensionError):
    """A session action was called before the runtime bound the extensions (e.g. inside ``setup``)."""


class MalformedResultError(ExtensionError):
    """A handler returned a value of the wrong shape for its event."""


class SourceLocation(Struct, frozen=True):
    """A file and (when known) a line."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line is not None else self.path


class ExtensionDiagnostic(Struct, frozen=True):
    """A problem found while discovering or loading extensions, or with what one registered."""

    type: DiagnosticType
    message: str
    extension: str | None = None
    path: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.path and self.line is not None else self.path
        who = f"extension {self.extension!r}: " if self.extension else ""
        return f"{where}: {who}{self.message}" if where else f"{who}{self.message}"


class ExtensionErrorReport(Struct, frozen=True):
    """A handler, command, tool renderer or background task of an extension failed.

    ``event`` is the event name (or ``command``, ``shortcut``, ``render``, ``bus``, ``task``);
    ``error`` the message; ``stack`` the formatted traceback (empty for malformed results).
    """

    extension: str
    extension_path: str
    event: str
    error: str
    stack: str = ""
    line: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        where = f"{self.path or self.extension_path}" + (f":{self.line}" if self.line is not None else "")
        return f"{where}: extension {self.extension!r} failed in {self.event}: {self.error}"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (just the type when the message is empty)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _inside(filename: str, root: str) -> bool:
    try:
        file = os.path.realpath(filename)
    except (OSError, ValueError):
        return False
    return file == root or file.startswith(root.rstrip(os.sep) + os.sep)


def exception_location(exc: BaseException, root: str | None) -> SourceLocation | None:
    """Where ``exc`` was raised in the extension under ``root`` (its file or package folder).

    The innermost frame inside ``root`` wins; a ``SyntaxError`` names its own line. Without a
    frame inside ``root`` the innermost frame is used.
    """
    if isinstance(exc, SyntaxError) and exc.filename:
        return SourceLocation(exc.filename, exc.lineno)
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    if root is not None:
        real_root = os.path.realpath(root)
        for frame in reversed(frames):
            if _inside(frame.filename, real_root):
                return SourceLocation(frame.filename, frame.lineno)
    return SourceLocation(frames[-1].filename, frames[-1].lineno)


def caller_location(root: str | None) -> SourceLocation | None:
    """The innermost frame of the current call stack inside ``root``: the extension line that
    called into the API. ``None`` when the call did not come from that extension's files."""
    if root is None:
        return None
    real_root = os.path.realpath(root)
    import inspect

    here = inspect.currentframe()
    frame = here.f_back if here is not None else None
    while frame is not None:
        if _inside(frame.f_code.co_filename, real_root):
            return SourceLocation(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return None


def function_location(fn: Any) -> SourceLocation | None:
    """Where a handler function is defined (for results of the wrong shape)."""
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is None and callable(target):
        code = getattr(type(target).__call__, "__code__", None)
    if isinstance(code, CodeType):
        return SourceLocation(code.co_filename, code.co_firstlineno)
    return None


def format_stack(exc: BaseException) -> str:
    tb: TracebackType | None = exc.__traceback__
    return "".join(traceback.format_exception(type(exc), exc, tb))

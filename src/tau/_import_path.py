"""tau's import path: the installed environment, never the working folder.

A folder tau works in is not trusted code: a ``jiter.py`` or a ``*.dist-info`` in it must not be
imported, nor offer extensions. Python itself puts the working folder first on ``sys.path`` for
``python -m``, so every Python process tau starts is started with ``-P`` (``python_module_command``),
``python -m tau`` takes the entry out as tau's package starts (``drop_working_folder``), and the
extensions' entry points are looked up in ``installed_import_path()`` only.

This module imports nothing but ``os`` and ``sys``: ``tau/__init__.py`` calls it before anything
else is imported.
"""

import os
import sys

__all__ = ["add_extension_folder", "drop_working_folder", "installed_import_path", "python_module_command"]

# Folders put on sys.path so that an extension's files can import each other: code of that
# extension, not of the environment, so never searched for entry points.
_EXTENSION_FOLDERS: set[str] = set()


def python_module_command(module: str, *args: str) -> list[str]:
    """The command line that runs ``module`` in a new process of this Python, with nothing of its
    working folder on the import path (``-P``, Python 3.11+)."""
    return [sys.executable, "-P", "-m", module, *args]


def drop_working_folder() -> None:
    """Take out the working folder that ``python -m`` put first on ``sys.path``.

    Called first thing in ``tau/__init__.py``: while ``python -m tau…`` locates its module,
    ``sys.argv[0]`` is ``"-m"``, and the command line names a module of tau. A process started with
    ``-P`` (or ``PYTHONSAFEPATH``) has no such entry, and ``import tau`` from another program (even
    one run with ``-m``) leaves that program's path alone.
    """
    if sys.argv[:1] != ["-m"] or sys.flags.safe_path or not sys.path:
        return
    module = _module_run()
    if module != "tau" and not module.startswith("tau."):
        return
    try:
        cwd = os.getcwd()
    except OSError:  # the folder is gone: its entry is useless anyway
        cwd = None
    if sys.path[0] in ("", ".") or (cwd is not None and sys.path[0] == cwd):
        del sys.path[0]


def _module_run() -> str:
    """The module ``python -m`` was given, from the command line as the interpreter received it."""
    argv: list[str] = sys.orig_argv
    index = 1
    while index < len(argv):
        arg = argv[index]
        if arg == "-m":
            return argv[index + 1] if index + 1 < len(argv) else ""
        if arg.startswith("-m"):
            return arg[2:]
        if not arg.startswith("-") or arg == "-c":
            return ""
        index += 2 if arg in ("-X", "-W") else 1  # the options that take the next word
    return ""


def add_extension_folder(folder: str) -> None:
    """Put an extension's own folder at the end of ``sys.path`` (the environment's modules win over
    its files), remembered so that entry points are never looked up there."""
    _EXTENSION_FOLDERS.add(os.path.realpath(folder))
    if folder not in sys.path:
        sys.path.append(folder)


def installed_import_path(cwd: str | None = None) -> list[str]:
    """The entries of ``sys.path`` that belong to the installed environment: absolute folders other
    than the working folder (``cwd``, default the process's) and the extensions' own folders."""
    folders = {os.path.realpath(path) for path in (cwd, _getcwd()) if path is not None}
    return [
        entry
        for entry in sys.path
        if os.path.isabs(entry)
        and os.path.realpath(entry) not in folders
        and os.path.realpath(entry) not in _EXTENSION_FOLDERS
    ]


def _getcwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None

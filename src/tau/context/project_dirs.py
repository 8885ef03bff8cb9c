"""A project's own configuration folders: tau's ``.tau/`` and pi's ``.pi/``, in precedence order.

Both are read, behind the same project trust. Where the two hold a resource of the same name (a
skill, a prompt template, a theme, ``SYSTEM.md``), ``.tau/``'s wins; ``.tau/settings.json`` keys lie
over ``.pi/settings.json`` keys. Everything tau writes into a project goes to ``.tau/``.
"""

from __future__ import annotations

import os

__all__ = ["PI_PROJECT_DIR_NAME", "PROJECT_DIR_NAME", "PROJECT_DIR_NAMES", "project_dirs"]

PROJECT_DIR_NAME = ".tau"
PI_PROJECT_DIR_NAME = ".pi"
PROJECT_DIR_NAMES = (PROJECT_DIR_NAME, PI_PROJECT_DIR_NAME)
"""The project folders, the one that wins first."""


def project_dirs(cwd: str | os.PathLike[str]) -> list[str]:
    """``<cwd>/.tau`` and ``<cwd>/.pi`` (absolute), the one that wins first."""
    folder = os.path.abspath(os.fspath(cwd))
    return [os.path.join(folder, name) for name in PROJECT_DIR_NAMES]

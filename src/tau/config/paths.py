"""Where tau keeps its configuration, and how configuration files are written safely.

The agent dir is ``$TAU_AGENT_DIR`` (a leading ``~`` is expanded) or ``~/.tau/agent``; a project's
own configuration lives in ``<cwd>/.tau/`` (and pi's ``<cwd>/.pi/``, read too; see
``tau.context.project_dirs``). Files shared between tau and pi processes (settings.json,
auth.json, ...) are changed with ``update_json_file`` (``tau._shared_file``): under pi's lock the file
is read again, changed and replaced atomically, so a reader never sees half a file and two writers
never lose each other's keys.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from tau._lockdir import (
    DEFAULT_STALE_S,
    STORE_STALE_S,
    LockTimeoutError,
    forget_old_lock_file,
    held,
    lock_path_for,
)
from tau._shared_file import update_json_file, write_file_atomic
from tau.context.project_dirs import PI_PROJECT_DIR_NAME, PROJECT_DIR_NAME

__all__ = [
    "AUTH_FILE",
    "CONFIG_DIR_NAME",
    "ENV_AGENT_DIR",
    "ENV_OFFLINE",
    "ENV_SESSION_DIR",
    "MODELS_FILE",
    "SETTINGS_FILE",
    "STORE_STALE_S",
    "LockTimeoutError",
    "agent_dir",
    "auth_path",
    "expand_home",
    "file_lock",
    "forget_old_lock_file",
    "is_offline",
    "make_private_dir",
    "models_path",
    "pi_project_settings_path",
    "project_config_dir",
    "project_settings_path",
    "sessions_dir",
    "set_offline",
    "settings_path",
    "update_json_file",
    "write_file_atomic",
]

CONFIG_DIR_NAME = PROJECT_DIR_NAME
ENV_AGENT_DIR = "TAU_AGENT_DIR"
ENV_SESSION_DIR = "TAU_SESSION_DIR"
ENV_OFFLINE = "TAU_OFFLINE"
ENV_PI_OFFLINE = "PI_OFFLINE"
SETTINGS_FILE = "settings.json"
MODELS_FILE = "models.json"
AUTH_FILE = "auth.json"

_TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def expand_home(value: str | os.PathLike[str]) -> Path:
    """``value`` as a path, with a leading ``~`` or ``~/`` replaced by the home directory."""
    text = os.fspath(value)
    if text == "~" or text.startswith(("~/", "~" + os.sep)):
        return Path.home() / text[2:] if len(text) > 1 else Path.home()
    return Path(text)


def agent_dir() -> Path:
    """The agent dir: ``$TAU_AGENT_DIR`` when set, else ``~/.tau/agent``."""
    configured = os.environ.get(ENV_AGENT_DIR)
    if configured:
        return expand_home(configured)
    return Path.home() / CONFIG_DIR_NAME / "agent"


def make_private_dir(path: Path) -> None:
    """Create ``path`` and its missing parents with mode 0700 (the agent dir holds keys and
    conversations, for its owner only). Folders that exist already keep their mode."""
    missing: list[Path] = []
    current = path
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        # The umask can only take bits away from 0700.
        folder.mkdir(mode=0o700, exist_ok=True)


def project_config_dir(cwd: str | os.PathLike[str]) -> Path:
    """The project's configuration dir, ``<cwd>/.tau``."""
    return Path(cwd) / CONFIG_DIR_NAME


def settings_path(base: Path | None = None) -> Path:
    """The global settings.json in ``base`` (default: the agent dir)."""
    return (base or agent_dir()) / SETTINGS_FILE


def project_settings_path(cwd: str | os.PathLike[str]) -> Path:
    """The project settings.json, ``<cwd>/.tau/settings.json``."""
    return project_config_dir(cwd) / SETTINGS_FILE


def pi_project_settings_path(cwd: str | os.PathLike[str]) -> Path:
    """pi's project settings.json, ``<cwd>/.pi/settings.json`` (read under tau's, never written)."""
    return Path(cwd) / PI_PROJECT_DIR_NAME / SETTINGS_FILE


def models_path(base: Path | None = None) -> Path:
    """models.json in ``base`` (default: the agent dir)."""
    return (base or agent_dir()) / MODELS_FILE


def auth_path(base: Path | None = None) -> Path:
    """auth.json in ``base`` (default: the agent dir)."""
    return (base or agent_dir()) / AUTH_FILE


def sessions_dir(
    base: Path | None = None, *, cli_dir: str | None = None, settings_dir: str | None = None
) -> Path:
    """The root of session storage: ``--session-dir`` > ``$TAU_SESSION_DIR`` > setting ``sessionDir`` > ``<agent dir>/sessions``."""
    for candidate in (cli_dir, os.environ.get(ENV_SESSION_DIR), settings_dir):
        if candidate:
            return expand_home(candidate)
    return (base or agent_dir()) / "sessions"


def is_offline() -> bool:
    """Whether startup network access is switched off (``--offline`` or ``TAU_OFFLINE=1``; without
    ``TAU_OFFLINE``, pi's ``PI_OFFLINE=1`` says it too)."""
    value = os.environ.get(ENV_OFFLINE, "").strip() or os.environ.get(ENV_PI_OFFLINE, "").strip()
    return value.lower() in _TRUE_VALUES


def set_offline() -> None:
    """Switch startup network access off for this process and its children (``--offline``)."""
    os.environ[ENV_OFFLINE] = "1"


@contextlib.contextmanager
def file_lock(
    path: Path, timeout_s: float = 5.0, *, follow_links: bool = True, stale_s: float = DEFAULT_STALE_S
) -> Iterator[None]:
    """Hold the lock of ``path`` for the ``with`` block: pi's lock directory ``<path>.lock``, so tau and
    pi processes exclude each other (see ``tau._lockdir``). Waits up to ``timeout_s`` for another
    holder, then raises ``LockTimeoutError``; a lock left by a dead process is taken over.

    The lock is not the file itself because the file is replaced on every write, and a lock on a
    replaced inode protects nothing. ``follow_links`` and ``stale_s`` as pi locks that file: auth.json
    and the files stored like it beside the real file and judged stale after ``STORE_STALE_S``,
    settings.json and trust.json where the link is, after ``DEFAULT_STALE_S``.
    """
    with held(lock_path_for(path, follow_links=follow_links), stale_s=stale_s, timeout_s=timeout_s):
        yield

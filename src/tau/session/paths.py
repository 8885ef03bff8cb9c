"""Where session files live: the agent dir, the per-project folder, the file name."""

from __future__ import annotations

import os
from collections.abc import Mapping

AGENT_DIR_ENV = "TAU_AGENT_DIR"
SESSION_DIR_ENV = "TAU_SESSION_DIR"

_SEPARATORS_TO_DASHES = str.maketrans("/\\:", "---")


def default_agent_dir(env: Mapping[str, str] | None = None) -> str:
    """``$TAU_AGENT_DIR`` (``~`` expanded) or ``~/.tau/agent``."""
    env = os.environ if env is None else env
    configured = env.get(AGENT_DIR_ENV)
    return os.path.expanduser(configured) if configured else os.path.expanduser("~/.tau/agent")


def sessions_root(agent_dir: str | None = None) -> str:
    """``<agent dir>/sessions``: one sub-folder per project."""
    return os.path.join(agent_dir or default_agent_dir(), "sessions")


def encode_cwd(cwd: str) -> str:
    """The folder name of a project: ``/Users/a/w/x`` → ``--Users-a-w-x--``, ``C:\\x`` → ``--C--x--``."""
    if cwd.startswith(("/", "\\")):
        cwd = cwd[1:]
    return "--" + cwd.translate(_SEPARATORS_TO_DASHES) + "--"


def default_session_dir(cwd: str, agent_dir: str | None = None) -> str:
    """``<agent dir>/sessions/--<encoded cwd>--`` (not created here)."""
    return os.path.join(sessions_root(agent_dir), encode_cwd(cwd))


def resolve_session_dir(
    cwd: str,
    session_dir: str | None = None,
    *,
    settings_session_dir: str | None = None,
    agent_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """The folder new sessions of ``cwd`` go to.

    ``session_dir`` (``--session-dir``) wins, then ``$TAU_SESSION_DIR``, then the settings'
    ``sessionDir``, then the per-project default. A custom folder is flat: no per-cwd sub-folder.
    """
    env = os.environ if env is None else env
    for custom in (session_dir, env.get(SESSION_DIR_ENV), settings_session_dir):
        if custom:
            return os.path.expanduser(custom)
    return default_session_dir(cwd, agent_dir)


def session_file_name(timestamp: str, session_id: str) -> str:
    """``<timestamp with : and . replaced by ->_<id>.jsonl``."""
    return f"{timestamp.replace(':', '-').replace('.', '-')}_{session_id}.jsonl"

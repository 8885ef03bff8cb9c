"""pi 1.6's ``PI_*`` process variables and their ``TAU_*`` twins: ``env_twin("OFFLINE")`` is
``TAU_OFFLINE`` when set (non-empty), else pi's ``PI_OFFLINE``, so a shell set up for pi works and
tau's own name wins when both are set. Variables naming pi's own files or programs
(``PI_CODING_AGENT_DIR``, ``PI_CODING_AGENT_SESSION_DIR``, ``PI_PACKAGE_DIR``,
``PI_SELF_UPDATE_COMMAND``) are not read under pi's name (``tau_only``)."""

from __future__ import annotations

import os

__all__ = ["env_twin", "env_twin_flag", "tau_only"]


def env_twin(name: str) -> str | None:
    """``TAU_<name>``, else ``PI_<name>``; ``None`` when neither is set to something."""
    for prefix in ("TAU_", "PI_"):
        value = os.environ.get(prefix + name)
        if value:
            return value
    return None


def env_twin_flag(name: str) -> bool | None:
    """A yes/no twin: ``1``/``true``/``yes`` → ``True``, ``0``/``false``/``no`` → ``False``, else
    (unset, ``auto``) ``None``."""
    value = (env_twin(name) or "").strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    return None


def tau_only(name: str) -> str | None:
    """``TAU_<name>`` alone (pi's name points at pi's own installation)."""
    return os.environ.get("TAU_" + name) or None

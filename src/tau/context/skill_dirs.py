"""Where skills are discovered: the folders in precedence order (no skill is read here, so project
trust can ask about them cheaply)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal, TypeAlias

from tau.context.project_dirs import project_dirs

SkillSource: TypeAlias = Literal["path", "project", "user"]


def default_skill_dirs(
    cwd: str, agent_dir: str, *, home: str | None = None
) -> list[tuple[str, SkillSource, bool]]:
    """The auto-discovered skill folders in precedence order, each with its source and whether loose
    ``*.md`` files in it count as skills."""
    cwd = os.path.abspath(cwd)
    home_dir = home if home is not None else str(Path.home())
    dirs: list[tuple[str, SkillSource, bool]] = [
        (os.path.join(folder, "skills"), "project", True) for folder in project_dirs(cwd)
    ]
    dirs += [(os.path.join(d, ".agents", "skills"), "project", False) for d in _up_to_git_root(cwd)]
    dirs.append((os.path.join(os.path.abspath(agent_dir), "skills"), "user", True))
    dirs.append((os.path.join(home_dir, ".agents", "skills"), "user", False))
    return dirs


def _up_to_git_root(folder: str) -> list[str]:
    """``folder`` and its ancestors, stopping at the first one holding ``.git`` (or at the root)."""
    chain = [folder]
    while not os.path.exists(os.path.join(chain[-1], ".git")):
        parent = os.path.dirname(chain[-1])
        if parent == chain[-1]:
            break
        chain.append(parent)
    return chain

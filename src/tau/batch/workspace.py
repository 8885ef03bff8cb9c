"""A task's working copy: a copy of ``cwd`` or a fresh clone at ``commit``, its commands, its patch.

The patch is taken against a snapshot made after ``setup``, kept in a git folder outside the
working copy (the agent never sees it), so it holds exactly what the agent changed, for a plain
folder as for a repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from msgspec import Struct

from tau import _process_groups as process_groups
from tau.errors import TauError

__all__ = ["CommandResult", "WorkingCopy", "WorkspaceError"]

_OUTPUT_LIMIT = 8000


class WorkspaceError(TauError):
    """The working copy could not be made (a failed clone, an unknown commit)."""


class CommandResult(Struct, frozen=True):
    exit_code: int
    output: str
    """The end of the combined stdout and stderr (at most a few thousand characters)."""


class WorkingCopy:
    """The folder ``root/work`` for one task, with its snapshot in ``root/snapshot.git``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / "work"
        self._git_dir = root / "snapshot.git"
        self._base_tree: str | None = None

    def copy_from(self, source: str) -> None:
        shutil.copytree(source, self.path, symlinks=True)

    def clone(self, repo: str, commit: str) -> None:
        done = _git(["clone", "--quiet", "--no-checkout", repo, str(self.path)], cwd=self.root)
        if done.returncode != 0:
            raise WorkspaceError(f"git clone {repo} failed: {_last_line(done.stderr)}")
        done = _git(["checkout", "--quiet", "--detach", commit], cwd=self.path)
        if done.returncode != 0:
            raise WorkspaceError(
                f"commit {commit} of {repo} cannot be checked out: {_last_line(done.stderr)}"
            )

    def run(self, command: str, *, timeout: float | None) -> CommandResult:
        """Run a shell command in the working copy; exit code 124 when it runs out of time."""
        try:
            done = process_groups.run(
                command,
                shell=True,
                cwd=self.path,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            partial = bytes(exc.stdout or b"") + bytes(exc.stderr or b"")
            return CommandResult(124, partial.decode(errors="replace")[-_OUTPUT_LIMIT:])
        output = (done.stdout + done.stderr).decode(errors="replace")
        return CommandResult(done.returncode, output[-_OUTPUT_LIMIT:])

    def snapshot(self) -> None:
        """Remember the working copy as it is now; ``patch()`` is relative to this."""
        _git(["init", "--quiet", "--bare", str(self._git_dir)], cwd=self.root)
        self._base_tree = self._write_tree()

    def patch(self) -> str:
        """The changes since ``snapshot()`` as a git diff (binary files included)."""
        if self._base_tree is None:
            return ""
        tree = self._write_tree()
        done = self._snapshot_git(["diff", "--binary", "--no-color", "--no-ext-diff", self._base_tree, tree])
        return done.stdout

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def _write_tree(self) -> str:
        self._snapshot_git(["add", "--all", "."])
        return self._snapshot_git(["write-tree"]).stdout.strip()

    def _snapshot_git(self, args: list[str]) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "GIT_DIR": str(self._git_dir),
            "GIT_WORK_TREE": str(self.path),
            "GIT_INDEX_FILE": str(self.root / "snapshot.index"),
        }
        return _git(args, cwd=self.path, env=env)


def _git(
    args: list[str], *, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = dict(env or os.environ)
    environment.setdefault("GIT_TERMINAL_PROMPT", "0")
    try:
        return process_groups.run(
            ["git", "-c", "core.autocrlf=false", *args],
            cwd=cwd,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
        )
    except FileNotFoundError:
        raise WorkspaceError("git is not installed (it is needed for the working copies)") from None


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message"

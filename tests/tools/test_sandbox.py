"""The sandbox's answer to the write and edit tools: which paths may be written (no bubblewrap here)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tau.tools.sandbox as sandbox_module
from tau.tools.sandbox import Sandbox, SandboxPolicy

SEGMENTS = st.sampled_from(["src", "..", ".", ".tau", ".pi", ".git", "hooks", "config", "agent", "a b", "é"])
RELATIVE = st.lists(SEGMENTS, min_size=1, max_size=6).map(lambda parts: os.path.join(*parts))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


def _policy(root: Path, mode: str = "workspace-write") -> SandboxPolicy:
    work = str(root / "work")
    agent = str(root / "work" / "agent")  # an agent folder inside the working folder stays read-only
    return SandboxPolicy(mode=mode, cwd=work, protected=(agent,))  # type: ignore[arg-type]


@given(relative=RELATIVE)
def test_workspace_write_allows_exactly_the_working_folder_less_the_protected_paths(relative: str) -> None:
    root = Path("/nonexistent-tau-sandbox-root")
    policy = _policy(root)
    target = os.path.normpath(os.path.join(policy.cwd, relative))
    protected = [
        os.path.join(policy.cwd, name) for name in (".tau", ".pi", ".git/hooks", ".git/config", "agent")
    ]
    expected = _inside(target, policy.cwd) and not any(_inside(target, p) for p in protected)
    assert (Sandbox(policy).write_refusal(target) is None) == expected


@given(relative=RELATIVE)
def test_read_only_refuses_every_path_and_off_refuses_none(relative: str) -> None:
    policy = _policy(Path("/nonexistent-tau-sandbox-root"), "read-only")
    target = os.path.normpath(os.path.join(policy.cwd, relative))
    assert Sandbox(policy).write_refusal(target) is not None
    off = SandboxPolicy(mode="off", cwd=policy.cwd)
    assert Sandbox(off).write_refusal(target) is None


def test_a_symbolic_link_out_of_the_working_folder_is_refused(tmp_path: Path) -> None:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (work / "link").symlink_to(outside)
    sandbox = Sandbox(SandboxPolicy(mode="workspace-write", cwd=str(work)))
    assert sandbox.write_refusal(str(work / "link" / "file.txt")) is not None
    assert sandbox.write_refusal(str(work / "file.txt")) is None


def test_a_broken_sandbox_refuses_everything_and_says_why(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxPolicy(mode="off", cwd=str(tmp_path)), problem="bubblewrap is missing")
    refusal = sandbox.write_refusal(str(tmp_path / "file.txt"))
    assert refusal is not None and "bubblewrap is missing" in refusal


def test_the_fenced_bash_tool_is_checked_without_jsonschema(tmp_path: Path) -> None:
    """The escalate parameter stays within tau's plain validator: a fenced session does not pay
    jsonschema's import (~50 ms) on its first tool call."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from tau.tools import SpillDirectory, create_bash_tool\n"
        "from tau.tools.sandbox import Sandbox, SandboxPolicy\n"
        "from tau.ai.validation import validate_tool_arguments\n"
        f"policy = SandboxPolicy(mode='workspace-write', cwd={str(tmp_path)!r})\n"
        "with SpillDirectory() as spill:\n"
        f"    tool = create_bash_tool({str(tmp_path)!r}, spill=spill, sandbox=Sandbox(policy))\n"
        "    assert 'escalate' in tool.parameters['properties']\n"
        "    validate_tool_arguments(tool, {'command': 'true'})\n"
        "    validate_tool_arguments(tool, {'command': 'true', 'escalate': {'reason': 'r', 'network': ['a.b']}})\n"
        "print('jsonschema' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_which_finds_what_shutil_which_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "bin" / "tool"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    (tmp_path / "bin" / "plain").write_text("not executable")
    (tmp_path / "bin" / "folder").mkdir()
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(tmp_path / "missing"), str(tmp_path / "bin"), "/usr/bin", "/bin"])
    )
    for name in ["tool", "plain", "folder", "sh", "no-such-program"]:
        assert sandbox_module.which(name) == shutil.which(name), name


def test_private_folder_is_made_as_mkdtemp_makes_one(tmp_path: Path) -> None:
    ours = Path(sandbox_module.private_folder("tau-x-", str(tmp_path)))
    theirs = Path(tempfile.mkdtemp(prefix="tau-x-", dir=tmp_path))
    assert ours.parent == theirs.parent == tmp_path
    assert ours.name.startswith("tau-x-") and ours != theirs
    assert stat.S_IMODE(ours.stat().st_mode) == stat.S_IMODE(theirs.stat().st_mode) == 0o700
    assert sandbox_module.private_folder("tau-x-", str(tmp_path)) != str(ours)

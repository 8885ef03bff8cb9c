"""The macOS profile (``sandbox-exec``) generated from a sandbox policy: its text and arguments
(checked here on any system; the profile itself is untested on a Mac)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.tools.sandbox import SandboxPolicy
from tau.tools.sandbox_macos import SANDBOX_EXEC, seatbelt_command, seatbelt_profile

WORK = "/Users/me/project"
TMP = "/private/tmp/tau-sandbox-x"


def _params(argv: list[str]) -> dict[str, str]:
    return dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "-D")


def test_workspace_write_allows_writing_the_folders_then_denies_the_protected_ones() -> None:
    policy = SandboxPolicy(mode="workspace-write", cwd=WORK, writable_roots=("/Users/me/cache",))
    profile, params = seatbelt_profile(policy, TMP)
    lines = profile.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    allow = next(i for i, line in enumerate(lines) if line.startswith("(allow file-write* "))
    deny = next(i for i, line in enumerate(lines) if line.startswith("(deny file-write* "))
    assert allow < deny  # the later rule wins: the protected paths stay read-only
    named = dict(params)
    assert named["TMPDIR"] == TMP and named["WRITABLE_ROOT_0"] == WORK
    assert named["WRITABLE_ROOT_1"] == "/Users/me/cache"
    protected = {path for name, path in params if name.startswith("READ_ONLY_")}
    assert {f"{WORK}/.tau", f"{WORK}/.pi", f"{WORK}/.git/hooks", f"{WORK}/.git/config"} <= protected
    assert "(allow network" not in profile


def test_read_only_writes_only_the_temporary_folder_and_network_on_is_allowed() -> None:
    profile, params = seatbelt_profile(SandboxPolicy(mode="read-only", cwd=WORK, network=True), TMP)
    assert params == [("TMPDIR", TMP)]
    assert '(allow file-write* (subpath (param "TMPDIR")))' in profile
    assert "(allow network*)" in profile


def test_the_command_passes_every_path_as_a_parameter() -> None:
    policy = SandboxPolicy(mode="workspace-write", cwd=WORK)
    argv = seatbelt_command(policy, ["/bin/bash", "-c", "make"], TMP)
    assert argv[:2] == [SANDBOX_EXEC, "-p"] and argv[-3:] == ["/bin/bash", "-c", "make"]
    assert _params(argv)["WRITABLE_ROOT_0"] == WORK


def test_a_host_list_is_refused_on_macos() -> None:
    policy = SandboxPolicy(mode="workspace-write", cwd=WORK, allowed_hosts=("pypi.org",))
    try:
        seatbelt_command(policy, ["true"], TMP)
    except ValueError as error:
        assert "needs Linux" in str(error)
    else:
        raise AssertionError("a host list was accepted")


@given(root=st.text(min_size=1, max_size=40).filter(lambda s: "\x00" not in s))
def test_no_path_ever_reaches_the_profile_text(root: str) -> None:
    folder = "/Users/me/" + root
    policy = SandboxPolicy(mode="workspace-write", cwd=WORK, writable_roots=(folder,))
    profile, params = seatbelt_profile(policy, TMP)
    assert ("WRITABLE_ROOT_1", folder) in params
    assert all(path not in profile for _, path in params if len(path) > 12)

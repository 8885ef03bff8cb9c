"""The ``sandbox`` setting and the ``--sandbox`` flag, turned into the session's :class:`Sandbox`.

The setting is a mode (``"off"``, ``"read-only"``, ``"workspace-write"``) or an object::

    "sandbox": {"mode": "workspace-write", "writableRoots": ["~/.cache/pip"], "network": "off"}

It is read from the global settings and, for a trusted folder only, the project's (an untrusted
folder's settings are never read). ``--sandbox MODE`` overrides the mode for the run. Anything wrong
(an unknown mode, a writable root that does not exist, bubblewrap missing or refused) is one line of
error at start; the sandbox built then refuses every command and write, never runs one unfenced.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping
from typing import Any, cast

from tau.config.project_trust import TRUST_FILE
from tau.errors import TauError
from tau.tools.sandbox import SANDBOX_MODES, Sandbox, SandboxMode, SandboxPolicy, find_bwrap

__all__ = ["SandboxConfigError", "build_sandbox", "checked_sandbox_policy", "sandbox_policy"]

_MODES_TEXT = ", ".join(SANDBOX_MODES)


class SandboxConfigError(TauError, ValueError):
    """The sandbox's configuration cannot be used; the message is one line saying what to change."""


def _mode(value: Any, where: str | None) -> SandboxMode:
    if value not in SANDBOX_MODES:
        shown = value if isinstance(value, str) else repr(value)
        said = f'unknown sandbox mode "{shown}"; use {_MODES_TEXT}'
        raise SandboxConfigError(f"{where}: {said}" if where else said)
    return cast(SandboxMode, value)


def sandbox_policy(
    setting: Any, cwd: str, agent_dir: str, *, mode: str | None = None, where: str = "settings"
) -> SandboxPolicy:
    """The policy the ``sandbox`` setting (``None`` when unset) and a ``mode`` override describe.

    Raises :class:`SandboxConfigError` for anything that cannot be used as it is."""
    options: Mapping[str, Any]
    if setting is None:
        options = {}
    elif isinstance(setting, str):
        options = {"mode": setting}
    elif isinstance(setting, dict):
        options = setting
    else:
        raise SandboxConfigError(f'{where}: "sandbox" must be a mode ({_MODES_TEXT}) or an object')
    chosen = (
        _mode(mode, None) if mode is not None else _mode(options.get("mode", "off"), f"{where}: sandbox.mode")
    )
    roots = options.get("writableRoots", [])
    if not isinstance(roots, list) or not all(isinstance(root, str) for root in roots):
        raise SandboxConfigError(f"{where}: sandbox.writableRoots must be a list of folder paths")
    resolved: list[str] = []
    for root in roots if chosen != "off" else ():  # unused while off: no reason to stop
        path = os.path.realpath(os.path.join(cwd, os.path.expanduser(root)))
        if not os.path.isdir(path):
            raise SandboxConfigError(
                f"{where}: sandbox.writableRoots: {root} is not an existing folder; create it or take it out"
            )
        resolved.append(path)
    network = options.get("network", "off")
    hosts: tuple[str, ...] = ()
    if isinstance(network, list):
        if not all(isinstance(host, str) and host.strip() and " " not in host.strip() for host in network):
            raise SandboxConfigError(
                f'{where}: sandbox.network must be "off", "on" or a list of host names (["pypi.org", "*.github.com"])'
            )
        hosts = tuple(host.strip() for host in network)
    elif network not in ("off", "on", False, True):
        raise SandboxConfigError(f'{where}: sandbox.network must be "off", "on" or a list of allowed hosts')
    fence_mcp = options.get("mcp", False)
    if not isinstance(fence_mcp, bool):
        raise SandboxConfigError(f"{where}: sandbox.mcp must be true or false")
    agent = os.path.realpath(agent_dir)
    return SandboxPolicy(
        fence_mcp=fence_mcp,
        mode=chosen,
        cwd=os.path.realpath(cwd),
        writable_roots=tuple(resolved),
        protected=(agent, os.path.join(agent, TRUST_FILE)),
        network=network in ("on", True),
        allowed_hosts=hosts,
    )


@functools.cache
def _mechanism() -> tuple[str | None, str | None]:
    """The program that fences commands here, or why this machine cannot (checked once per process)."""
    if sys.platform == "darwin":
        from tau.tools.sandbox_macos import SANDBOX_EXEC

        if os.path.exists(SANDBOX_EXEC):
            return SANDBOX_EXEC, None
        return None, f"the sandbox needs {SANDBOX_EXEC}, which is missing here: use --sandbox off"
    if sys.platform != "linux":
        return (
            None,
            f"the sandbox needs Linux (bubblewrap) or macOS; {sys.platform} is not supported: use --sandbox off",
        )
    return find_bwrap()


def checked_sandbox_policy(
    setting: Any, cwd: str, agent_dir: str, *, mode: str | None = None
) -> tuple[SandboxPolicy, str | None]:
    """:func:`sandbox_policy`, and the bubblewrap program that will enforce it (``None`` when off);
    raises :class:`SandboxConfigError` too when this machine cannot fence commands."""
    policy = sandbox_policy(setting, cwd, agent_dir, mode=mode)
    if not policy.fenced:
        return policy, None
    bwrap, problem = _mechanism()
    if problem is not None:
        raise SandboxConfigError(problem)
    return policy, bwrap


def build_sandbox(setting: Any, cwd: str, agent_dir: str, *, mode: str | None = None) -> Sandbox:
    """The session's sandbox; when it cannot be what it should, a broken one (``problem`` set)
    that refuses every command and write."""
    try:
        policy = sandbox_policy(setting, cwd, agent_dir, mode=mode)
    except SandboxConfigError as error:
        return Sandbox(SandboxPolicy(mode="read-only", cwd=os.path.realpath(cwd)), problem=str(error))
    if not policy.fenced:
        return Sandbox(policy)
    from tau.tools.sandbox import which

    found = which("bwrap") if sys.platform == "linux" else None
    if found is None:
        bwrap, problem = _mechanism()
        return Sandbox(policy, problem=problem, bwrap=bwrap or "bwrap")
    # The session's command server, started now, is the check that bubblewrap works here (one
    # bubblewrap started, not a probe and then the server). When it cannot start, the probe says
    # why; a bubblewrap that works without it fences each command on its own.
    # The start is seen through when the sandbox's problem is first read: tau goes on loading
    # meanwhile.
    sandbox = Sandbox(policy, bwrap=found)

    def failure(reason: str) -> str | None:
        return _mechanism()[1]

    sandbox.start_server(wait=False, on_failure=failure)
    return sandbox

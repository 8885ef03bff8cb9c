"""The fence on macOS: ``sandbox-exec`` with a profile generated from the :class:`SandboxPolicy`.

Untested on a Mac (tau's tests run on Linux, where the profile's text and arguments are checked).

The profile denies everything, then allows what a command needs to run (processes, reading the
disk, the terminal devices, system information) and writing the private temporary folder and the
policy's writable folders; the protected paths inside them (``.tau``, ``.pi``, ``.git/hooks``,
``.git/config``, the agent folder) are denied again after that, since a later rule wins in a
Seatbelt profile. Paths never appear in the profile's text: each is a parameter (``-D NAME=path``)
the profile names with ``(param "NAME")``, so no path needs quoting. The network is denied unless
``sandbox.network`` is ``on``; a list of allowed hosts needs the Linux proxy and is refused here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tau.tools.sandbox import SandboxPolicy

__all__ = ["SANDBOX_EXEC", "seatbelt_command", "seatbelt_profile"]

SANDBOX_EXEC: Final = "/usr/bin/sandbox-exec"

_BASE = """\
(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow file-read*)
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow file-ioctl (regex #"^/dev/tty") (regex #"^/dev/ttys") (literal "/dev/ptmx"))
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper")
    (regex #"^/dev/tty") (regex #"^/dev/ttys") (literal "/dev/ptmx") (regex #"^/dev/fd/"))
"""


def seatbelt_profile(policy: SandboxPolicy, temporary: str) -> tuple[str, list[tuple[str, str]]]:
    """The profile for ``policy`` with ``temporary`` as the private temporary folder, and its
    parameters (name, path) in order."""
    params: list[tuple[str, str]] = [("TMPDIR", temporary)]
    lines = [_BASE.rstrip("\n")]
    writable = ['(subpath (param "TMPDIR"))']
    for index, root in enumerate(policy.writable()):
        name = f"WRITABLE_ROOT_{index}"
        params.append((name, root))
        writable.append(f'(subpath (param "{name}"))')
    lines.append(f"(allow file-write* {' '.join(writable)})")
    protected = []
    for index, path in enumerate(policy.read_only_inside()):
        name = f"READ_ONLY_{index}"
        params.append((name, path))
        protected.append(f'(subpath (param "{name}"))')
    if protected:  # after the allow: the later rule wins
        lines.append(f"(deny file-write* {' '.join(protected)})")
    if policy.network:
        lines.append("(allow network*)")
        lines.append("(allow system-socket)")
    return "\n".join(lines) + "\n", params


def seatbelt_command(policy: SandboxPolicy, argv: Sequence[str], temporary: str) -> list[str]:
    """``argv`` under ``sandbox-exec`` with the policy's profile. Raises ``ValueError`` for a list
    of allowed hosts (it needs the Linux proxy)."""
    if policy.proxied:
        raise ValueError('sandbox.network as a list of hosts needs Linux for now; use "off" or "on" on macOS')
    profile, params = seatbelt_profile(policy, temporary)
    defines = [argument for name, path in params for argument in ("-D", f"{name}={path}")]
    return [SANDBOX_EXEC, "-p", profile, *defines, *argv]

"""The fence around the agent's commands: what they may write, whether they reach the network.

A :class:`Sandbox` holds the session's :class:`SandboxPolicy` (it can change while the session runs:
RPC's ``set_sandbox``) and is shared by everything that must obey it: the shell operations wrap each
command in bubblewrap (:meth:`Sandbox.command`), the ``write`` and ``edit`` tools ask
:meth:`Sandbox.write_refusal` before touching a file.

Under bubblewrap a command sees the whole disk read-only, a private ``/dev`` and ``/proc``, a private
temporary folder (``$TMPDIR``, writable, removed when tau ends), and, in ``workspace-write``, the
working folder and the configured roots writable. tau's own configuration (``.tau``, ``.pi``, the
agent folder) and ``.git/hooks`` and ``.git/config`` stay read-only inside a writable root, so a fenced
command cannot give itself more rights or plant code that runs outside later. The command runs in new
user, pid (and, with the network off, network) namespaces with every capability dropped;
``--die-with-parent`` ends the whole pid namespace with the shell, so nothing it started in the
background survives the call even if it left the process group.

A sandbox that could not be set up (an unknown mode, a missing bubblewrap) carries its ``problem``:
every command and every write is then refused with it, never run unfenced.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from msgspec import Struct

from tau.errors import TauError

if TYPE_CHECKING:
    import asyncio

    from tau.agent.tool import AgentTool
    from tau.tools.sandbox_proxy import SandboxProxy
    from tau.tools.sandbox_server import SandboxServer

__all__ = [
    "PROTECTED_NAMES",
    "SANDBOX_MODES",
    "EscalationDecision",
    "EscalationRequest",
    "Sandbox",
    "SandboxGrant",
    "SandboxMode",
    "SandboxPolicy",
    "SandboxUnavailable",
    "fenced_replacement",
    "find_bwrap",
]

SandboxMode: TypeAlias = Literal["off", "read-only", "workspace-write"]
SANDBOX_MODES: Final[tuple[SandboxMode, ...]] = ("off", "read-only", "workspace-write")

# Inside every writable root these stay read-only: tau's and pi's project configuration, and what
# git runs by itself later (hooks, and the config that could point core.hooksPath elsewhere).
PROTECTED_NAMES: Final = (".tau", ".pi")
PROTECTED_GIT_NAMES: Final = ("hooks", "config")
# Of those, the folders that stand in for themselves when missing (an empty read-only folder).
_FOLDER_NAMES: Final = frozenset((*PROTECTED_NAMES, "hooks"))

_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)


class SandboxUnavailable(TauError):
    """The fence cannot be put up; the message is one line saying what to install or enable."""


class SandboxPolicy(Struct, frozen=True):
    """What fenced commands may do. Paths are absolute and resolved (symbolic links followed).

    ``cwd``: the working folder (writable in ``workspace-write``); ``writable_roots``: the other
    writable folders; ``protected``: files and folders read-only whatever else says (the agent
    folder, the trust file); ``network``: whether commands reach the network."""

    mode: SandboxMode = "off"
    cwd: str = ""
    writable_roots: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    network: bool = False
    allowed_hosts: tuple[str, ...] = ()
    granted_roots: tuple[str, ...] = ()  # writable by an approved escalation, in either fenced mode
    fence_mcp: bool = False  # ``sandbox.mcp``: stdio MCP servers run under the fence too

    @property
    def proxied(self) -> bool:
        """Whether commands reach the network only through tau's proxy, to ``allowed_hosts``."""
        return self.fenced and not self.network and bool(self.allowed_hosts)

    def network_text(self) -> str:
        if self.network:
            return "on"
        if self.allowed_hosts:
            return (
                "only "
                + ", ".join(self.allowed_hosts)
                + " (HTTP(S) through a proxy set in HTTP_PROXY/HTTPS_PROXY)"
            )
        return "off"

    @property
    def fenced(self) -> bool:
        return self.mode != "off"

    def writable(self) -> tuple[str, ...]:
        """The folders fenced commands may write (besides the private temporary folder)."""
        if self.mode == "read-only":
            return self.granted_roots
        if self.mode != "workspace-write":
            return ()
        return tuple(dict.fromkeys((self.cwd, *self.writable_roots, *self.granted_roots)))

    def read_only_inside(self) -> tuple[str, ...]:
        """Every path kept read-only inside the writable folders, whether it exists or not."""
        paths = list(self.protected)
        for root in self.writable():
            paths += [os.path.join(root, name) for name in PROTECTED_NAMES]
            paths += [os.path.join(root, ".git", name) for name in PROTECTED_GIT_NAMES]
        return tuple(dict.fromkeys(paths))

    def describe(self) -> str:
        """One line for the system prompt: the mode, what may be written, the network."""
        if not self.fenced:
            return "Sandbox: off (commands run with the user's full rights)."
        if self.mode == "read-only" and not self.granted_roots:
            where = "nothing except the temporary folder $TMPDIR"
        else:
            where = ", ".join(self.writable()) + " and the temporary folder $TMPDIR"
        network = self.network_text()
        return (
            f"Sandbox: {self.mode}. Commands and file edits may write {where}; "
            f".tau, .pi, .git/hooks and .git/config stay read-only. Network: {network}. "
            "When a command fails because of the sandbox and needs more, call bash again with "
            '"escalate": {"reason": ..., "writableRoots": [...], "network": "on" or [hosts]} to ask the user.'
        )


EscalationDecision: TypeAlias = Literal["once", "session", "denied"]


class SandboxGrant(Struct, frozen=True):
    """More rights asked for by the model (``escalate`` of the bash tool): folders to write, the
    network (all of it, or more allowed hosts)."""

    writable_roots: tuple[str, ...] = ()
    network: bool = False
    allowed_hosts: tuple[str, ...] = ()

    def widen(self, policy: SandboxPolicy) -> SandboxPolicy:
        """``policy`` with these rights added."""
        import msgspec.structs

        return msgspec.structs.replace(
            policy,
            granted_roots=tuple(dict.fromkeys((*policy.granted_roots, *self.writable_roots))),
            network=policy.network or self.network,
            allowed_hosts=tuple(dict.fromkeys((*policy.allowed_hosts, *self.allowed_hosts))),
        )

    def covered_by(self, policy: SandboxPolicy) -> bool:
        """Whether ``policy`` already gives every right asked for."""
        writable = policy.writable()
        return (
            all(any(_inside(root, folder) for folder in writable) for root in self.writable_roots)
            and (policy.network or not self.network)
            and (policy.network or all(host in policy.allowed_hosts for host in self.allowed_hosts))
        )

    def describe(self) -> str:
        parts = []
        if self.writable_roots:
            parts.append("write " + ", ".join(self.writable_roots))
        if self.network:
            parts.append("use the network")
        elif self.allowed_hosts:
            parts.append("reach " + ", ".join(self.allowed_hosts))
        return " and ".join(parts) or "nothing more"

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {}
        if self.writable_roots:
            data["writableRoots"] = list(self.writable_roots)
        if self.network:
            data["network"] = "on"
        elif self.allowed_hosts:
            data["network"] = list(self.allowed_hosts)
        return data


class EscalationRequest(Struct, frozen=True):
    """The model asks for ``grant`` to run ``command``, because ``reason``."""

    grant: SandboxGrant
    reason: str
    command: str
    tool_call_id: str = ""

    def question(self) -> str:
        """What the user is asked, on one line (a dialog's title shows one)."""
        command = " ".join(self.command.split())
        if len(command) > 200:
            command = command[:199] + "…"
        reason = " ".join(self.reason.split())
        return f"The model asks to {self.grant.describe()} ({reason}) for: {command}"


EscalationApprover: TypeAlias = "Callable[[EscalationRequest], Awaitable[EscalationDecision | None]]"
EscalationRecorder: TypeAlias = "Callable[[EscalationRequest, EscalationDecision, str], None]"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _resolved(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


class Sandbox:
    """The session's fence (see the module docstring); ``policy`` may be replaced at any time."""

    def __init__(
        self, policy: SandboxPolicy | None = None, *, problem: str | None = None, bwrap: str = "bwrap"
    ) -> None:
        self.policy = policy or SandboxPolicy()
        self._problem = problem
        self._pending: Callable[[], None] | None = None  # a server start to see through
        self._bwrap = bwrap
        self._lock = threading.Lock()
        self._temporary: str | None = None
        self._empty: str | None = None
        self._made: list[str] = []  # mount points bubblewrap created for missing protected folders
        # One proxy per list of hosts: a one-off grant's list never widens the session's.
        self._proxies: dict[tuple[str, ...], SandboxProxy] = {}
        self._proxy_folder: str | None = None
        self._server: SandboxServer | None = None
        self._server_key: object = None
        self._server_failed: object = None
        self.server_problem: str | None = None
        """Why the command server would not start (each command then has a bubblewrap of its own)."""
        self._server_lock: asyncio.Lock | None = None
        self._server_lock_loop: asyncio.AbstractEventLoop | None = None
        self._grants: list[SandboxGrant] = []
        self._once: ContextVar[SandboxPolicy | None] = ContextVar("tau_sandbox_once", default=None)
        self.approver: EscalationApprover | None = None
        """Asks the user about an escalation (set by the mode); ``None``: nobody to ask, refused."""
        self.recorder: EscalationRecorder | None = None
        """Writes every escalation's outcome to the session (set by the session)."""

    @property
    def problem(self) -> str | None:
        """Why the fence cannot be put up (every command and write is then refused), or ``None``.
        Sees a server start begun by ``start_server(wait=False)`` through first."""
        self._settle()
        return self._problem

    @problem.setter
    def problem(self, problem: str | None) -> None:
        self._pending = None
        self._problem = problem

    @property
    def known_problem(self) -> str | None:
        """:attr:`problem` as known now, without waiting for a server start under way (whose
        failure only :attr:`problem` sees)."""
        return self._problem

    def _settle(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending()

    @property
    def fenced(self) -> bool:
        """Whether commands are fenced (or refused because the fence is broken); a fenced policy
        answers without waiting for the server's start."""
        return self.policy.fenced or self.problem is not None

    def set_policy(self, policy: SandboxPolicy, *, bwrap: str | None = None) -> None:
        """Fence from now on by ``policy``, checked by the caller (with ``bwrap``, the program found
        working): a broken sandbox is whole again."""
        for grant in self._grants:  # what the user allowed for the session outlives a mode change
            policy = grant.widen(policy)
        self.policy = policy
        self.problem = None
        if bwrap is not None:
            self._bwrap = bwrap

    def to_json(self) -> dict[str, object]:
        """The fence as RPC's ``get_state`` reports it."""
        state: dict[str, object] = {
            "mode": self.policy.mode,
            "writableRoots": list(self.policy.writable()),
            "network": (
                "on"
                if self.policy.network
                else list(self.policy.allowed_hosts)
                if self.policy.allowed_hosts
                else "off"
            ),
        }
        if self.problem is not None:
            state["problem"] = self.problem
        return state

    # -- the write and edit tools ----------------------------------------------------------------

    def write_refusal(self, path: str) -> str | None:
        """Why a tool may not write ``path`` (an absolute path), or ``None`` when it may."""
        if self.problem is not None:
            return f"Refused: the sandbox is not working ({self.problem})."
        policy = self.policy
        if not policy.fenced:
            return None
        target = _resolved(path)
        for protected in policy.read_only_inside():
            if _inside(target, _resolved(protected)):
                return (
                    f"Refused by the sandbox ({policy.mode}): {path} is inside {protected}, which stays "
                    "read-only (tau's configuration, git hooks and config)."
                )
        roots = [*policy.writable(), *([self._temporary] if self._temporary else [])]
        if any(_inside(target, _resolved(root)) for root in roots):
            return None
        if policy.mode == "read-only":
            return (
                f"Refused by the sandbox (read-only): {path} cannot be written; nothing outside $TMPDIR can."
            )
        return (
            f"Refused by the sandbox (workspace-write): {path} is outside the writable folders "
            f"({', '.join(policy.writable())})."
        )

    # -- asking for more ---------------------------------------------------------------------------

    async def escalate(self, request: EscalationRequest) -> tuple[EscalationDecision, str]:
        """Ask for ``request`` (nothing is asked when the fence already allows it); the decision and
        a few words on who made it. A session grant widens the fence from now on; every outcome is
        handed to ``recorder``."""
        if request.grant.covered_by(self.current_policy()):
            return "session", "already allowed"
        decision: EscalationDecision | None
        if self.approver is None:
            decision, why = "denied", "nobody can approve it in this mode (print mode and batch refuse)"
        else:
            try:
                decision = await self.approver(request)
            except Exception as error:  # the UI failed: nobody said yes
                decision = None
                why = f"the question could not be asked ({error})"
            else:
                why = "the user answered" if decision is not None else "nobody can approve it in this mode"
            if decision is None:
                decision = "denied"
        if decision == "session":
            self._grants.append(request.grant)
            self.policy = request.grant.widen(self.policy)
        if self.recorder is not None:
            self.recorder(request, decision, why)
        return decision, why

    @contextlib.contextmanager
    def widened_once(self, grant: SandboxGrant) -> Iterator[None]:
        """Within the block (this task and what it awaits), commands run with ``grant`` added."""
        token = self._once.set(grant.widen(self.policy))
        try:
            yield
        finally:
            self._once.reset(token)

    def current_policy(self) -> SandboxPolicy:
        """The policy commands started now run by (a one-off grant included)."""
        return self._once.get() or self.policy

    # -- commands --------------------------------------------------------------------------------

    def command(self, argv: Sequence[str], cwd: str) -> list[str]:
        """``argv`` (to run in ``cwd``) as it runs under the fence; ``argv`` itself when off.

        Raises :class:`SandboxUnavailable` when the sandbox is broken."""
        if self.problem is not None:
            raise SandboxUnavailable(self.problem)
        policy = self.current_policy()
        if not policy.fenced:
            return list(argv)
        if sys.platform == "darwin":  # sandbox-exec (untested on a Mac)
            from tau.tools.sandbox_macos import seatbelt_command

            temporary = self.temporary_folder()
            try:
                return seatbelt_command(policy, ["/usr/bin/env", f"TMPDIR={temporary}", *argv], temporary)
            except ValueError as error:
                raise SandboxUnavailable(str(error)) from None
        if policy.proxied:
            argv = [*inner_command(), "run", self.proxy_socket(policy), "--", *argv]
        return [*self._bwrap_arguments(policy, cwd), "--", *argv]

    async def command_server(self) -> SandboxServer | None:
        """The session's long-lived fenced command server for the current policy (started again
        when the policy or what must be mounted read-only changed), or ``None`` when each command
        runs under a bubblewrap of its own: not fenced, a one-off grant, or a server that would not
        start here. Raises :class:`SandboxUnavailable` when broken."""
        import asyncio

        if self.problem is not None:
            raise SandboxUnavailable(self.problem)
        if not self.policy.fenced or self._once.get() is not None or sys.platform != "linux":
            return None
        loop = asyncio.get_running_loop()
        if self._server_lock is None or self._server_lock_loop is not loop:
            self._server_lock, self._server_lock_loop = asyncio.Lock(), loop
        async with self._server_lock:
            server = self.start_server()
            if server is not None and not server.usable_from(loop):
                self._stop_server()
                server = self.start_server()
                if server is not None and not server.usable_from(loop):
                    return None
            return server

    def start_server(
        self, *, wait: bool = True, on_failure: Callable[[str], str | None] | None = None
    ) -> SandboxServer | None:
        """Start the command server for the current policy now, unless one for it runs (a session
        starts it at once: it is then the check that bubblewrap works here, and the first command
        does not wait for it). ``None`` when it cannot start; :attr:`server_problem` says why.

        ``wait=False`` returns at once; the start is seen through when :attr:`problem` is next
        read, and a failure then makes ``on_failure(reason)`` the sandbox's problem (when it
        returns one; ``None`` keeps the sandbox, each command under a bubblewrap of its own)."""
        from tau.tools.sandbox_server import SandboxServer, ServerUnavailable

        self._settle()
        policy = self.policy
        if not policy.fenced or self._problem is not None:
            return None
        proxy = self.proxy_socket(policy) if policy.proxied else None
        arguments = self._bwrap_arguments(policy, policy.cwd)
        key = (policy, tuple(arguments))
        server = self._server
        if server is not None and self._server_key == key and server.alive:
            return server
        self._stop_server()
        if self._server_failed == key:
            return None
        server = SandboxServer(arguments, inner_command(), proxy)

        def failed(reason: str) -> None:
            if self._server is server:
                self._server = None
            self._server_failed = key
            self.server_problem = reason
            if on_failure is not None:
                self._problem = on_failure(reason)

        try:
            server.launch()
        except ServerUnavailable as error:
            failed(str(error))
            return None
        self._server, self._server_key = server, key

        def finish() -> None:
            try:
                server.wait_up()
            except ServerUnavailable as error:
                failed(str(error))

        if not wait:
            self._pending = finish
            return server
        finish()
        return self._server

    def _stop_server(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()

    def proxy_socket(self, policy: SandboxPolicy) -> str:
        """The unix socket of the proxy to ``policy.allowed_hosts`` (started on first use)."""
        from tau.tools.sandbox_proxy import HostList, SandboxProxy

        with self._lock:
            proxy = self._proxies.get(policy.allowed_hosts)
            if proxy is None:
                if self._proxy_folder is None:
                    self._proxy_folder = private_folder("tau-sandbox-proxy-")
                    atexit.register(self.close)
                folder = private_folder("", self._proxy_folder)
                proxy = SandboxProxy(HostList(policy.allowed_hosts), folder)
                proxy.start()
                self._proxies[policy.allowed_hosts] = proxy
            return proxy.path

    def temporary_folder(self) -> str:
        """The private temporary folder of fenced commands (created on first use, gone at exit)."""
        with self._lock:
            if self._temporary is None or not os.path.isdir(self._temporary):
                self._temporary = private_folder("tau-sandbox-")
                atexit.register(self.close)
            return self._temporary

    def _empty_folder(self) -> str:
        with self._lock:
            if self._empty is None or not os.path.isdir(self._empty):
                self._empty = private_folder("tau-sandbox-empty-")
                os.chmod(self._empty, 0o555)
            return self._empty

    def _bwrap_arguments(self, policy: SandboxPolicy, cwd: str) -> list[str]:
        temporary = self.temporary_folder()
        args = [
            self._bwrap,
            "--die-with-parent",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            *(() if policy.network else ("--unshare-net",)),
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--bind",
            temporary,
            temporary,
            "--setenv",
            "TMPDIR",
            temporary,
        ]
        # Outer folders first, so a writable folder inside another is bound over it.
        for root in sorted(policy.writable(), key=len):
            if os.path.isdir(root):
                args += ["--bind", root, root]
        writable = policy.writable()
        for path in policy.read_only_inside():
            if path in self._made and self._still_empty(path):
                # The mount point bubblewrap made earlier, empty still: the same stand-in (the same
                # arguments, so the session's command server goes on).
                args += ["--ro-bind", self._empty_folder(), path]
            elif os.path.lexists(path):
                real = _resolved(path)
                args += ["--ro-bind", real, real]
            elif self._needs_mount_point(path, writable):
                # A missing folder a command could create (and fill with settings or hooks): an empty
                # read-only folder stands there instead. bubblewrap makes the mount point on the disk
                # (an empty folder), taken away again when tau ends if it is still empty.
                args += ["--ro-bind", self._empty_folder(), path]
                with self._lock:
                    if path not in self._made:
                        self._made.append(path)
        return [*args, "--chdir", cwd]

    @staticmethod
    def _still_empty(path: str) -> bool:
        try:
            return not os.path.islink(path) and os.path.isdir(path) and not os.listdir(path)
        except OSError:
            return False

    @staticmethod
    def _needs_mount_point(path: str, writable: Sequence[str]) -> bool:
        if os.path.basename(path) not in _FOLDER_NAMES:
            return False  # a file (.git/config): git makes it with the repository, none to stand in
        parent = os.path.dirname(path)
        if os.path.basename(parent) == ".git" and not os.path.isdir(parent):
            return False  # no repository: nothing of git's to protect
        real_parent = _resolved(parent)
        return os.path.isdir(parent) and any(_inside(real_parent, _resolved(root)) for root in writable)

    def close(self) -> None:
        """Remove the private temporary folder and the empty mount points left in the working folders."""
        with self._lock:
            temporary, self._temporary = self._temporary, None
            empty, self._empty = self._empty, None
            made, self._made = self._made, []
            proxies, self._proxies = list(self._proxies.values()), {}
            proxy_folder, self._proxy_folder = self._proxy_folder, None
            server, self._server = self._server, None
        if server is not None:
            server.close()
        for proxy in proxies:
            proxy.close()
        for folder in (proxy_folder, temporary):
            if folder is None:
                continue
            try:
                os.rmdir(folder)  # usually left empty: no shutil (and its bz2 and lzma) to import
            except OSError:
                import shutil

                shutil.rmtree(folder, ignore_errors=True)
        if empty is not None:
            with contextlib.suppress(OSError):
                os.rmdir(empty)
        for path in made:
            with contextlib.suppress(OSError):  # no longer empty, or gone: leave it
                os.rmdir(path)


def private_folder(prefix: str, parent: str | None = None) -> str:
    """A new folder only the user can enter, named ``prefix`` and random letters, in ``parent``
    (default ``$TMPDIR`` or ``/tmp``): what ``tempfile.mkdtemp`` does, kept here because importing
    it (with ``shutil``, ``random``, ``bz2``, ``lzma``) cost 3-8 ms of every fenced start, measured
    with ``-X importtime`` against an unfenced one; a test holds it to ``mkdtemp``'s result."""
    if parent is None:
        parent = os.environ.get("TMPDIR") or "/tmp"
        if not os.path.isdir(parent):
            parent = "/tmp"
    while True:
        path = os.path.join(os.path.abspath(parent), prefix + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return path


def which(name: str) -> str | None:
    """The program ``name`` found on ``$PATH``: ``shutil.which``, kept here for the same measured
    reason as :func:`private_folder` (``shutil`` is most of those 3-8 ms); a test holds the two alike."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or os.curdir, name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    return None


def inner_command() -> list[str]:
    """How to start ``sandbox_inner`` inside the fence: this interpreter, isolated and without
    ``site`` (it imports nothing of tau), importing the module from its folder (appended to the
    path, after the standard library) so that its cached bytecode is loaded, not the source compiled
    at each start (~5 ms of CPU); the cache is written here, outside the fence, when missing."""
    folder = os.path.dirname(__file__)
    _cache_inner_bytecode(folder)
    start = f"import sys; sys.path.append({folder!r}); import sandbox_inner; sys.exit(sandbox_inner.main(sys.argv[1:]))"
    return [sys.executable, "-I", "-S", "-B", "-c", start]


_inner_cached = False


def _cache_inner_bytecode(folder: str) -> None:
    """Write ``sandbox_inner``'s bytecode cache when it is missing or older than the source (once
    per process; where the folder is not writable the server compiles the source as before)."""
    global _inner_cached
    if _inner_cached or sys.dont_write_bytecode:  # PYTHONDONTWRITEBYTECODE / -B: as Python's own imports
        return
    _inner_cached = True
    source = os.path.join(folder, "sandbox_inner.py")
    cached = os.path.join(folder, "__pycache__", f"sandbox_inner.{sys.implementation.cache_tag}.pyc")
    try:
        if os.stat(cached).st_mtime >= os.stat(source).st_mtime:
            return
    except OSError:
        pass
    import py_compile

    with contextlib.suppress(OSError, py_compile.PyCompileError):
        py_compile.compile(source, cfile=cached, doraise=True)


def fenced_replacement(replacement: AgentTool, builtin: AgentTool, sandbox: Sandbox, cwd: str) -> AgentTool:
    """``replacement`` (a built-in made another way: an editor's terminal, its file system) kept
    inside the fence: ``bash`` runs as the fenced ``builtin`` while the sandbox fences (another
    program's terminal cannot be fenced) and is declared as ``builtin`` is (``escalate`` while
    fenced), ``write`` and ``edit`` refuse what the fence keeps from being written before the
    replacement sees the call. Other tools are returned as they are."""
    import msgspec.structs

    from tau.agent.tool import AgentToolResult, ToolUpdate
    from tau.ai.abort import AbortSignal
    from tau.ai.types import JsonObject
    from tau.tools.errors import ToolError
    from tau.tools.paths import resolve_to_cwd

    name = replacement.name
    if name not in ("bash", "write", "edit"):
        return replacement

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        if name == "bash":
            chosen = builtin if sandbox.fenced else replacement
            return await chosen.execute(tool_call_id, args, signal, on_update)
        path = args.get("path")
        if (
            isinstance(path, str)
            and (refusal := sandbox.write_refusal(resolve_to_cwd(path, cwd))) is not None
        ):
            raise ToolError(refusal)
        return await replacement.execute(tool_call_id, args, signal, on_update)

    if name == "bash":  # declared as the built-in is: with ``escalate`` while the sandbox fences
        return msgspec.structs.replace(replacement, execute=execute, parameters=builtin.parameters)
    return msgspec.structs.replace(replacement, execute=execute)


def find_bwrap() -> tuple[str | None, str | None]:
    """The bubblewrap program to fence commands with, or why there is none usable here (one line
    saying what to do).

    Runs a trivial command under the same namespaces as a real call: a kernel or policy that
    refuses unprivileged user namespaces shows up here, at start, not at the first command."""
    import subprocess

    found = which("bwrap")
    if found is None:
        return None, f"the sandbox needs bubblewrap (bwrap), which is not installed: {_INSTALL_HINT}"
    probe = [found, "--unshare-user", "--unshare-pid", "--unshare-net", "--cap-drop", "ALL"]
    probe += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/sh", "-c", ":"]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"the sandbox cannot start bubblewrap ({found}): {error}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = said[-1] if said else f"exit code {done.returncode}"
        return None, (
            f"bubblewrap cannot create the sandbox ({reason}): enable unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1, or an AppArmor profile for bwrap) or use --sandbox off"
        )
    return found, None

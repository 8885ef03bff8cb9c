"""What runs inside the fence: the session's command server, and the network forwarder to tau's proxy.

This file is run by the interpreter tau runs on (``python -I -S``, importing it from its folder, so
that its cached bytecode is used rather than the source compiled at every start) inside bubblewrap,
so it imports nothing of tau and as little as it can (each import is start-up time of every
sandboxed session: no ``array``, fds are packed with ``int.to_bytes``).

``serve FD [SOCKET]``: the long-lived command server of a session (one bubblewrap for all its
calls). ``FD`` is a ``SOCK_SEQPACKET`` socket to tau. tau sends ``{"op": "run", "id", "argv",
"cwd", "env"}`` (in ``marshal``'s format: tau and this script run on the same interpreter, and
``json`` would double the server's start-up) with the command's stdin and output as passed
descriptors; the answers are small JSON objects. The server hands the call to an idle *call
leader* (forking one when none is idle; a leader serves call after call, so a session of sequential
commands forks nothing but the commands). A leader is a child subreaper (orphans of its calls
come to it, not to the server); it starts the command in a session and process group of its own, and reports ``{"id", "exit"}`` when
the command ends (``{"id", "exit", "ended": true}`` when the command left nothing running: the
call is then over, and tau asks for no end). ``{"op": "end", "id", "hard"}`` then ends the call: the leader sends SIGTERM to
the command's group (SIGKILL at once when ``hard``, as for an abort or a timeout), waits a short
grace, and SIGKILLs the group and every process left below it (the subreaper sees those that left
the group with ``setsid``) until none is left, then reports ``{"id", "ended": true}`` and is idle
again.
When tau's end of the socket closes, every call is ended hard and the server exits, which ends the
sandbox's pid namespace. With ``SOCKET``, a forwarder process (forked before anything else, so the
server stays single-threaded) serves the proxy variables given to every command.

``run SOCKET -- ARGV...``: listen on ``127.0.0.1`` (a port of the sandbox's own network namespace),
pass each connection to the unix socket ``SOCKET`` (tau's proxy, outside the fence), and run ``ARGV``
with ``HTTP_PROXY``/``HTTPS_PROXY`` (both spellings) naming the forwarder; exit as the command did.
"""

# ruff: noqa: SIM105  (try/except/pass: contextlib is an import the server's start-up would pay)
from __future__ import annotations

import marshal
import os
import signal
import socket
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _forward(client: socket.socket, path: str) -> None:
    import threading

    with client:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with upstream:
            try:
                upstream.connect(path)
            except OSError:
                return
            other = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            other.start()
            _pump(client, upstream)
            other.join()


def start_forwarder(path: str) -> str:
    """Listen on 127.0.0.1 and forward to ``path`` (in threads); the proxy URL to give commands."""
    import threading

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=_forward, args=(client, path), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def proxy_environment(env: dict[str, str], url: str) -> dict[str, str]:
    env = dict(env)
    for name in PROXY_VARIABLES:
        env[name] = url
    for name in NO_PROXY_VARIABLES:
        env[name] = ""
    return env


def run(path: str, argv: list[str]) -> int:
    url = start_forwarder(path)
    env = proxy_environment(dict(os.environ), url)
    pid = os.fork()
    if pid == 0:  # the command: in the process group and session the call made
        try:
            os.execvpe(argv[0], argv, env)
        except OSError as error:
            os.write(2, f"{argv[0]}: {error.strerror}\n".encode())
            os._exit(127)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, lambda number, frame: os.kill(pid, number))
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    return os.waitstatus_to_exitcode(status)


# -- the command server ------------------------------------------------------------------------

_GRACE_SECONDS = 0.5
_END_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)  # how the server asks a leader to end its call
_PR_SET_CHILD_SUBREAPER = 36
# Signals the command starts with at their default action (this interpreter ignores SIGPIPE and
# the server SIGCHLD; an ignored signal stays ignored across exec).
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGCHLD, signal.SIGTERM, signal.SIGUSR1, signal.SIGXFSZ)


class _End(Exception):
    def __init__(self, hard: bool) -> None:
        super().__init__()
        self.hard = hard


def _raise_end(number: int, frame: object) -> None:
    raise _End(number == signal.SIGUSR1)


def _send(control: socket.socket, call_id: int, field: str, value: object) -> None:
    """``{"id": call_id, field: value}`` to tau (value: an int or True); a gone tau is ignored."""
    shown = "true" if value is True else str(int(value))  # type: ignore[call-overload]
    try:
        control.send(f'{{"id": {int(call_id)}, "{field}": {shown}}}'.encode())
    except OSError:
        pass


def _send_ended(control: socket.socket, call_id: int, code: int) -> None:
    """``{"id": call_id, "exit": code, "ended": true}`` to tau: the call exited and is over."""
    try:
        control.send(f'{{"id": {int(call_id)}, "exit": {int(code)}, "ended": true}}'.encode())
    except OSError:
        pass


def _nothing_left(pgid: int) -> bool:
    """Whether the call's group is empty and no process is left below the leader (orphans of the
    call, ``setsid`` or not, come to the leader, a subreaper)."""
    _reap()
    return not _signal_group(pgid, 0) and not _children()


def _children() -> list[int]:
    pid = os.getpid()
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listing:
            return [int(child) for child in listing.read().split()]
    except OSError:  # a kernel without the listing: the table's parent fields
        found = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as stat:
                        if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                            found.append(int(name))
                except (OSError, ValueError, IndexError):
                    pass
        return found


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _signal_group(pgid: int, number: int) -> bool:
    """Send ``number`` to the group; whether it still has a process."""
    try:
        os.killpg(pgid, number)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _end_everything(pgid: int, hard: bool) -> None:
    """End the call's group and every process the leader is (or becomes) the parent of."""
    import time

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    if not hard and _signal_group(pgid, signal.SIGTERM):
        give_up_at = time.monotonic() + _GRACE_SECONDS
        while _signal_group(pgid, 0) and time.monotonic() < give_up_at:
            _reap()
            time.sleep(0.01)
    while True:
        alive = _signal_group(pgid, signal.SIGKILL)
        children = _children()
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except OSError:
                pass
        _reap()
        if not children and not alive:
            return
        time.sleep(0.001)


def _receive(channel: socket.socket) -> tuple[bytes, list[int]]:
    """One message and the descriptors passed with it (``b""`` when the other end is gone)."""
    while True:
        try:
            data, ancillary, _, _ = channel.recvmsg(1 << 20, socket.CMSG_SPACE(16 * 4))
            break
        except InterruptedError:
            continue
        except OSError:
            return b"", []
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += [
                int.from_bytes(payload[i : i + 4], sys.byteorder, signed=True)
                for i in range(0, len(payload) - 3, 4)
            ]
    return data, fds


def _spawn(request: dict[str, object], stdin: int, output: int, env: dict[str, str]) -> int:
    """Start the command in ``cwd`` in a session of its own (posix_spawn: no copy of this
    interpreter); its pid."""
    argv = [str(arg) for arg in request["argv"]]  # type: ignore[attr-defined]
    os.chdir(str(request["cwd"]))
    return os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin, 0),
            (os.POSIX_SPAWN_DUP2, output, 1),
            (os.POSIX_SPAWN_DUP2, output, 2),
            (os.POSIX_SPAWN_CLOSE, stdin),
            (os.POSIX_SPAWN_CLOSE, output),
        ],
        setsid=True,
        setsigmask=(),
        setsigdef=_DEFAULT_SIGNALS,
    )


def _leader(
    control: socket.socket, channel: socket.socket, env_extra: dict[str, str], prctl: Callable[..., int]
) -> None:
    """A call leader: it waits on ``channel`` for a call, runs it, ends it with all it left, tells
    the server it is free again (``b"idle"``), and waits for the next; exits when the server goes
    (never returns)."""
    code = 0
    try:
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        while True:
            signal.signal(signal.SIGTERM, _raise_end)
            signal.signal(signal.SIGUSR1, _raise_end)
            try:
                data, fds = _receive(channel)
            except _End:  # a signal meant for a call already over
                continue
            if not data:
                break
            if len(fds) != 2:
                for passed in fds:
                    os.close(passed)
                continue
            _lead(control, marshal.loads(data), fds, env_extra)
            try:
                channel.send(b"idle")
            except OSError:
                break
    except BaseException:
        code = 1
    os._exit(code)


def _lead(
    control: socket.socket, request: dict[str, object], fds: list[int], env_extra: dict[str, str]
) -> None:
    """Run one call (see :func:`_leader`)."""
    call_id = int(request["id"])  # type: ignore[call-overload]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    env.update(env_extra)
    stdin, output = fds
    hard = True
    pid = 0
    try:
        try:
            pid = _spawn(request, stdin, output, env)
        except OSError as error:
            os.write(output, f"{request['argv'][0]}: {error.strerror}\n".encode())  # type: ignore[index]
            _send(control, call_id, "exit", 127)
        finally:
            os.close(stdin)
            os.close(output)
        if pid:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            # An end asked for meanwhile waits (blocked, not lost) until it is known whether the
            # command left anything behind.
            signal.pthread_sigmask(signal.SIG_BLOCK, _END_SIGNALS)
            if _nothing_left(pid):
                # The usual call: nothing is left (no process in the command's group, none below
                # this leader), so the call is over with its exit: one answer, rather than tau
                # asking to end it and waiting for a second (four more wake-ups of three processes).
                for number in _END_SIGNALS:  # an end that came meanwhile has nothing to end
                    signal.signal(number, signal.SIG_IGN)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _END_SIGNALS)
                _send_ended(control, call_id, code)
                return
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _END_SIGNALS)
            _send(control, call_id, "exit", code)
        while True:
            signal.pause()
    except _End as end:
        hard = end.hard
    if pid:
        _end_everything(pid, hard)
    _send(control, call_id, "ended", True)


def _new_leader(
    control: socket.socket, env_extra: dict[str, str], prctl: Callable[..., int]
) -> tuple[int, socket.socket]:
    """Fork a call leader; its pid and the server's end of its channel."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGUSR1})
    pid = os.fork()
    if pid == 0:
        ours.close()
        signal.pthread_sigmask(signal.SIG_SETMASK, set())  # the handlers are set: let them come
        _leader(control, theirs, env_extra, prctl)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    theirs.close()
    return pid, ours


def serve(fd: int, proxy_socket: str | None) -> int:
    import ctypes  # once, before the first fork: a leader only calls prctl
    import select

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    env_extra: dict[str, str] = {}
    if proxy_socket is not None:
        ready_read, ready_write = os.pipe()
        if os.fork() == 0:  # the forwarder: threads live there, not in the server
            os.close(ready_read)
            url = start_forwarder(proxy_socket)
            os.write(ready_write, url.encode())
            os.close(ready_write)
            while True:
                signal.pause()
        os.close(ready_write)
        url = os.read(ready_read, 200).decode()
        os.close(ready_read)
        env_extra = proxy_environment({}, url)
    if "TMPDIR" in os.environ:  # bubblewrap's --setenv: the sandbox's private temporary folder
        env_extra["TMPDIR"] = os.environ["TMPDIR"]
    control = socket.socket(fileno=fd)
    control.set_inheritable(False)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # leaders are reaped by the kernel
    idle: list[tuple[int, socket.socket]] = [_new_leader(control, env_extra, prctl)]
    busy: dict[int, tuple[int, socket.socket]] = {}  # call id -> its leader
    calls: dict[socket.socket, int] = {}  # a busy leader's channel -> its call id
    try:
        control.send(b'{"ready": true}')
    except OSError:
        return 0
    while True:
        try:
            readable, _, _ = select.select([control, *calls], [], [])
        except InterruptedError:
            continue
        for channel in readable:
            if channel is control:
                continue
            try:
                said = channel.recv(16)
            except OSError:
                said = b""
            call_id = calls.pop(channel)
            leader = busy.pop(call_id, None)
            if said == b"idle" and leader is not None:
                idle.append(leader)
            else:
                channel.close()
        if control not in readable:
            continue
        data, fds = _receive(control)
        for passed in fds:
            os.set_inheritable(passed, False)
        if not data:  # tau is gone: end every call hard, and the leaders with it
            for pid, _ in busy.values():
                try:
                    os.kill(pid, signal.SIGUSR1)
                except OSError:
                    pass
            return 0
        request = marshal.loads(data)
        if request.get("op") == "run" and len(fds) == 2:
            leader = idle.pop() if idle else _new_leader(control, env_extra, prctl)
            try:
                packed = b"".join(passed.to_bytes(4, sys.byteorder, signed=True) for passed in fds)
                leader[1].sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, packed)])
            except OSError:
                leader[1].close()
                _send(control, request["id"], "exit", 127)
                _send(control, request["id"], "ended", True)
            else:
                busy[int(request["id"])] = leader
                calls[leader[1]] = int(request["id"])
            for passed in fds:
                os.close(passed)
            continue
        for passed in fds:
            os.close(passed)
        if request.get("op") == "end":
            found = busy.get(int(request.get("id", 0)))
            if found is not None:
                try:
                    os.kill(found[0], signal.SIGUSR1 if request.get("hard") else signal.SIGTERM)
                except OSError:
                    pass


def main(args: list[str]) -> int:
    if len(args) >= 4 and args[0] == "run" and args[2] == "--":
        return run(args[1], args[3:])
    if len(args) in (2, 3) and args[0] == "serve" and args[1].isdigit():
        return serve(int(args[1]), args[2] if len(args) == 3 else None)
    sys.stderr.write("usage: sandbox_inner.py run SOCKET -- ARGV... | serve FD [SOCKET]\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

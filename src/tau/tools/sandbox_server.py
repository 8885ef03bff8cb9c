"""One bubblewrap per session: the fenced command server, seen from tau.

Starting bubblewrap costs a few milliseconds of the machine's time per call (namespaces, mounts, a
new interpreter's worth of page faults for the shell's first exec); a session of many short commands
pays it each time. :class:`SandboxServer` starts it once, with ``sandbox_inner``'s ``serve`` inside
(see that module for the protocol), and runs every command of the session through it: the command's
output pipe and stdin are handed over as file descriptors, so output streams to tau directly.

A call keeps what a call under its own bubblewrap had: the command runs in a session and process
group of its own, the call's leader is a child subreaper, and ending the call (the command exited and
its output went quiet, an abort, a timeout) ends the group and every process left below the leader,
``setsid`` or not, before the call returns. When tau goes, ``--die-with-parent`` takes the sandbox's
pid namespace with it.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import itertools
import json
import marshal
import os
import socket
import subprocess
from collections.abc import Sequence
from typing import Any

__all__ = ["SandboxServer", "ServerUnavailable"]

_START_TIMEOUT = 10.0  # seconds for bubblewrap to put the fence up
# Run first inside the fence: say "up" on the control socket, then become the server.
_SAY_UP = 'printf up >&"$1" && shift && exec "$@"'

_END_TIMEOUT = 10.0


class ServerUnavailable(Exception):
    """The server could not be started or has gone; the caller runs the command another way."""


class _Call:
    __slots__ = ("ended", "exit_code", "exited")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.exited: asyncio.Future[None] = loop.create_future()
        self.ended: asyncio.Future[None] = loop.create_future()
        self.exit_code: int | None = None


class SandboxServer:
    """The command server under ``bwrap_argv`` (bubblewrap's arguments up to its ``--``)."""

    def __init__(self, bwrap_argv: Sequence[str], inner: Sequence[str], proxy_socket: str | None) -> None:
        self._bwrap_argv = list(bwrap_argv)
        self._inner = list(inner)
        self._proxy_socket = proxy_socket
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count(1)
        self.dead = False

    @property
    def alive(self) -> bool:
        return not self.dead and self._process is not None and self._process.poll() is None

    def usable_from(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether calls can be run from ``loop`` (the server answers on one loop only)."""
        if self._loop is None:
            self._attach(loop)
        return self._loop is loop and not loop.is_closed()

    def start(self) -> None:
        """:meth:`launch`, then :meth:`wait_up`."""
        self.launch()
        self.wait_up()

    def launch(self) -> None:
        """Start bubblewrap and the server in it, without waiting."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = str(theirs.fileno())
        try:
            argv = [*self._bwrap_argv, "--", "/bin/sh", "-c", _SAY_UP, "sh", fd, *self._inner, "serve", fd]
            if self._proxy_socket is not None:
                argv.append(self._proxy_socket)
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as error:
            ours.close()
            raise ServerUnavailable(str(error)) from None
        finally:
            theirs.close()
        self._control = ours

    def wait_up(self) -> None:
        """Wait (blocking, briefly) until a shell inside has said the fence is up, not for the
        interpreter to start: that happens while tau goes on, and a first request waits in the
        socket if it comes sooner. Raises :class:`ServerUnavailable` with bubblewrap's own last line
        when the fence cannot be put up."""
        ours = self._control
        if ours is None:
            raise ServerUnavailable("it was not started")
        ours.settimeout(_START_TIMEOUT)
        try:
            up = ours.recv(256)
        except OSError:
            up = b""
        if up != b"up":
            self._control = None
            ours.close()
            raise ServerUnavailable(self._failure())
        ours.setblocking(False)

    def _failure(self) -> str:
        process, self._process = self._process, None
        self.dead = True
        if process is None:
            return "it did not start"
        try:
            _, said = process.communicate(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            _, said = process.communicate()
        lines = said.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {process.returncode}"

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the server's answers on ``loop`` (the first call's)."""
        if self._loop is None and self._control is not None:
            self._loop = loop
            loop.add_reader(self._control.fileno(), self._readable)

    def _readable(self) -> None:
        control = self._control
        if control is None:
            return
        while True:
            try:
                data = control.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self._gone()
                return
            try:
                message: dict[str, Any] = json.loads(data)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            call = self._calls.get(message.get("id", -1))
            if call is None:
                continue
            if "exit" in message and not call.exited.done():
                call.exit_code = message["exit"]
                call.exited.set_result(None)
            if message.get("ended"):
                if not call.exited.done():
                    call.exited.set_result(None)
                if not call.ended.done():
                    call.ended.set_result(None)

    def _gone(self) -> None:
        """The server went away: every call is over (its pid namespace went with it)."""
        self.dead = True
        if self._loop is not None and self._control is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self._control.fileno())
        for call in self._calls.values():
            for future in (call.exited, call.ended):
                if not future.done():
                    future.set_result(None)

    def run(self, argv: Sequence[str], cwd: str, env: dict[str, str], stdin: int, output: int) -> int:
        """Start ``argv`` with ``stdin`` and ``output`` (stdout and stderr); the call's id."""
        control = self._control
        if control is None or not self.alive:
            raise ServerUnavailable("the sandbox's command server is not running")
        call_id = next(self._ids)
        assert self._loop is not None
        self._calls[call_id] = _Call(self._loop)
        request = {"op": "run", "id": call_id, "argv": list(argv), "cwd": cwd, "env": env}
        fds = array.array("i", [stdin, output])
        try:
            control.sendmsg([marshal.dumps(request)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        except OSError as error:
            del self._calls[call_id]
            raise ServerUnavailable(f"the sandbox's command server is not answering ({error})") from None
        return call_id

    async def wait_exit(self, call_id: int) -> None:
        await asyncio.shield(self._calls[call_id].exited)

    def exit_code(self, call_id: int) -> int | None:
        return self._calls[call_id].exit_code

    def has_exited(self, call_id: int) -> bool:
        return self._calls[call_id].exited.done()

    async def end(self, call_id: int, *, hard: bool) -> None:
        """End the call and what it left running; returns once all of it is gone."""
        call = self._calls.get(call_id)
        if call is None:
            return
        try:
            if not call.ended.done() and self._control is not None:
                with contextlib.suppress(OSError):
                    self._control.send(marshal.dumps({"op": "end", "id": call_id, "hard": hard}))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(call.ended), _END_TIMEOUT)
        finally:
            self._calls.pop(call_id, None)

    def close(self) -> None:
        """Stop the server: its calls end hard, and its pid namespace with them."""
        self.dead = True
        control, self._control = self._control, None
        if control is not None:
            if self._loop is not None and not self._loop.is_closed():
                with contextlib.suppress(Exception):
                    self._loop.remove_reader(control.fileno())
            control.close()
        # The server ends its calls and itself on the closed socket (and bubblewrap's
        # --die-with-parent covers tau's own end): nothing to wait for here.
        self._process = None
        for call in self._calls.values():
            for future in (call.exited, call.ended):
                if not future.done() and not future.get_loop().is_closed():
                    future.set_result(None)


def fd_pipe() -> tuple[int, int]:
    """A pipe whose ends are not inherited by what tau starts later."""
    read, write = os.pipe2(os.O_CLOEXEC)
    return read, write

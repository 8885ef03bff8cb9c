"""What runs inside the fence in front of a command: the network forwarder to tau's proxy.

This file is run as a script by the interpreter tau runs on (``python -I -S sandbox_inner.py``)
inside bubblewrap, so it imports nothing of tau and only what starts fast.

``run SOCKET -- ARGV...``: listen on ``127.0.0.1`` (a port of the sandbox's own network namespace),
pass each connection to the unix socket ``SOCKET`` (tau's proxy, outside the fence), and run ``ARGV``
with ``HTTP_PROXY``/``HTTPS_PROXY`` (both spellings) naming the forwarder; exit as the command did.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading

PROXY_VARIABLES = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _forward(client: socket.socket, path: str) -> None:
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


def main(args: list[str]) -> int:
    if len(args) >= 4 and args[0] == "run" and args[2] == "--":
        return run(args[1], args[3:])
    sys.stderr.write("usage: sandbox_inner.py run SOCKET -- ARGV...\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

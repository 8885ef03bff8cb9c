"""N local worker processes, each fed one task at a time by a thread of the driver.

A worker that dies mid-task (killed, out of memory) is replaced; its task is run once more on the
new worker, and reported ``error`` if that one dies too. A task is never handed to two workers at
once, so every id ends exactly once. A task that overruns its ``timeout_s`` by far (a hung tool
the session could not stop) has its worker killed and is reported ``timeout``.
"""

from __future__ import annotations

import contextlib
import json
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from tau import _process_groups as process_groups
from tau._import_path import python_module_command
from tau.batch.limit_server import LimitServer
from tau.batch.task_run import RunContext, error_result
from tau.batch.tasks import BatchTask

__all__ = ["run_local"]

_ATTEMPTS = 2
_HARD_TIMEOUT_GRACE_S = 30.0


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, header: str, log: IO[bytes]) -> None:
        with process_groups.spawning():
            self.process = subprocess.Popen(
                python_module_command("tau.batch.worker"),  # never the working folder on its import path
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                encoding="utf-8",
                start_new_session=True,  # a Ctrl+C goes to the driver, which stops the workers itself
            )
            # Registered: what is left of the group when the worker ends, or tau does, is ended.
            process_groups.started(self.process.pid)
        self.send(header)

    def send(self, line: str) -> bool:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            return False
        return True

    def receive(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def kill(self) -> None:
        process_groups.kill(self.process.pid)
        self.process.wait()

    def stop(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
        process_groups.close(self.process.pid)  # what the worker's tasks left running


def run_local(
    tasks: Iterator[BatchTask],
    context: RunContext,
    *,
    workers: int,
    limits: LimitServer | None,
    log_path: Path,
    on_result: Callable[[dict[str, Any]], None],
) -> None:
    """Run ``tasks`` on ``workers`` processes; ``on_result`` is called on this thread per task."""
    header = json.dumps({"context": context.to_wire(), "limits": limits.address if limits else None})
    lock = threading.Lock()
    finished: queue.Queue[dict[str, Any] | None] = queue.Queue()
    live: list[_Worker] = []
    stopping = threading.Event()

    def next_task() -> BatchTask | None:
        with lock:
            return next(tasks, None)

    def slot(log: IO[bytes]) -> None:
        worker: _Worker | None = None
        try:
            while not stopping.is_set() and (task := next_task()) is not None:
                result, worker = _run_on_worker(task, worker, header, log, context, limits, live, lock)
                finished.put(result)
        finally:
            if worker is not None:
                worker.stop()
            finished.put(None)

    with log_path.open("ab") as log:
        threads = [threading.Thread(target=slot, args=(log,), daemon=True) for _ in range(max(1, workers))]
        for thread in threads:
            thread.start()
        running = len(threads)
        try:
            while running:
                result = finished.get()
                if result is None:
                    running -= 1
                else:
                    on_result(result)
        finally:
            stopping.set()
            with lock:
                for worker in live:
                    worker.kill()
            for thread in threads:
                thread.join(timeout=5)


def _run_on_worker(
    task: BatchTask,
    worker: _Worker | None,
    header: str,
    log: IO[bytes],
    context: RunContext,
    limits: LimitServer | None,
    live: list[_Worker],
    lock: threading.Lock,
) -> tuple[dict[str, Any], _Worker | None]:
    started = time.monotonic()
    line = json.dumps(task.to_wire())  # ASCII: a lone surrogate in a prompt travels as its escape
    deaths: list[str] = []
    for attempt in range(1, _ATTEMPTS + 1):
        if worker is None or worker.process.poll() is not None:
            worker = _Worker(header, log)
            with lock:
                live.append(worker)
        timer = None
        timed_out = threading.Event()
        if task.timeout_s is not None:

            def overrun(target: _Worker = worker, flag: threading.Event = timed_out) -> None:
                flag.set()
                target.kill()

            timer = threading.Timer(task.timeout_s + _HARD_TIMEOUT_GRACE_S, overrun)
            timer.daemon = True
            timer.start()
        reply = worker.receive() if worker.send(line) else ""
        if timer is not None:
            timer.cancel()
        if reply:
            result: dict[str, Any] = json.loads(reply)
            result["attempts"] = attempt
            return result, worker
        code = worker.process.wait()
        with lock:
            live.remove(worker)
        if limits is not None:
            limits.book.release_holder(str(worker.process.pid))
        _remove_scratch(context, worker.process.pid)
        worker = None
        if timed_out.is_set():
            result = error_result(
                task.id,
                f"the task ran {task.timeout_s:g} s over its timeout and was killed",
                wall_seconds=time.monotonic() - started,
                attempts=attempt,
            )
            result["status"] = "timeout"
            result["stopReason"] = "timeout"
            return result, None
        deaths.append(_describe_exit(code))
    message = f"the worker process died running this task ({'; then '.join(deaths)})"
    return error_result(task.id, message, wall_seconds=time.monotonic() - started, attempts=_ATTEMPTS), None


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _remove_scratch(context: RunContext, pid: int) -> None:
    """The working copy a dead worker left behind (each worker has its own folder)."""
    if context.scratch is not None:
        shutil.rmtree(Path(context.scratch) / str(pid), ignore_errors=True)

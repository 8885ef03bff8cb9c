"""A local worker process: ``python -m tau.batch.worker``, one task at a time over its pipes.

The first line on stdin is the run's context (and where the limit book listens), every further
line a task; each result goes back as one line on stdout. Anything else that writes to stdout is
sent to stderr instead, so the pipe carries results only. The worker ends when the driver does.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from tau.batch.limits import LimitClient
from tau.batch.task_run import RunContext, run_task
from tau.batch.tasks import BatchTask


def main() -> int:
    # backslashreplace: a lone surrogate (a reply may end in one) becomes its JSON \u escape.
    results = os.fdopen(os.dup(1), "w", encoding="utf-8", errors="backslashreplace")
    os.dup2(2, 1)
    _end_with_parent()
    header: dict[str, Any] = json.loads(sys.stdin.readline() or "{}")
    context = RunContext.from_wire(header["context"])
    limits = _connect_limits(header.get("limits"))
    holder = str(os.getpid())
    for line in sys.stdin:
        task = BatchTask.from_wire(json.loads(line))
        result = run_task(task, context, limits, holder)
        results.write(json.dumps(result, ensure_ascii=False) + "\n")
        results.flush()
    return 0


def _connect_limits(address: dict[str, Any] | None) -> LimitClient | None:
    if not address:
        return None
    from tau.batch.limit_server import connect

    return connect(address)


def _end_with_parent() -> None:
    """Exit when the driver is gone (killed with ``kill -9`` it cannot stop its workers)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


if __name__ == "__main__":
    raise SystemExit(main())

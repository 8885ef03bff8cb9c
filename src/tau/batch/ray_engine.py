"""``--ray``: the same tasks as Ray tasks, on a running cluster or a Ray started for the run.

Ray schedules them and runs a task again once when its worker dies (``max_retries=1``); the
result, with the session file's text, comes back through Ray, never through a shared disk. The
limit book is a Ray actor that every task asks. ``ray`` is imported only here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from tau.batch.limits import LimitBook, ProviderLimit
from tau.batch.task_run import RunContext, error_result, run_task
from tau.batch.tasks import BatchTask

__all__ = ["MISSING_RAY", "run_ray"]

MISSING_RAY = "--ray needs Ray, which is not installed: pip install 'tau-agent[ray]'"
_TIMEOUT_GRACE_S = 30.0


class _ActorClient:
    """The limit book's actor, called like the book itself."""

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    def try_acquire(self, provider: str, holder: str) -> float:
        return float(_ray().get(self._actor.try_acquire.remote(provider, holder)))

    def release(self, provider: str, holder: str) -> None:
        _ray().get(self._actor.release.remote(provider, holder))


def _run_remote(task: dict[str, Any], context: dict[str, Any], book: Any) -> dict[str, Any]:
    # The task's id holds its slots: one id runs once at a time, and what a killed attempt still
    # held is given back when Ray runs it again (or by the driver once it has given up).
    holder = str(task["id"])
    client = None
    if book is not None:
        _ray().get(book.release_holder.remote(holder))
        client = _ActorClient(book)
    return run_task(BatchTask.from_wire(task), RunContext.from_wire(context), client, holder)


def run_ray(
    tasks: Iterator[BatchTask],
    context: RunContext,
    *,
    address: str,
    limits: dict[str, ProviderLimit],
    on_result: Callable[[dict[str, Any]], None],
) -> None:
    """Run ``tasks`` as Ray tasks, keeping about two per CPU of the cluster in flight."""
    try:
        ray = _ray()
    except ImportError:
        from tau.batch.errors import BatchUsageError

        raise BatchUsageError(MISSING_RAY) from None
    if not ray.is_initialized():
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            job_config=_job_config(ray),
        )
    book = ray.remote(LimitBook).remote({k: v.to_wire() for k, v in limits.items()}) if limits else None
    remote = ray.remote(max_retries=1, num_cpus=1)(_run_remote)
    wire = RunContext(
        agent_dir=context.agent_dir,
        default_model=context.default_model,
        limited_providers=context.limited_providers,
    ).to_wire()
    window = max(1, int(ray.cluster_resources().get("CPU", 1)) * 2)
    in_flight: dict[Any, tuple[BatchTask, float]] = {}
    pending = iter(tasks)
    exhausted = False
    while in_flight or not exhausted:
        while not exhausted and len(in_flight) < window:
            task = next(pending, None)
            if task is None:
                exhausted = True
                break
            in_flight[remote.remote(task.to_wire(), wire, book)] = (task, time.monotonic())
        if not in_flight:
            break
        ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=1.0)
        for ref in ready:
            task, started = in_flight.pop(ref)
            result = _collect(ray, ref, task, started)
            if book is not None:
                book.release_holder.remote(task.id)
            on_result(result)
        now = time.monotonic()
        for ref, (task, started) in list(in_flight.items()):
            if task.timeout_s is not None and now - started > task.timeout_s + _TIMEOUT_GRACE_S:
                ray.cancel(ref, force=True)
                del in_flight[ref]
                if book is not None:
                    book.release_holder.remote(task.id)
                result = error_result(
                    task.id,
                    f"the task ran {task.timeout_s:g} s over its timeout and was killed",
                    wall_seconds=now - started,
                )
                result.update(status="timeout", stopReason="timeout")
                on_result(result)


def _job_config(ray: Any) -> Any:
    """The run's job: Ray would put the driver's working folder (a project's, not trusted code) on
    every worker's import path, where a ``jiter.py`` would replace the real one. The tasks import
    tau and its dependencies only, from the installed environment; ``_client_job`` is how Ray
    itself leaves that folder out (for Ray Client jobs), and it changes nothing else of a job
    without a runtime environment."""
    return ray.job_config.JobConfig(_client_job=True)


def _ray() -> Any:
    """The ``ray`` module (untyped here: it is an optional extra)."""
    import importlib

    return importlib.import_module("ray")


def _collect(ray: Any, ref: Any, task: BatchTask, started: float) -> dict[str, Any]:
    try:
        result: dict[str, Any] = ray.get(ref)
    except ray.exceptions.RayError as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return error_result(
            task.id, f"the Ray task failed: {message}", wall_seconds=time.monotonic() - started, attempts=2
        )
    return result

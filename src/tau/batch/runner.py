"""``tau batch``: read the tasks, skip the finished ones, run the rest, write the summary. A run holds
its ``--out`` folder (``tau.batch.run_lock``): a second run on the same folder is refused."""

from __future__ import annotations

import json
import shutil
import signal
import tempfile
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from msgspec import Struct

from tau.batch.errors import BatchUsageError
from tau.batch.limits import LimitBook, ProviderLimit, parse_limits
from tau.batch.progress import Progress
from tau.batch.report import format_summary
from tau.batch.results import ResultLog, read_results, summarize
from tau.batch.task_run import RunContext
from tau.batch.tasks import BatchTask, TaskProblem, read_tasks

__all__ = ["BatchOptions", "BatchUsageError", "run_batch", "write_summary"]


class BatchOptions(Struct, frozen=True):
    tasks: Path
    out: Path
    workers: int = 1
    model: str | None = None
    ray_address: str | None = None
    """``None``: local workers; ``"local"``: a Ray started for the run; else a cluster address."""
    project_trust: bool | None = None
    """``-a`` (True) / ``-na`` (False); ``None``: saved decisions and ``defaultProjectTrust`` decide."""
    sandbox: str | None = None
    """``--sandbox``: the mode of tasks that name none."""


def run_batch(options: BatchOptions, *, err: TextIO, out: TextIO) -> int:
    """Run what is left of the task file; 0 when every line could run, 1 when some could not."""
    from tau.config.paths import agent_dir as default_agent_dir

    if not options.tasks.is_file():
        raise BatchUsageError(f"task file {options.tasks} not found")
    agent_dir = default_agent_dir()
    registry = _model_registry(agent_dir)
    if options.model is not None:
        problem = _model_problem(registry, options.model)
        if problem is not None:
            raise BatchUsageError(f"--model: {problem}")
    options.out.mkdir(parents=True, exist_ok=True)
    from tau.batch.run_lock import FolderInUseError, holding_out_folder

    try:
        with holding_out_folder(options.out):
            return _run_batch(options, registry, agent_dir, err=err, out=out)
    except FolderInUseError as exc:
        raise BatchUsageError(str(exc)) from None


def _run_batch(options: BatchOptions, registry: Any, agent_dir: Path, *, err: TextIO, out: TextIO) -> int:
    """The run itself, while this process holds the ``--out`` folder."""
    finished = {result["id"] for result in read_results(options.out)}
    tasks, problems, skipped = _pending_tasks(options, registry, finished)
    for bad_line in problems:
        err.write(f"tau: {options.tasks.name} line {bad_line.line}: {bad_line.message}\n")
    if skipped:
        err.write(f"tau: {skipped} task(s) already in {options.out / 'results.jsonl'}; skipped\n")
    limits, warnings = parse_limits(_limits_setting(agent_dir, options.project_trust))
    warnings += _trust_file_problems(options, agent_dir)
    for warning in warnings:
        err.write(f"tau: warning: {warning}\n")
    if tasks:
        _run(options, tasks, limits, str(agent_dir), err)
    summary = write_summary(options.out)
    out.write(format_summary(summary))
    out.flush()
    return 1 if problems else 0


def write_summary(out_dir: Path) -> dict[str, Any]:
    from tau._shared_file import write_file_atomic

    summary = summarize(read_results(out_dir))
    # Replaced in one step: a reader never sees half a summary.
    write_file_atomic(out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    return summary


def _run(
    options: BatchOptions,
    tasks: list[BatchTask],
    limits: dict[str, ProviderLimit],
    agent_dir: str,
    err: TextIO,
) -> None:
    scratch = tempfile.mkdtemp(prefix="tau-batch-")
    context = RunContext(
        agent_dir=agent_dir,
        default_model=options.model,
        limited_providers=sorted(limits),
        scratch=scratch,
        project_trust=options.project_trust,
        default_sandbox=options.sandbox,
    )
    log = ResultLog(options.out)
    progress = Progress(err, len(tasks))

    def store(result: dict[str, Any]) -> None:
        progress.add(log.write(result))

    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        if options.ray_address is not None:
            from tau.batch.ray_engine import run_ray

            run_ray(iter(tasks), context, address=options.ray_address, limits=limits, on_result=store)
        else:
            from tau.batch.limit_server import LimitServer
            from tau.batch.local_engine import run_local

            server = LimitServer(LimitBook({k: v.to_wire() for k, v in limits.items()})) if limits else None
            run_local(
                iter(tasks),
                context,
                workers=options.workers,
                limits=server,
                log_path=options.out / "workers.log",
                on_result=store,
            )
    finally:
        signal.signal(signal.SIGTERM, previous)
        progress.finish()
        log.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _pending_tasks(
    options: BatchOptions, registry: Any, finished: set[str]
) -> tuple[list[BatchTask], list[TaskProblem], int]:
    tasks: list[BatchTask] = []
    problems: list[TaskProblem] = []
    skipped = 0
    model_problems: dict[str, str | None] = {}
    for item in read_tasks(options.tasks, base=options.tasks.parent):
        if isinstance(item, TaskProblem):
            problems.append(item)
            continue
        if item.id in finished:
            skipped += 1
            continue
        if item.model is not None:
            if item.model not in model_problems:
                model_problems[item.model] = _model_problem(registry, item.model)
            problem = model_problems[item.model]
            if problem is not None:
                problems.append(TaskProblem(item.line, f"task {item.id!r}: {problem}"))
                continue
        tasks.append(item)
    return tasks, problems, skipped


def _model_registry(agent_dir: Path) -> Any:
    from tau.accounts.auth_storage import AuthStorage
    from tau.accounts.model_registry import ModelRegistry
    from tau.config.paths import models_path

    return ModelRegistry(AuthStorage.create(agent_dir), models_path(agent_dir))


def _model_problem(registry: Any, spec: str) -> str | None:
    from tau.accounts.model_resolver import ModelResolutionError, resolve_cli_model

    try:
        resolve_cli_model(registry, spec, allow_custom_id=False)
    except ModelResolutionError as exc:
        return str(exc)
    return None


def _trust_file_problems(options: BatchOptions, agent_dir: Path) -> list[str]:
    """A damaged trust.json, said once here: the workers then trust no task folder by it."""
    if options.project_trust is not None:
        return []
    from tau.config.project_trust import ProjectTrust

    trust = ProjectTrust(str(agent_dir))
    trust.saved(str(options.tasks.parent))
    return trust.warnings


def _limits_setting(agent_dir: Path, project_trust: bool | None) -> object:
    """``batch.limits`` of the user's settings, with the run's folder's own over them only when that
    folder is trusted (``-a`` / ``-na``, a saved decision, ``defaultProjectTrust``; nobody is asked)."""
    import os

    from tau.config.project_trust import ProjectTrust
    from tau.config.settings import SettingsManager

    cwd = os.getcwd()
    settings = SettingsManager.create(cwd, agent_dir, project=False)
    trust = ProjectTrust(str(agent_dir), override=project_trust, default=settings.default_project_trust)
    if trust.is_trusted(cwd):
        settings = SettingsManager.create(cwd, agent_dir)
    section = settings.get("batch")
    return section.get("limits") if isinstance(section, dict) else None

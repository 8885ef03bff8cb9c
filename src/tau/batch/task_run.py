"""Run one task where the worker is: working copy, setup, one SDK session, check, patch.

``run_task`` is what a local worker process and a Ray task both call. It returns the result line
of ``results.jsonl`` plus the session file's text under ``"session"`` (the driver writes it to
``DIR/sessions/<id>.jsonl``), so nothing is assumed on a disk the driver shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from msgspec import Struct, field

from tau.agent.events import TurnEnd
from tau.ai.types import AssistantMessage
from tau.batch.limits import LimitClient, limited_stream_fn
from tau.batch.tasks import BatchTask
from tau.batch.workspace import WorkingCopy, WorkspaceError

__all__ = ["RunContext", "error_result", "run_task"]

Status = Literal["passed", "failed", "error", "timeout", "budget"]

_COMMAND_TIMEOUT_S = 3600.0
_ABORT_GRACE_S = 10.0
_CHECK_OUTPUT_CHARS = 2000
_LENGTH_WITHOUT_CHECK = (
    "the last reply stopped at the output-token limit, and the task has no check to judge the work"
)


class RunContext(Struct, frozen=True):
    """What every task of a run shares: where tau's configuration is, and the run's defaults."""

    agent_dir: str
    default_model: str | None = None
    limited_providers: list[str] = field(default_factory=list)
    scratch: str | None = None
    """The folder for working copies (``None``: the system's temporary folder)."""
    project_trust: bool | None = None
    """``-a`` (True) / ``-na`` (False): whether the working copies' own ``.tau`` files load."""
    default_sandbox: str | None = None
    """``--sandbox``: the mode of tasks that name none (``None``: the ``sandbox`` setting)."""

    def to_wire(self) -> dict[str, Any]:
        return {
            "agent_dir": self.agent_dir,
            "default_model": self.default_model,
            "limited_providers": self.limited_providers,
            "scratch": self.scratch,
            "project_trust": self.project_trust,
            "default_sandbox": self.default_sandbox,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> RunContext:
        return cls(**data)


def error_result(
    task_id: str, message: str, *, wall_seconds: float = 0.0, attempts: int = 1
) -> dict[str, Any]:
    """The result line of a task that could not run to an end."""
    return {
        "id": task_id,
        "status": "error",
        "error": message,
        "checkExitCode": None,
        "turns": 0,
        "tokens": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "cost": 0.0,
        "wallSeconds": round(wall_seconds, 3),
        "stopReason": None,
        "outputLimitReached": False,
        "finalText": None,
        "patch": "",
        "attempts": attempts,
    }


def run_task(task: BatchTask, context: RunContext, limits: LimitClient | None, holder: str) -> dict[str, Any]:
    """Run ``task`` to its end and describe how it went; never raises for the task's own failures."""
    started = time.monotonic()
    scratch = os.path.join(context.scratch, holder) if context.scratch is not None else None
    if scratch is not None:
        os.makedirs(scratch, exist_ok=True)
    copy = WorkingCopy(Path(tempfile.mkdtemp(prefix=f"{task.id}-", dir=scratch)))
    try:
        return _run(task, context, limits, holder, copy, started)
    except WorkspaceError as exc:
        return error_result(task.id, str(exc), wall_seconds=time.monotonic() - started)
    except Exception as exc:  # one task's surprise must not end the worker
        return error_result(task.id, f"{type(exc).__name__}: {exc}", wall_seconds=time.monotonic() - started)
    finally:
        copy.remove()


def _run(
    task: BatchTask,
    context: RunContext,
    limits: LimitClient | None,
    holder: str,
    copy: WorkingCopy,
    started: float,
) -> dict[str, Any]:
    if task.cwd is not None:
        copy.copy_from(task.cwd)
    else:
        assert task.repo is not None and task.commit is not None  # read_tasks checked it
        copy.clone(task.repo, task.commit)
    command_timeout = task.timeout_s or _COMMAND_TIMEOUT_S
    if task.setup:
        setup = copy.run(task.setup, timeout=command_timeout)
        if setup.exit_code != 0:
            message = f"setup exited with {setup.exit_code}: {_tail(setup.output)}"
            return error_result(task.id, message, wall_seconds=time.monotonic() - started)
    copy.snapshot()
    session_dir = copy.root / "session"
    outcome = asyncio.run(_run_session(task, context, limits, holder, str(copy.path), str(session_dir)))
    result = outcome.result
    status: Status
    if outcome.error is not None:
        status = "error"
    elif outcome.timed_out:
        status = "timeout"
    elif outcome.budget is not None:
        status = "budget"
    elif outcome.stop_reason == "length" and task.check:
        status = "passed"  # the work may be done all the same: the check decides
    else:
        status = "passed" if outcome.stop_reason == "stop" else "error"
        if outcome.stop_reason == "length":
            result["error"] = _LENGTH_WITHOUT_CHECK
    result["outputLimitReached"] = outcome.stop_reason == "length"
    if task.check and status != "error":
        check = copy.run(task.check, timeout=command_timeout)
        result["checkExitCode"] = check.exit_code
        result["checkOutput"] = check.output[-_CHECK_OUTPUT_CHARS:]
        if status == "passed" and check.exit_code != 0:
            status = "failed"
    result["status"] = status
    result["patch"] = copy.patch()
    result["wallSeconds"] = round(time.monotonic() - started, 3)
    return result


def _project_trusted(task: BatchTask, context: RunContext, cwd: str) -> bool:
    """Whether the working copy's own extensions, settings, skills and prompts load: decided as for
    ``tau -p`` (nobody is asked): ``-a`` / ``-na``, else the decision saved for the task's ``cwd``
    folder (a clone has none), else ``defaultProjectTrust: "always"``. The copy's files are what
    count, so whatever ``setup`` added is protected too."""
    from tau.config.project_trust import ProjectTrust
    from tau.config.settings import SettingsManager

    default = SettingsManager.create(cwd, context.agent_dir, project=False).default_project_trust
    trust = ProjectTrust(context.agent_dir, override=context.project_trust, default=default)
    return trust.is_trusted(cwd, saved_under=task.cwd)


class _TaskOutcome(Struct):
    result: dict[str, Any]
    error: str | None = None
    timed_out: bool = False
    budget: str | None = None
    stop_reason: str | None = None


async def _run_session(
    task: BatchTask, context: RunContext, limits: LimitClient | None, holder: str, cwd: str, session_dir: str
) -> _TaskOutcome:
    from tau.accounts.model_resolver import ModelResolutionError, is_valid_thinking_level, resolve_cli_model
    from tau.runtime.errors import AgentSessionError
    from tau.runtime.sdk import NO_MODELS_MESSAGE, create_agent_session
    from tau.runtime.services import ResourceOptions, create_agent_session_services
    from tau.session.manager import SessionManager

    outcome = _TaskOutcome(result=error_result(task.id, ""))
    outcome.result["error"] = None
    services = create_agent_session_services(
        cwd=cwd,
        agent_dir=context.agent_dir,
        project_trusted=_project_trusted(task, context, cwd),
        resource_options=ResourceOptions(
            system_prompt=task.system_prompt,
            append_system_prompts=[task.append_system_prompt] if task.append_system_prompt else [],
        ),
        sandbox_mode=task.sandbox or context.default_sandbox,
    )
    if (problem := services.sandbox.problem) is not None:  # never run the task unfenced
        outcome.error = outcome.result["error"] = f"the sandbox cannot be used: {problem}"
        services.sandbox.close()
        return outcome
    thinking = task.thinking if task.thinking and is_valid_thinking_level(task.thinking) else None
    model = None
    model_spec = task.model or context.default_model
    if model_spec:
        try:
            resolved = resolve_cli_model(
                services.model_registry, model_spec, thinking=task.thinking, allow_custom_id=False
            )
        except ModelResolutionError as exc:
            outcome.error = outcome.result["error"] = str(exc)
            services.sandbox.close()
            return outcome
        model, thinking = resolved.model, resolved.thinking_level or thinking
    created = create_agent_session(
        services=services,
        session_manager=SessionManager.create(cwd, session_dir, agent_dir=context.agent_dir),
        model=model,
        thinking_level=thinking,
        tools=task.tools,
    )
    session = created.session
    if session.model is None:
        outcome.error = outcome.result["error"] = NO_MODELS_MESSAGE
        services.sandbox.close()
        return outcome
    if limits is not None and context.limited_providers and session.agent.stream_fn is not None:
        session.agent.stream_fn = limited_stream_fn(
            session.agent.stream_fn, set(context.limited_providers), limits, holder
        )
        # A task's sub-agents (the task tool) share the same limits.
        session.child_stream_wrapper = lambda inner: limited_stream_fn(
            inner, set(context.limited_providers), limits, holder
        )
    turns = 0
    spent = 0.0
    aborting: list[asyncio.Future[None]] = []

    def watch(event: object) -> None:
        nonlocal turns, spent
        if not isinstance(event, TurnEnd):
            return
        turns += 1
        spent += event.message.usage.cost.total
        if outcome.budget is None and event.message.tool_calls():
            if task.max_turns is not None and turns >= task.max_turns:
                outcome.budget = "max_turns"
            elif task.max_cost is not None and spent >= task.max_cost:
                outcome.budget = "max_cost"
            if outcome.budget is not None:
                aborting.append(asyncio.ensure_future(session.abort()))

    session.subscribe(watch)
    extension_errors: list[str] = []
    await session.bind_extensions(None, on_error=lambda report: extension_errors.append(str(report)))
    run = asyncio.ensure_future(session.prompt(task.prompt, expand_prompt_templates=False))
    try:
        done, _pending = await asyncio.wait({run}, timeout=task.timeout_s)
        if not done:
            outcome.timed_out = True
            await session.abort()
            done, _pending = await asyncio.wait({run}, timeout=_ABORT_GRACE_S)
            if not done:
                run.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await run
    except AgentSessionError as exc:
        outcome.error = str(exc)
    await session.catch_up_events()
    for pending in aborting:
        await pending
    _describe(session.messages, outcome)
    if outcome.budget is None and task.max_cost is not None and outcome.result["cost"] > task.max_cost:
        outcome.budget = "max_cost"
    if outcome.timed_out:
        outcome.result["stopReason"] = "timeout"
    elif outcome.budget is not None:
        outcome.result["stopReason"] = outcome.budget
    if outcome.error is None and outcome.stop_reason == "error":
        outcome.error = outcome.result["error"] = _last_error(session.messages) or "the model request failed"
    elif outcome.error is not None:
        outcome.result["error"] = outcome.error
    outcome.result["finalText"] = session.get_last_assistant_text()
    if extension_errors:
        outcome.result["extensionErrors"] = extension_errors
    outcome.result["model"] = f"{session.model.provider}/{session.model.id}"
    session_file = session.session_file
    await session.dispose()
    services.sandbox.close()  # the fence's command server and folders: a worker runs many tasks
    if session_file and os.path.isfile(session_file):
        outcome.result["session"] = Path(session_file).read_text(encoding="utf-8")
    return outcome


def _describe(messages: list[Any], outcome: _TaskOutcome) -> None:
    """Turns, tokens, cost and the last stop reason of the session's replies."""
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    turns = 0
    last: AssistantMessage | None = None
    for message in messages:
        if not isinstance(message, AssistantMessage):
            continue
        if outcome.budget is not None and message.stop_reason == "aborted":
            continue  # the request the budget stopped is not a turn the task had
        turns += 1
        last = message
        usage = message.usage
        tokens["input"] += usage.input
        tokens["output"] += usage.output
        tokens["cacheRead"] += usage.cache_read
        tokens["cacheWrite"] += usage.cache_write
        cost += usage.cost.total
    outcome.result.update(turns=turns, tokens=tokens, cost=round(cost, 6))
    outcome.stop_reason = last.stop_reason if last is not None else None
    outcome.result["stopReason"] = outcome.stop_reason


def _last_error(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message.error_message
    return None


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"

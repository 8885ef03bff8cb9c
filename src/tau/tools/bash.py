"""The ``bash`` tool: run a shell command, stream its output, keep the tail, spill the rest.

The model gets the last 2000 lines / 50 KB of merged stdout+stderr; when that cuts anything, the
complete raw output is in a spill file whose path the result names. Memory stays bounded however
much the command prints (see :mod:`tau.tools.output_accumulator`).

Where tau differs from pi: spill files live in the tool set's :class:`SpillDirectory` and are deleted
with it; the preview is cleaned of terminal escape codes (the spill file is not).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from msgspec import Struct, field, structs

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject, JsonSchemaSampling, TextContent
from tau.tools.errors import ToolAborted, ToolError, raise_if_aborted
from tau.tools.operations import BashOperations, CommandAborted, CommandTimedOut
from tau.tools.output_spill import SpillDirectory, default_spill_directory
from tau.tools.paths import resolve_to_cwd
from tau.tools.sandbox import EscalationRequest, Sandbox, SandboxGrant, SandboxUnavailable
from tau.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

if TYPE_CHECKING:
    from tau.tools.output_accumulator import OutputAccumulator, OutputSnapshot

UPDATE_INTERVAL_SECONDS = 0.1

BASH_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Bash command to execute"},
        "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
    },
    "required": ["command"],
}

ESCALATE_PARAMETER: JsonObject = {
    "type": "object",
    "description": (
        "Only after a command failed because of the sandbox: ask the user for the rights it needs, "
        "then run it with them (the user may refuse). Give the reason and what is needed."
    ),
    "properties": {
        "reason": {"type": "string", "description": "Why the command needs this, in one sentence"},
        "writableRoots": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Existing folders the command must write",
        },
        "network": {
            # "on" or a list of hosts, said without anyOf: tau's plain validator checks this schema,
            # so a fenced session does not import jsonschema (~50 ms); the tool checks the string.
            "type": ["string", "array"],
            "items": {"type": "string"},
            "description": '"on" for the whole network, or the host names the command must reach',
        },
    },
    "required": ["reason"],
    "additionalProperties": False,
}

BASH_ESCALATE_PARAMETERS: JsonObject = {
    **BASH_PARAMETERS,
    "properties": {**BASH_PARAMETERS["properties"], "escalate": ESCALATE_PARAMETER},
}
"""The parameters while commands are fenced: ``escalate`` asks the user for more rights."""

BASH_DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr merged. "
    f"Output is truncated to the last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB "
    "(whichever is hit first); when truncated, the full output is saved to a file whose path is "
    "given, so you can read or grep it. Optionally provide a timeout in seconds."
)


class SpawnContext(Struct, dict=True):
    """What a spawn hook may rewrite before the command starts."""

    command: str
    cwd: str
    env: dict[str, str] = field(default_factory=dict)


SpawnHook = Callable[[SpawnContext], SpawnContext]
SessionEnvironment = Callable[[], Mapping[str, "str | None"]]
"""The session's variables for a command about to start; ``None`` unsets an inherited one."""

SESSION_ENV_GUIDELINE = (
    "The environment of bash commands tells the current session, provider, model and reasoning level "
    "(TAU_SESSION_ID, TAU_PROVIDER, TAU_MODEL, TAU_REASONING_LEVEL, and their PI_* twins): read them "
    "instead of guessing from this prompt."
)


STRUCTURED_OUTPUT_MAX_BYTES = 1024 * 1024
"""How much of the output a result's ``structuredContent`` holds (pi's limit), for programs such as
codemode scripts."""


def _details(snapshot: OutputSnapshot) -> dict[str, Any] | None:
    if not snapshot.truncation.truncated:
        return None
    details: dict[str, Any] = {"truncation": snapshot.truncation.to_json()}
    if snapshot.full_output_path:
        details["fullOutputPath"] = snapshot.full_output_path
    return details


def _format_output(snapshot: OutputSnapshot, last_line_bytes: int) -> str:
    """The snapshot text plus, when cut, a note with the shown range and the spill file."""
    text = snapshot.text or "(no output)"
    t = snapshot.truncation
    if not t.truncated:
        return text
    total = t.total_lines
    if t.last_line_partial:
        note = (
            f"Showing last {format_size(t.output_bytes)} of line {total} "
            f"(line is {format_size(last_line_bytes)})."
        )
    else:
        first = total - t.output_lines + 1
        note = f"Showing lines {first}-{total} of {total}"
        note += f" ({format_size(t.max_bytes)} limit)." if t.truncated_by == "bytes" else "."
    if snapshot.full_output_path:
        note += f" Full output: {snapshot.full_output_path}"
    return f"{text}\n\n[{note}]"


class _Updates:
    """Streams snapshots to ``on_update`` at most once per interval; a pending one fires later."""

    def __init__(self, accumulator: OutputAccumulator, on_update: ToolUpdate | None) -> None:
        self._acc = accumulator
        self._on_update = on_update
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        if self._on_update is not None:
            self._on_update(AgentToolResult(content=[], details=None))  # pi's first update: empty
            self._last = time.monotonic()

    def data_arrived(self) -> None:
        if self._on_update is None or self._timer is not None:
            return
        wait = self._last + UPDATE_INTERVAL_SECONDS - time.monotonic()
        if wait <= 0:
            self._send()
        else:
            self._timer = asyncio.get_running_loop().call_later(wait, self._send)

    def _send(self) -> None:
        self._timer = None
        if self._on_update is None:
            return
        snapshot = self._acc.snapshot()
        details = _details(snapshot) or {}  # pi's updates always carry details
        self._on_update(AgentToolResult(content=[TextContent(snapshot.text)], details=details))
        self._last = time.monotonic()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def final(self) -> None:
        self.stop()
        self._send()


def _grant(value: object, cwd: str) -> SandboxGrant:
    """The rights an ``escalate`` argument asks for; a ``ToolError`` the model reads when malformed."""
    if not isinstance(value, dict) or not isinstance(value.get("reason"), str) or not value["reason"].strip():
        raise ToolError('escalate must be an object with a "reason" (and "writableRoots" and/or "network")')
    roots: list[str] = []
    for root in value.get("writableRoots") or []:
        if not isinstance(root, str):
            raise ToolError("escalate.writableRoots must be a list of folder paths")
        path = os.path.realpath(resolve_to_cwd(root, cwd))
        if not os.path.isdir(path):
            raise ToolError(f"escalate.writableRoots: {root} is not an existing folder")
        roots.append(path)
    network = value.get("network")
    hosts: tuple[str, ...] = ()
    if isinstance(network, list) and all(isinstance(h, str) and h.strip() for h in network):
        hosts = tuple(h.strip() for h in network)
    elif network not in (None, "on"):
        raise ToolError('escalate.network must be "on" or a list of host names')
    if not roots and network is None:
        raise ToolError("escalate asks for nothing: name the writableRoots and/or the network needed")
    return SandboxGrant(writable_roots=tuple(roots), network=network == "on", allowed_hosts=hosts)


def bash_parameters(*, escalate: bool) -> JsonObject:
    """The bash tool's parameters, with ``escalate`` or without."""
    return BASH_ESCALATE_PARAMETERS if escalate else BASH_PARAMETERS


def declared_for_sandbox(tool: AgentTool, sandbox: Sandbox) -> AgentTool:
    """``tool`` (a bash tool built with ``sandbox``, or one kept inside it by
    ``tau.tools.sandbox.fenced_replacement``) declared for the sandbox's mode now: with ``escalate``
    while it fences, without it while it is off. The same tool when nothing changes."""
    parameters = bash_parameters(escalate=sandbox.fenced)
    if tool.parameters == parameters:
        return tool
    return structs.replace(tool, parameters=parameters)


def create_bash_tool(
    cwd: str,
    operations: BashOperations | None = None,
    *,
    spill: SpillDirectory | None = None,
    command_prefix: str | None = None,
    shell_path: str | None = None,
    spawn_hook: SpawnHook | None = None,
    bin_dir: str | None = None,
    sanitize: bool = True,
    session_env: SessionEnvironment | None = None,
    sandbox: Sandbox | None = None,
) -> AgentTool:
    """The bash tool for ``cwd``.

    ``spill`` owns the spill files (default: a process-wide folder removed at exit). ``bin_dir`` is
    put first on PATH (the agent's bin directory). ``command_prefix`` runs before every command
    (e.g. ``shopt -s expand_aliases``). ``sanitize=False`` passes escape codes through as pi does.
    ``session_env`` is asked as each command starts (so a model switch reaches the next command);
    its variables are set before ``spawn_hook`` sees the environment, and the system prompt then
    tells the model they are there.
    ``sandbox`` fences the commands (the local shell only: given ``operations`` run as they are).
    """
    local_shell: list[BashOperations] = []

    def shell() -> BashOperations:
        # The local shell's module (process groups, the sandbox's command server, output pieces)
        # loads with the first command: a run that never calls bash does not import it.
        if operations is not None:
            return operations
        if not local_shell:
            from tau.tools.shell_exec import LocalBashOperations

            local_shell.append(LocalBashOperations(shell_path=shell_path, sandbox=sandbox))
        return local_shell[0]

    # The model may ask for more rights while its commands are fenced: the schema has ``escalate``
    # then (``declared_for_sandbox`` follows a later change of mode); the call checks the fence again.
    fence = sandbox if operations is None else None
    parameters = bash_parameters(escalate=fence is not None and fence.fenced)

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        command = str(args["command"])
        timeout_arg = args.get("timeout")
        timeout: float | None = None
        if isinstance(timeout_arg, int | float) and not isinstance(timeout_arg, bool) and timeout_arg > 0:
            timeout = float(timeout_arg)
        if command_prefix:
            command = f"{command_prefix}\n{command}"
        env = dict(os.environ)
        if session_env is not None:
            for name, value in session_env().items():
                if value is None:
                    env.pop(name, None)
                else:
                    env[name] = value
        if bin_dir:
            env["PATH"] = os.pathsep.join(p for p in (bin_dir, env.get("PATH", "")) if p)
        context = SpawnContext(command=command, cwd=resolve_to_cwd(".", cwd), env=env)
        if spawn_hook is not None:
            context = spawn_hook(context)
        if not os.path.isdir(context.cwd):
            raise ToolError(f"Working directory does not exist: {context.cwd}")

        ops = shell()
        from tau.tools.output_accumulator import OutputAccumulator

        accumulator = OutputAccumulator(spill or default_spill_directory(), sanitize=sanitize)
        updates = _Updates(accumulator, on_update)

        def on_data(data: bytes) -> None:
            accumulator.feed(data)
            updates.data_arrived()

        once: SandboxGrant | None = None
        if args.get("escalate") is not None and (fence is None or not fence.fenced):
            # The schema is open (as pi's), so a call made with the fenced definition is refused here.
            raise ToolError(
                "Commands are not fenced now ('escalate' was unexpected): run it without escalate"
            )
        if fence is not None and args.get("escalate") is not None and fence.fenced:
            request = EscalationRequest(
                grant=_grant(args["escalate"], context.cwd),
                reason=str(args["escalate"].get("reason", "")),
                command=str(args["command"]),
                tool_call_id=tool_call_id,
            )
            decision, why = await fence.escalate(request)
            if decision == "denied":
                raise ToolError(
                    f"Escalation refused ({why}): the command was not run. Do the work inside the sandbox, "
                    "or tell the user what you need and why."
                )
            if decision == "once":
                once = request.grant

        updates.start()
        started = time.monotonic()
        status: str | None = None
        aborted = False
        try:
            with fence.widened_once(once) if once is not None and fence is not None else nullcontext():
                exit_code = await ops.exec(
                    context.command,
                    context.cwd,
                    on_data=on_data,
                    signal=signal,
                    timeout=timeout,
                    env=context.env,
                )
        except CommandAborted:
            exit_code, status, aborted = None, "Command aborted", True
        except CommandTimedOut as timed_out:
            exit_code, status = None, f"Command timed out after {timed_out.seconds:g} seconds"
        except SandboxUnavailable as broken:
            exit_code, status = None, f"Refused: the sandbox is not working ({broken})"
        finally:
            updates.stop()
            accumulator.finish()

        snapshot = accumulator.snapshot()
        if on_update is not None:
            updates.final()
        text = _format_output(snapshot, accumulator.last_line_bytes)
        if status is not None:
            shown = f"{text}\n\n" if snapshot.text or snapshot.truncation.truncated else ""
            raise (ToolAborted if aborted else ToolError)(shown + status)
        output, cut = accumulator.full_output(STRUCTURED_OUTPUT_MAX_BYTES)
        structured: dict[str, Any] = {"output": output, "truncated": cut}
        if cut and snapshot.full_output_path:
            structured["full_output_path"] = snapshot.full_output_path
        structured["exit_code"] = exit_code
        structured["wall_time_seconds"] = round(time.monotonic() - started, 1)
        if exit_code is not None and exit_code != 0:
            # As pi 1.6: a failed result rather than an exception, with the structured output.
            return AgentToolResult(
                content=[TextContent(f"{text}\n\nCommand exited with code {exit_code}")],
                details=_details(snapshot),
                structured_content=structured,
                is_error=True,
            )
        return AgentToolResult(
            content=[TextContent(text)], details=_details(snapshot), structured_content=structured
        )

    return AgentTool(
        name="bash",
        label="bash",
        description=BASH_DESCRIPTION,
        parameters=parameters,
        execute=execute,
        prompt_snippet="Execute bash commands (ls, grep, find, etc.)",
        constrained_sampling=JsonSchemaSampling("prefer"),
        prompt_guidelines=[SESSION_ENV_GUIDELINE] if session_env is not None else [],
    )

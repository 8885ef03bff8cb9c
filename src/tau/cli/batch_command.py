"""``tau batch``: run a JSONL file of tasks as headless sessions; ``tau batch report DIR``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tau.batch.runner import BatchOptions

__all__ = ["run_batch_command"]

HELP = """\
Usage:
  tau batch TASKS.jsonl --out DIR [--workers N] [--model PROVIDER/ID] [--sandbox MODE] [--ray [ADDRESS]]
  tau batch report DIR

Run every task of TASKS.jsonl (one JSON object per line) as its own headless session in its own
working copy, and write one line per finished task to DIR/results.jsonl, the session files to
DIR/sessions/<id>.jsonl and the totals to DIR/summary.json. Running again skips the ids already
in results.jsonl.

A task: "id", "prompt", and "cwd" (a folder, copied for the task) or "repo" + "commit" (cloned);
optional "model", "thinking", "tools", "system_prompt", "append_system_prompt", "max_turns",
"timeout_s", "max_cost", "sandbox" (off, read-only or workspace-write: how the agent's commands are
fenced), "setup" and "check" (shell commands run in the working copy before and after the agent,
never fenced; the check's exit code is the verdict). A fenced task cannot ask for more rights.

Options:
  --out DIR        Where the results go (required)
  --workers N      Local worker processes (default 2)
  --model SPEC     The model of tasks that name none (default: as for tau -p)
  --sandbox MODE   The sandbox of tasks that name none: off, read-only, workspace-write (default:
                   the sandbox setting)
  --ray [ADDRESS]  Run the tasks as Ray tasks: on the cluster at ADDRESS ("auto" for the one this
                   machine belongs to) or on a Ray started for the run; needs the ray extra
  -a, --approve    Trust the working copies: their .tau extensions, settings, skills and prompts load
  -na, --no-approve
                   Never load them (default: as tau -p: the task folder's saved trust decision,
                   else the defaultProjectTrust setting)
"""


def run_batch_command(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(HELP)
        return 0
    if argv[0] == "report":
        return _report(argv[1:])
    from tau.batch.errors import BatchUsageError
    from tau.batch.runner import run_batch

    try:
        options = _parse(argv)
        return run_batch(options, err=sys.stderr, out=sys.stdout)
    except BatchUsageError as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "tau: batch stopped; the finished tasks are in results.jsonl, run again to go on", file=sys.stderr
        )
        return 130


def _parse(argv: list[str]) -> BatchOptions:
    from tau.batch.errors import BatchUsageError
    from tau.batch.runner import BatchOptions
    from tau.tools.sandbox import SANDBOX_MODES

    values: dict[str, str] = {}
    positional: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        name, _eq, inline = arg.partition("=")
        if name in ("--out", "--workers", "--model", "--sandbox"):
            value = inline or (rest.pop(0) if rest else None)
            if value is None:
                raise BatchUsageError(f"{name} needs a value (see tau batch --help)")
            values[name] = value
        elif arg in ("-a", "--approve", "-na", "--no-approve"):
            values["trust"] = arg
        elif name == "--ray":
            address = inline or (rest.pop(0) if rest and _is_ray_address(rest[0]) else "local")
            values["--ray"] = address
        elif arg.startswith("-"):
            raise BatchUsageError(f"unknown option {arg} (see tau batch --help)")
        else:
            positional.append(arg)
    if len(positional) != 1:
        raise BatchUsageError("give one task file: tau batch TASKS.jsonl --out DIR")
    if "--out" not in values:
        raise BatchUsageError("--out DIR is required (where results.jsonl and the sessions go)")
    workers = str(values.get("--workers", "2"))
    if not workers.isdigit() or int(workers) < 1:
        raise BatchUsageError(f"--workers must be a whole number of at least 1, not {workers!r}")
    sandbox = values.get("--sandbox")
    if sandbox is not None and sandbox not in SANDBOX_MODES:
        raise BatchUsageError(f'unknown sandbox mode "{sandbox}"; use {", ".join(SANDBOX_MODES)}')
    return BatchOptions(
        tasks=Path(positional[0]),
        out=Path(values["--out"]),
        workers=int(workers),
        model=values.get("--model"),
        ray_address=values.get("--ray"),
        project_trust=None if "trust" not in values else values["trust"] in ("-a", "--approve"),
        sandbox=sandbox,
    )


def _is_ray_address(value: str) -> bool:
    return value in ("auto", "local") or "://" in value or ":" in value


def _report(argv: list[str]) -> int:
    if len(argv) != 1:
        print("tau: usage: tau batch report DIR", file=sys.stderr)
        return 1
    from tau.batch.report import format_summary
    from tau.batch.results import read_results, summarize

    out = Path(argv[0])
    if not (out / "results.jsonl").is_file():
        print(
            f"tau: {out / 'results.jsonl'} not found (run tau batch with --out {out} first)", file=sys.stderr
        )
        return 1
    sys.stdout.write(format_summary(summarize(read_results(out))))
    return 0

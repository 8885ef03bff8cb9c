"""``tau batch`` with the sandbox: a ``sandbox`` field per task and ``--sandbox`` for the others,
under real bubblewrap; a fenced task's escalation is refused (nobody to ask) and recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from batch_run import BatchRun, steps_prompt


def _outside(batch: BatchRun) -> Path:
    outside = batch.root / "outside"
    outside.mkdir(exist_ok=True)
    return outside


def _task(task_id: str, command: str, **fields: Any) -> dict[str, Any]:
    return {"id": task_id, "prompt": steps_prompt(["bash", command]), "cwd": "project", **fields}


def _session(batch: BatchRun, task_id: str) -> str:
    return (batch.root / "out" / "sessions" / f"{task_id}.jsonl").read_text()


def _run(batch: BatchRun, tasks: list[dict[str, Any]], *flags: str) -> dict[str, dict[str, Any]]:
    (batch.root / "project").mkdir(exist_ok=True)
    batch.write_tasks(tasks)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "1", "--model", "local/fake-model", *flags)
    assert done.returncode == 0, done.stderr
    return {result["id"]: result for result in batch.results()}


def test_a_task_sandbox_fences_its_commands_and_others_run_as_before(batch: BatchRun) -> None:
    outside = _outside(batch)
    tasks = [
        _task("fenced", f"echo in > here.txt && echo out > {outside}/fenced.txt", sandbox="workspace-write"),
        _task("free", f"echo out > {outside}/free.txt"),
    ]
    results = _run(batch, tasks)
    assert set(results) == {"fenced", "free"}
    assert not (outside / "fenced.txt").exists()
    assert (outside / "free.txt").read_text() == "out\n"
    assert "Read-only file system" in _session(batch, "fenced")


def test_the_run_sandbox_applies_to_tasks_that_name_none(batch: BatchRun) -> None:
    outside = _outside(batch)
    tasks = [
        _task("default", f"echo out > {outside}/default.txt"),
        _task("own", f"echo out > {outside}/own.txt", sandbox="off"),
    ]
    _run(batch, tasks, "--sandbox", "read-only")
    assert not (outside / "default.txt").exists()
    assert (outside / "own.txt").read_text() == "out\n"


def test_an_escalation_in_a_batch_task_is_refused_and_recorded(batch: BatchRun) -> None:
    outside = _outside(batch)
    request = {"reason": "the cache lives there", "writableRoots": [str(outside)]}
    task = {
        "id": "asks",
        "prompt": steps_prompt(["escalate", f"echo x > {outside}/asked.txt", request]),
        "cwd": "project",
        "sandbox": "workspace-write",
    }
    results = _run(batch, [task])
    assert not (outside / "asked.txt").exists()
    assert set(results) == {"asks"}
    text = _session(batch, "asks")
    entries = [json.loads(line) for line in text.splitlines()]
    [record] = [e["data"] for e in entries if e.get("customType") == "sandbox-escalation"]
    assert record["decision"] == "denied" and record["reason"] == "the cache lives there"
    assert "Escalation refused (nobody can approve it in this mode" in text


def test_an_unknown_sandbox_in_a_task_or_on_the_command_line_is_one_line(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    batch.write_tasks([{"id": "t", "prompt": "hi", "cwd": "project", "sandbox": "strict"}])
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert '"sandbox" must be one of off, read-only, workspace-write' in done.stderr
    done = batch.run("tasks.jsonl", "--out", "out", "--sandbox", "loose")
    assert done.returncode == 1 and done.stderr.strip() == (
        'tau: unknown sandbox mode "loose"; use off, read-only, workspace-write'
    )

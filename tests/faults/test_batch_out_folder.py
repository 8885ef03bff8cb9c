"""Two ``tau batch`` runs on one ``--out`` folder: the second is refused while the first holds it
(one line naming the folder and the other run), and goes ahead once the first has ended or was
killed with ``kill -9``. Each task is recorded once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_run import BatchRun, batch_run, tagged_prompt
from fault_campaign import TALLY

MODEL = ["--model", "local/fake-model", "--workers", "1"]


@pytest.fixture
def batch(tmp_path: Path) -> Iterator[BatchRun]:
    yield from batch_run(tmp_path)


def write_waiting_tasks(batch: BatchRun) -> Path:
    """Two tasks; the first waits in its bash call until the file ``release`` exists."""
    (batch.root / "project").mkdir()
    release = batch.root / "release"
    wait = f"while [ ! -e {release} ]; do sleep 0.02; done"
    batch.write_tasks(
        [
            {"id": "waits", "prompt": tagged_prompt("waits", ["bash", wait]), "cwd": "project"},
            {"id": "quick", "prompt": tagged_prompt("quick", ["text", "ok"]), "cwd": "project"},
        ]
    )
    return release


def start_holding(batch: BatchRun) -> subprocess.Popen[str]:
    """A first run, returned once it is inside its first task (so it holds the folder)."""
    first = batch.popen("tasks.jsonl", "--out", "out", *MODEL)
    deadline = time.monotonic() + 60
    while batch.responder.requests_by_task.get("waits", 0) == 0:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first run never started its task"
        time.sleep(0.02)
    return first


def refused(batch: BatchRun) -> None:
    TALLY.bad_inputs += 1
    second = batch.run("tasks.jsonl", "--out", "out", *MODEL)
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert second.returncode == 1, second
    assert "Traceback" not in second.stderr
    assert len(lines) == 1, second.stderr
    assert lines[0].startswith("tau: out is in use by another tau batch (pid "), lines[0]
    assert "quick" not in batch.responder.requests_by_task  # the refused run asked the model nothing


def recorded_once(batch: BatchRun) -> None:
    ids = sorted(result["id"] for result in batch.results())
    assert ids == ["quick", "waits"]
    assert sorted(p.name for p in (batch.root / "out" / "sessions").iterdir()) == [
        "quick.jsonl",
        "waits.jsonl",
    ]


def test_a_second_batch_on_the_same_out_is_refused_while_the_first_runs_and_works_after(
    batch: BatchRun,
) -> None:
    release = write_waiting_tasks(batch)
    first = start_holding(batch)
    try:
        refused(batch)
    finally:
        release.touch()
        _stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 0, stderr
    recorded_once(batch)
    assert not (batch.root / "out" / ".tau-batch.lock").exists()
    again = batch.run("tasks.jsonl", "--out", "out", *MODEL)
    assert again.returncode == 0, again.stderr
    assert "2 task(s) already in" in again.stderr
    recorded_once(batch)


def test_a_batch_killed_with_sigkill_does_not_keep_its_out_folder(batch: BatchRun) -> None:
    release = write_waiting_tasks(batch)
    first = start_holding(batch)
    refused(batch)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    assert (batch.root / "out" / ".tau-batch.lock").exists()  # left behind, and no obstacle
    release.touch()
    again = batch.run("tasks.jsonl", "--out", "out", *MODEL)
    assert again.returncode == 0, again.stderr
    recorded_once(batch)

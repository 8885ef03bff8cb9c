"""``tau batch`` when things go wrong: dead workers, a killed run, tasks over their limits."""

from __future__ import annotations

import json
import os
import signal
import time

from batch_run import BatchRun, steps_prompt, tagged_prompt


def test_a_worker_killed_mid_task_is_retried_once_then_reported_as_error(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    marker = batch.root / "killed-once"
    kill_once = f"test -e {marker} || {{ touch {marker}; kill -9 $PPID; }}; echo survived > out.txt"
    tasks = [
        {
            "id": "dies-once",
            "prompt": steps_prompt(["bash", kill_once]),
            "cwd": "project",
            "check": "test -e out.txt",
        },
        {"id": "dies-always", "prompt": steps_prompt(["bash", "kill -9 $PPID"]), "cwd": "project"},
        {"id": "fine", "prompt": steps_prompt(["text", "ok"]), "cwd": "project"},
    ]
    batch.write_tasks(tasks)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in batch.results()}
    assert sorted(results) == ["dies-always", "dies-once", "fine"]
    assert (results["dies-once"]["status"], results["dies-once"]["attempts"]) == ("passed", 2)
    assert results["dies-always"]["status"] == "error"
    assert results["dies-always"]["error"].startswith(
        "the worker process died running this task (killed by SIGKILL"
    )
    assert results["fine"]["status"] == "passed"


def test_a_killed_run_run_again_runs_only_the_unfinished_tasks(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    tasks = [
        {"id": f"t{i}", "prompt": tagged_prompt(f"t{i}", ["bash", "sleep 0.2"]), "cwd": "project"}
        for i in range(8)
    ]
    batch.write_tasks(tasks)
    run = batch.popen("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    results = batch.root / "out" / "results.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not results.exists() or results.read_text().count("\n") < 2):
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    first = {json.loads(line)["id"] for line in results.read_text().splitlines() if line.strip()}
    assert 2 <= len(first) < 8
    batch.responder.requests_by_task.clear()
    again = batch.run("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    assert again.returncode == 0, again.stderr
    assert f"{len(first)} task(s) already in" in again.stderr
    ids = [r["id"] for r in batch.results()]
    assert sorted(ids) == sorted(f"t{i}" for i in range(8))  # each exactly once
    assert not set(batch.responder.requests_by_task) & first  # finished tasks were not asked again


def test_tasks_over_their_timeout_turns_or_cost_end_with_that_status_and_a_session(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    loop = [["bash", "true"]] * 6
    tasks = [
        {"id": "slow", "prompt": steps_prompt(["bash", "sleep 30"]), "cwd": "project", "timeout_s": 1},
        {"id": "long", "prompt": steps_prompt(*loop), "cwd": "project", "max_turns": 2},
        {
            "id": "dear",
            "prompt": steps_prompt(*loop),
            "cwd": "project",
            "model": "local/pricey",
            "max_cost": 0.04,
        },
    ]
    batch.write_tasks(tasks)
    started = time.monotonic()
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "3", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    results = {r["id"]: r for r in batch.results()}
    assert (results["slow"]["status"], results["slow"]["stopReason"]) == ("timeout", "timeout")
    assert (results["long"]["status"], results["long"]["stopReason"], results["long"]["turns"]) == (
        "budget",
        "max_turns",
        2,
    )
    assert (results["dear"]["status"], results["dear"]["stopReason"]) == ("budget", "max_cost")
    assert results["dear"]["turns"] == 3 and abs(results["dear"]["cost"] - 0.045) < 1e-9
    for result in results.values():
        assert (batch.root / "out" / result["sessionFile"]).is_file()


def test_a_task_whose_last_reply_hit_the_output_limit_is_judged_by_its_check_and_says_so(
    batch: BatchRun,
) -> None:
    (batch.root / "project").mkdir()
    did_it = steps_prompt(["write", "out.txt", "made"], ["cut", "I wrote out.txt and then I went on and o"])
    tasks = [
        {"id": "done-anyway", "prompt": did_it, "cwd": "project", "check": "test -e out.txt"},
        {
            "id": "not-done",
            "prompt": steps_prompt(["cut", "Let me start by"]),
            "cwd": "project",
            "check": "test -e out.txt",
        },
        {"id": "no-check", "prompt": did_it, "cwd": "project"},
    ]
    batch.write_tasks(tasks)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in batch.results()}
    verdicts = {
        i: (r["status"], r["stopReason"], r["outputLimitReached"], r["checkExitCode"])
        for i, r in results.items()
    }
    assert verdicts == {
        "done-anyway": ("passed", "length", True, 0),
        "not-done": ("failed", "length", True, 1),
        "no-check": ("error", "length", True, None),
    }
    assert results["no-check"]["error"].startswith("the last reply stopped at the output-token limit")
    summary = json.loads((batch.root / "out" / "summary.json").read_text())
    assert (summary["passed"], summary["failed"], summary["error"], summary["outputLimitReached"]) == (
        1,
        1,
        1,
        3,
    )
    assert "at output limit  3" in done.stdout + done.stderr
    assert (
        "done-anyway: passed in" in done.stderr
        and "(the last reply stopped at the output-token limit)" in done.stderr
    )

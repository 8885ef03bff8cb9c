"""The provider limit of ``batch.limits`` holds across all workers of a run."""

from __future__ import annotations

from batch_run import BatchRun, steps_prompt


def test_a_concurrency_limit_of_two_holds_with_eight_workers(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    batch.settings({"retry": {"enabled": False}, "batch": {"limits": {"local": {"concurrency": 2}}}})
    batch.responder.delay = 0.1
    tasks = [{"id": f"t{i}", "prompt": steps_prompt(["bash", "true"]), "cwd": "project"} for i in range(8)]
    batch.write_tasks(tasks)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "8", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in batch.results()] == ["passed"] * 8
    assert batch.responder.most_in_flight == 2


def test_without_a_limit_the_workers_do_send_at_once(batch: BatchRun) -> None:
    """The other side of the test above: the fake server can see more than two at once."""
    (batch.root / "project").mkdir()
    batch.responder.delay = 0.2
    tasks = [{"id": f"t{i}", "prompt": steps_prompt(["text", "hi"]), "cwd": "project"} for i in range(8)]
    batch.write_tasks(tasks)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "4", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert batch.responder.most_in_flight > 2


def _delegating_task(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    children = [steps_prompt(["text", f"child {i}"]) for i in range(3)]
    batch.write_tasks(
        [{"id": "t0", "prompt": steps_prompt(["tasks", children]), "cwd": "project", "tools": ["task"]}]
    )


def test_sub_agents_of_a_task_are_held_to_the_provider_limit(batch: BatchRun) -> None:
    batch.settings({"retry": {"enabled": False}, "batch": {"limits": {"local": {"concurrency": 1}}}})
    batch.responder.delay = 0.2
    _delegating_task(batch)
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in batch.results()] == ["passed"]
    assert batch.responder.most_in_flight == 1


def test_without_a_limit_sub_agents_of_a_task_run_at_once(batch: BatchRun) -> None:
    batch.responder.delay = 0.2
    _delegating_task(batch)
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert batch.responder.most_in_flight == 3


def test_at_most_four_sub_agents_of_one_session_run_at_once(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    batch.responder.delay = 0.2
    children = [steps_prompt(["text", f"child {i}"]) for i in range(6)]
    batch.write_tasks(
        [{"id": "t0", "prompt": steps_prompt(["tasks", children]), "cwd": "project", "tools": ["task"]}]
    )
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    assert batch.responder.most_in_flight == 4

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

"""``tau batch --ray`` on a Ray started for the run (2 CPUs): one run, the facts read from it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_run import batch_run, steps_prompt
from planted_modules import TAU_IMPORTS, fired, plant

# Ray's start and the 22 tasks take ~15 s on an idle machine, well over a minute on a loaded one:
# the run itself is limited to 120 s, so the test's own limit must be above that.
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def ray_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[subprocess.CompletedProcess[str], dict[str, Any], Path, int]]:
    for batch in batch_run(tmp_path_factory.mktemp("ray")):
        (batch.root / "project").mkdir()
        # Ray puts the driver's working folder on its workers' import path unless told otherwise.
        plant(batch.root, batch.root / "markers", TAU_IMPORTS)
        marker = batch.root / "killed-once"
        kill_once = f"test -e {marker} || {{ touch {marker}; kill -9 $PPID; }}; echo survived > out.txt"
        tasks: list[dict[str, Any] | str] = [
            {
                "id": f"task-{i:02d}",
                "prompt": steps_prompt(["write", "out.txt", f"answer {i}\n"]),
                "cwd": "project",
                "check": f"grep -qx 'answer {i if i % 5 else -1}' out.txt",
            }
            for i in range(20)
        ]
        tasks += [
            {
                "id": "dies-once",
                "prompt": steps_prompt(["bash", kill_once]),
                "cwd": "project",
                "check": "test -e out.txt",
            },
            {"id": "dies-always", "prompt": steps_prompt(["bash", "kill -9 $PPID"]), "cwd": "project"},
        ]
        batch.write_tasks(tasks)
        batch.settings({"retry": {"enabled": False}, "batch": {"limits": {"local": {"concurrency": 1}}}})
        batch.responder.delay = 0.02
        done = batch.run("tasks.jsonl", "--out", "out", "--ray", "--model", "local/fake-model", timeout=120)
        yield done, {r["id"]: r for r in batch.results()}, batch.root / "out", batch.responder.most_in_flight


def test_every_ray_task_ends_once_with_its_verdict_patch_and_session(ray_run: Any) -> None:
    done, results, out, _most = ray_run
    assert done.returncode == 0, done.stderr[-3000:]
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(results) == 22
    for i in range(20):
        result = results[f"task-{i:02d}"]
        assert result["status"] == ("passed" if i % 5 else "failed"), result
        assert f"+answer {i}" in result["patch"]
        session = [json.loads(line) for line in (out / result["sessionFile"]).read_text().splitlines()]
        assert session[0]["type"] == "session"


def test_ray_workers_import_nothing_from_the_folder_of_the_run(ray_run: Any) -> None:
    _done, results, out, _most = ray_run
    assert fired(out.parent / "markers") == []
    assert results["task-01"]["status"] == "passed"


def test_a_ray_worker_killed_mid_task_is_run_again_by_ray_or_reported_as_error(ray_run: Any) -> None:
    _done, results, _out, _most = ray_run
    assert results["dies-once"]["status"] == "passed"
    assert results["dies-always"]["status"] == "error"
    assert results["dies-always"]["error"].startswith("the Ray task failed: ")


def test_the_provider_limit_is_held_by_one_actor_for_all_ray_workers(ray_run: Any) -> None:
    """With a concurrency of 1 the fake server never sees two requests at once, across Ray workers."""
    _done, results, _out, most_in_flight = ray_run
    assert most_in_flight == 1
    assert len(results) == 22

"""Bad task files and options: one clear line each, and the good lines still run."""

from __future__ import annotations

import subprocess
import sys

from batch_run import BatchRun, steps_prompt


def test_bad_lines_are_named_by_line_number_and_the_rest_still_runs(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    good = {"prompt": steps_prompt(["text", "ok"]), "cwd": "project"}
    batch.write_tasks(
        [
            {"id": "first", **good},
            '{"id": "broken", "prompt": ',
            {"id": "first", **good},
            {"id": "no-commit", "prompt": "hi", "repo": "project"},
            {"id": "no-repo", "prompt": "hi", "commit": "abc123"},
            {"id": "odd-model", **good, "model": "local/no-such-model"},
            {"id": "last", **good},
        ]
    )
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    problems = [line for line in lines if line.startswith("tau: tasks.jsonl line")]
    assert problems[:4] == [
        "tau: tasks.jsonl line 2: not valid JSON (Expecting value at column 27)",
        "tau: tasks.jsonl line 3: task id 'first' is used again (each id must be unique)",
        "tau: tasks.jsonl line 4: task 'no-commit' has no \"commit\" (the working copy to run in)",
        "tau: tasks.jsonl line 5: task 'no-repo' has no \"repo\" (the working copy to run in)",
    ]
    assert problems[4].startswith("tau: tasks.jsonl line 6: task 'odd-model': ")
    assert "no-such-model" in problems[4] and len(problems) == 5
    assert "Traceback" not in done.stderr
    assert sorted(r["id"] for r in batch.results()) == ["first", "last"]


def test_a_repo_task_runs_in_a_fresh_clone_at_its_commit(batch: BatchRun) -> None:
    repo = batch.root / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    first = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    (repo / "a.txt").write_text("two\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    batch.write_tasks(
        [
            {
                "id": "old",
                "prompt": steps_prompt(["bash", "echo more >> a.txt"]),
                "repo": "repo",
                "commit": first,
                "check": "grep -qx one a.txt",
            },
            {"id": "gone", "prompt": "hi", "repo": "repo", "commit": "0" * 40},
        ]
    )
    done = batch.run("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in batch.results()}
    assert results["old"]["status"] == "passed"
    assert "+more" in results["old"]["patch"]
    assert results["gone"]["status"] == "error"
    assert results["gone"]["error"].startswith(f"commit {'0' * 40} of {repo} cannot be checked out")
    assert (repo / "a.txt").read_text() == "two\n"


def test_an_unknown_default_model_or_a_missing_out_is_one_line(batch: BatchRun) -> None:
    batch.write_tasks([{"id": "a", "prompt": "hi", "cwd": "."}])
    unknown = batch.run("tasks.jsonl", "--out", "out", "--model", "local/nope")
    assert unknown.returncode == 1 and len(unknown.stderr.splitlines()) == 1
    assert unknown.stderr.startswith("tau: --model: ")
    no_out = batch.run("tasks.jsonl")
    assert no_out.stderr == "tau: --out DIR is required (where results.jsonl and the sessions go)\n"
    missing = batch.run("nothing.jsonl", "--out", "out")
    assert missing.stderr == "tau: task file nothing.jsonl not found\n"


def test_tau_print_mode_never_imports_the_batch_runner(batch: BatchRun) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", "-p", "--model", "local/fake-model", "hi"],
        cwd=batch.root,
        env=batch.env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "tau.runtime.sdk" in imported
    assert not [name for name in imported if name.startswith(("tau.batch", "tau.cli.batch", "ray"))]


def test_ray_without_the_ray_extra_is_one_line_naming_it(batch: BatchRun) -> None:
    (batch.root / "project").mkdir()
    shadow = batch.root / "no-ray"
    shadow.mkdir()
    (shadow / "ray.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    batch.env["PYTHONPATH"] = str(shadow)
    batch.write_tasks([{"id": "a", "prompt": steps_prompt(["text", "ok"]), "cwd": "project"}])
    done = batch.run("tasks.jsonl", "--out", "out", "--ray", "--model", "local/fake-model")
    assert done.returncode == 1
    assert done.stderr == "tau: --ray needs Ray, which is not installed: pip install 'tau-agent[ray]'\n"

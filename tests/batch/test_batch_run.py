"""``tau batch`` over 20 tasks on local workers: results, sessions, patches, summary, report, resume."""

from __future__ import annotations

import json

from batch_run import BatchRun, steps_prompt


def _twenty_tasks(batch: BatchRun) -> None:
    project = batch.root / "project"
    project.mkdir()
    (project / "seed.txt").write_text("seed\n")
    tasks = []
    for i in range(20):
        wanted = f"answer {i}" if i % 4 else "something else"
        tasks.append(
            {
                "id": f"task-{i:02d}",
                "prompt": steps_prompt(
                    ["write", "out.txt", f"answer {i}\n"], ["bash", "cat out.txt seed.txt"]
                ),
                "cwd": "project",
                "check": f"grep -qx '{wanted}' out.txt",
            }
        )
    batch.write_tasks(tasks)


def test_every_task_ends_once_with_its_verdict_patch_and_session(batch: BatchRun) -> None:
    _twenty_tasks(batch)
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    assert done.returncode == 0, done.stderr
    results = batch.results()
    assert sorted(r["id"] for r in results) == [f"task-{i:02d}" for i in range(20)]
    for result in results:
        i = int(result["id"].split("-")[1])
        assert result["status"] == ("failed" if i % 4 == 0 else "passed"), result
        assert result["checkExitCode"] == (1 if i % 4 == 0 else 0)
        assert result["turns"] == 3 and result["stopReason"] == "stop" and result["finalText"] == "done"
        assert result["tokens"]["input"] == 30 and result["tokens"]["output"] == 15
        assert f"+answer {i}" in result["patch"] and "seed.txt" not in result["patch"]
        session = batch.root / "out" / result["sessionFile"]
        lines = [json.loads(line) for line in session.read_text().splitlines()]
        assert lines[0]["type"] == "session"
        assert any(e.get("message", {}).get("role") == "toolResult" for e in lines)
    assert (batch.root / "project" / "out.txt").exists() is False  # each task had its own copy
    summary = json.loads((batch.root / "out" / "summary.json").read_text())
    assert (summary["tasks"], summary["passed"], summary["failed"], summary["passRate"]) == (20, 15, 5, 0.75)
    assert "pass rate       75.0%" in done.stdout
    assert done.stderr.count("[") >= 20  # not a terminal: a plain line per task

    report = batch.run("report", "out")
    assert report.returncode == 0 and report.stdout == done.stdout

    again = batch.run("tasks.jsonl", "--out", "out", "--workers", "2", "--model", "local/fake-model")
    assert again.returncode == 0
    assert "20 task(s) already in" in again.stderr
    assert len(batch.results()) == 20


def test_report_of_a_folder_without_results_is_one_line(batch: BatchRun) -> None:
    done = batch.run("report", "nowhere")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "tau: nowhere/results.jsonl not found (run tau batch with --out nowhere first)"
    ]


def test_on_a_terminal_progress_is_one_line_rewritten_in_place(batch: BatchRun) -> None:
    import pexpect

    (batch.root / "project").mkdir()
    batch.write_tasks(
        [{"id": f"t{i}", "prompt": steps_prompt(["text", "ok"]), "cwd": "project"} for i in range(3)]
    )
    program, *args = batch.command("tasks.jsonl", "--out", "out", "--model", "local/fake-model")
    child = pexpect.spawn(
        program, args, cwd=str(batch.root), env=batch.env, encoding="utf-8", timeout=60, use_poll=True
    )
    child.expect(pexpect.EOF)
    child.close()
    screen = child.before
    assert child.exitstatus == 0, screen
    assert "\r\x1b[2K3/3 done · 3 passed · 0 failed · 0 other · $0.0000 · ETA 0:00" in screen
    assert "[1/3]" not in screen

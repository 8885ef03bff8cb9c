"""Project trust in ``tau batch``: a task folder's own ``.tau`` extensions run in its working copy only
when that folder is trusted (``-a``, a saved decision, ``defaultProjectTrust``), as for ``tau -p``;
nobody is asked. Each task's extension leaves a marker outside the working copy when it runs."""

from __future__ import annotations

import json
from pathlib import Path

from batch_run import BatchRun


def task_folder(batch: BatchRun, name: str) -> tuple[str, Path]:
    """A folder with a project extension that writes ``<root>/<name>.ran``; the task and the marker."""
    extensions = batch.root / name / ".tau" / "extensions"
    extensions.mkdir(parents=True)
    marker = batch.root / f"{name}.ran"
    (extensions / "mark.py").write_text(
        f"from pathlib import Path\n\n\ndef setup(tau):\n    Path({str(marker)!r}).write_text('ran')\n"
    )
    return name, marker


def run(batch: BatchRun, *folders: str, flags: tuple[str, ...] = ()) -> str:
    batch.write_tasks([{"id": folder, "prompt": "hi", "cwd": folder} for folder in folders])
    done = batch.run("tasks.jsonl", "--out", "out", "--workers", "1", "--model", "local/fake-model", *flags)
    assert done.returncode == 0, done.stderr
    assert [r["status"] for r in batch.results()] == ["passed"] * len(folders)
    return done.stderr


def test_only_the_extension_of_a_task_folder_trusted_in_trust_json_runs(batch: BatchRun) -> None:
    untrusted, untrusted_marker = task_folder(batch, "clone")
    trusted, trusted_marker = task_folder(batch, "mine")
    (batch.root / "agent" / "trust.json").write_text(
        json.dumps({str((batch.root / trusted).resolve()): True})
    )
    run(batch, untrusted, trusted)
    assert not untrusted_marker.exists()
    assert trusted_marker.read_text() == "ran"


def test_approve_trusts_every_task_folder_for_the_run(batch: BatchRun) -> None:
    folder, marker = task_folder(batch, "clone")
    run(batch, folder, flags=("-a",))
    assert marker.exists()
    assert not (batch.root / "agent" / "trust.json").exists()


def test_no_approve_wins_over_a_saved_trust(batch: BatchRun) -> None:
    folder, marker = task_folder(batch, "mine")
    (batch.root / "agent" / "trust.json").write_text(json.dumps({str((batch.root / folder).resolve()): True}))
    run(batch, folder, flags=("--no-approve",))
    assert not marker.exists()


def test_default_project_trust_always_trusts_the_task_folders(batch: BatchRun) -> None:
    folder, marker = task_folder(batch, "clone")
    batch.settings({"retry": {"enabled": False}, "defaultProjectTrust": "always"})
    run(batch, folder)
    assert marker.exists()


def test_a_damaged_trust_file_is_one_warning_and_trusts_no_task_folder(batch: BatchRun) -> None:
    folder, marker = task_folder(batch, "mine")
    trust_file = batch.root / "agent" / "trust.json"
    trust_file.write_text("{" + json.dumps(str((batch.root / folder).resolve())) + ": true")
    stderr = run(batch, folder)
    assert not marker.exists()
    [warning] = [line for line in stderr.splitlines() if "warning" in line]
    assert warning.startswith(f"tau: warning: {trust_file}:1:")
    assert warning.endswith("saved trust decisions are ignored until it is fixed or removed")


def test_the_limits_of_an_untrusted_run_folder_are_not_read(batch: BatchRun) -> None:
    """The folder ``tau batch`` runs in sets ``batch.limits`` (a wrong one, so reading it shows);
    only ``-a`` lets its settings count."""
    (batch.root / "task").mkdir()
    (batch.root / ".tau").mkdir()
    (batch.root / ".tau" / "settings.json").write_text(
        json.dumps({"batch": {"limits": {"local": {"concurrency": 0}}}})
    )
    assert "batch.limits.local.concurrency" not in run(batch, "task")
    (batch.root / "out" / "results.jsonl").unlink()
    assert "batch.limits.local.concurrency" in run(batch, "task", flags=("-a",))

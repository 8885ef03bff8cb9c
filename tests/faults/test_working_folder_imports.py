"""Nothing of the folder tau works in is imported: a module named like one tau imports, or a
``*.dist-info`` that offers a ``tau.extensions`` entry point, planted where ``python -m tau``, the
workers of ``tau batch`` and an RPC client's ``tau`` run. Each planted module leaves a marker file
when it is imported (and fails the import); no marker may appear, and the run works."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from batch_run import batch_run, steps_prompt
from fault_campaign import TALLY, Campaign
from planted_modules import RUNPY_IMPORTS, TAU_IMPORTS, fired, plant
from tau_command import MODEL

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn


def test_python_m_tau_imports_nothing_from_its_working_folder(campaign: Campaign, tmp_path: Path) -> None:
    markers = tmp_path / "markers"
    plant(campaign.work, markers, TAU_IMPORTS)
    campaign.server.add(Turn(text="hello"))
    outcome = campaign.process_check(*MODEL, "-p", "hi")
    assert fired(markers) == []
    assert outcome.code == 0 and outcome.stdout == "hello\n", outcome
    assert "planted" not in outcome.stderr


def test_a_distribution_in_the_working_folder_offers_no_extension_even_on_the_import_path(
    campaign: Campaign, tmp_path: Path
) -> None:
    """``PYTHONPATH`` names the folder (the user's own choice: its modules import), yet extensions
    come from the installed environment only."""
    markers = tmp_path / "markers"
    plant(campaign.work, markers, ())
    campaign.tau.env["PYTHONPATH"] = str(campaign.work)
    campaign.server.add(Turn(text="hello"))
    outcome = campaign.process_check(*MODEL, "-p", "hi")
    assert fired(markers) == []
    assert outcome.code == 0 and outcome.stdout == "hello\n", outcome


async def test_the_rpc_clients_tau_imports_nothing_from_the_folder_it_runs_in(
    campaign: Campaign, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    plant(campaign.work, markers, TAU_IMPORTS + RUNPY_IMPORTS)
    TALLY.bad_inputs += 1
    async with RpcClient(cwd=str(campaign.work), env=campaign.tau.env) as rpc:
        state = await rpc.call("get_state")
    assert fired(markers) == []
    assert state["sessionId"]


def test_tau_batch_workers_import_nothing_from_the_folder_of_the_run_or_of_a_task(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    for batch in batch_run(tmp_path / "run"):
        markers = tmp_path / "markers"
        project = batch.root / "project"
        project.mkdir()
        plant(batch.root, markers, TAU_IMPORTS + RUNPY_IMPORTS)
        plant(project, markers, TAU_IMPORTS + RUNPY_IMPORTS)
        task = {
            "id": "t1",
            "prompt": steps_prompt(["write", "out.txt", "ok\n"]),
            "cwd": "project",
            "check": "grep -qx ok out.txt",
        }
        batch.write_tasks([task])
        # The driver with -P: what is looked at here is what the workers it starts import.
        done = subprocess.run(
            [
                sys.executable,
                "-P",
                "-m",
                "tau",
                "batch",
                "tasks.jsonl",
                "--out",
                "out",
                "--model",
                "local/fake-model",
            ],
            cwd=batch.root,
            env=batch.env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        TALLY.bad_inputs += 1
        assert fired(markers) == []
        assert done.returncode == 0, done.stderr[-3000:]
        [result] = batch.results()
        assert result["status"] == "passed", json.dumps(result)[:3000]


def test_another_program_run_with_m_keeps_its_folder_on_the_path_when_it_imports_tau(tmp_path: Path) -> None:
    """Only tau's own ``python -m tau…`` drops the folder: a program of the folder that imports tau
    while Python locates it still imports its own modules from there."""
    program = tmp_path / "program"
    program.mkdir()
    (program / "__init__.py").write_text("import tau\n")
    (program / "__main__.py").write_text("import helper\nprint(helper.WORD)\n")
    (tmp_path / "helper.py").write_text("WORD = 'found'\n")
    done = subprocess.run(
        [sys.executable, "-X", "utf8", "-m", "program"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "found\n"), done.stderr


def test_python_m_tau_with_interpreter_options_imports_nothing_from_its_folder(
    campaign: Campaign, tmp_path: Path
) -> None:
    markers = tmp_path / "markers"
    plant(campaign.work, markers, TAU_IMPORTS)
    done = subprocess.run(
        [sys.executable, "-X", "utf8", "-W", "ignore", "-m", "tau", "--version"],
        cwd=campaign.work,
        env=campaign.tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    TALLY.bad_inputs += 1
    assert fired(markers) == []
    assert done.returncode == 0 and done.stdout.startswith("tau "), done.stderr

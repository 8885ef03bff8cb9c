"""Figures of `tau batch` against a local fake server (one text reply per task):

- 200 trivial tasks on 2 local workers: wall time per task (wall x workers / tasks), next to one
  `tau -p` run of the same reply; the difference is what the batch harness adds per task;
- the driver's peak RSS for 100 and for 1000 tasks (it should not grow with the task count);
- with ray installed, 200 tasks under `--ray` on a Ray started for the run (its start included).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import PYTHON, Figure, time_command, user_env
from tau.testing.fake_llm import FakeLLMServer, Turn


def _setup(root: Path, server: FakeLLMServer) -> dict[str, str]:
    agent = root / "agent"
    agent.mkdir()
    models = {
        "providers": {
            "local": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models))
    (root / "empty").mkdir()
    env = user_env()
    env["TAU_AGENT_DIR"] = str(agent)
    return env


def _batch(
    root: Path, env: dict[str, str], tasks: int, workers: int, name: str, *extra: str
) -> tuple[float, float]:
    """Wall seconds and the driver's peak RSS (MiB, VmHWM) of one run."""
    path = root / f"{name}.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"t{i}", "prompt": "hi", "cwd": "empty"}) + "\n" for i in range(tasks))
    )
    argv = [
        PYTHON,
        "-m",
        "tau",
        "batch",
        str(path),
        "--out",
        str(root / name),
        "--workers",
        str(workers),
        "--model",
        "local/fake-model",
        *extra,
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) / 1024)
        except OSError:
            pass
        time.sleep(0.2)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"tau batch exited with {proc.returncode}")
    return wall, peak


def run(repeat: int) -> list[Figure]:
    figures = []
    with tempfile.TemporaryDirectory() as folder, FakeLLMServer() as server:
        server.add(*[lambda request: Turn(text="ok")] * 5000)
        root = Path(folder)
        env = _setup(root, server)
        single, _rss = time_command(
            [PYTHON, "-m", "tau", "-p", "--model", "local/fake-model", "hi"], repeat, env
        )
        figures.append(Figure("tau -p, one text reply", single * 1000, "ms"))
        wall, _peak = _batch(root, env, 200, 2, "two-hundred")
        per_task = wall * 2 / 200
        figures.append(Figure("tau batch, 200 tasks on 2 workers: per task", per_task * 1000, "ms"))
        figures.append(Figure("tau batch, 200 tasks on 2 workers: total", wall, "s"))
        _wall, small = _batch(root, env, 100, 2, "hundred")
        _wall, large = _batch(root, env, 1000, 2, "thousand")
        figures.append(Figure("tau batch driver peak RSS, 100 tasks", small, "MiB"))
        figures.append(Figure("tau batch driver peak RSS, 1000 tasks", large, "MiB", "flat"))
        if importlib.util.find_spec("ray") is not None:
            wall, _peak = _batch(root, env, 200, 2, "ray", "--ray")
            figures.append(Figure("tau batch --ray (local, 2 CPUs), 200 tasks: total", wall, "s"))
            figures.append(
                Figure("tau batch --ray (local, 2 CPUs), 200 tasks: per task", wall * 2 / 200 * 1000, "ms")
            )
    return figures


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)

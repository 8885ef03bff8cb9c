"""Helpers shared by the benchmarks: figures, medians, clean child-process environments."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Figure:
    name: str
    value: float
    unit: str
    goal: str = ""

    def __str__(self) -> str:
        goal = f"   (goal: {self.goal})" if self.goal else ""
        return f"{self.name:48} {self.value:10.3f} {self.unit}{goal}"


def median(values: list[float]) -> float:
    return statistics.median(values)


def user_env() -> dict[str, str]:
    """The environment a user's shell would have: bytecode caching on."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


# Runs the measured command and reports its wall time and peak RSS. It runs in a small process of
# its own because a child's peak RSS on Linux starts from the size of the process that forked it.
_LAUNCHER = r"""
import json, os, subprocess, sys, time
argv, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
subprocess.run(argv, check=True, capture_output=True)  # warm the bytecode cache
walls, rss = [], []
for _ in range(repeat):
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    walls.append(time.perf_counter() - started)
    if status != 0:
        raise SystemExit(f"{argv} exited with {status}")
    rss.append(usage.ru_maxrss / 1024)
print(json.dumps([walls, rss]))
"""


def time_command(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall seconds and median peak RSS (MiB) of running ``argv``."""
    out = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, json.dumps(argv), str(repeat)],
        env=env or user_env(),
        check=True,
        capture_output=True,
        text=True,
    )
    walls, rss = json.loads(out.stdout)
    return median(walls), median(rss)


PYTHON = sys.executable

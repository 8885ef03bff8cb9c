"""Helpers shared by the benchmarks: figures, medians, clean child-process environments."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
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


def time_command(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds and median peak RSS (MiB) of running ``argv``."""
    env = user_env()
    subprocess.run(argv, env=env, check=True, capture_output=True)  # warm the bytecode cache
    walls: list[float] = []
    rss: list[float] = []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        if status != 0:
            raise RuntimeError(f"{argv} exited with {status}")
        rss.append(usage.ru_maxrss / 1024)
    return median(walls), median(rss)


PYTHON = sys.executable

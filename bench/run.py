"""Run tau's benchmarks and print each figure as the median of several runs.

    python bench/run.py            # every benchmark
    python bench/run.py NAME ...   # only these (file bench/bench_NAME.py)
    python bench/run.py --list

Run it with the interpreter of tau's venv (``.venv/bin/python bench/run.py``). Each benchmark module
has a ``run(repeat: int) -> list[Figure]`` function; figures are printed as they arrive.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import Figure  # noqa: E402


def discover() -> dict[str, Path]:
    return {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}


def load(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description="Run tau benchmarks.")
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (median reported)")
    parser.add_argument("--list", action="store_true", help="list benchmarks and exit")
    args = parser.parse_args()
    available = discover()
    if args.list:
        for name, path in available.items():
            doc = (load(path).__doc__ or "").strip().splitlines()
            print(f"{name:24} {doc[0] if doc else ''}")
        return 0
    unknown = [n for n in args.names if n not in available]
    if unknown:
        print(
            f"unknown benchmark(s): {', '.join(unknown)}; available: {', '.join(available)}", file=sys.stderr
        )
        return 2
    for name in args.names or list(available):
        module = load(available[name])
        started = time.perf_counter()
        figures: list[Figure] = module.run(args.repeat)  # type: ignore[attr-defined]
        print(f"== {name} ({time.perf_counter() - started:.1f} s)")
        for figure in figures:
            print(f"   {figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

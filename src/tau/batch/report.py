"""The summary table of a run, for the end of ``tau batch`` and for ``tau batch report DIR``."""

from __future__ import annotations

from typing import Any

__all__ = ["format_summary"]


def format_summary(summary: dict[str, Any]) -> str:
    total = summary["tasks"]
    rows = [("tasks", str(total))]
    for status in ("passed", "failed", "error", "timeout", "budget"):
        share = f" ({summary[status] / total:.0%})" if total else ""
        rows.append((status, f"{summary[status]}{share}"))
    if summary.get("outputLimitReached"):
        rows.append(("at output limit", str(summary["outputLimitReached"])))
    tokens = summary["tokens"]
    wall = summary["wallSeconds"]
    rows += [
        ("pass rate", f"{summary['passRate']:.1%}"),
        ("cost", f"${summary['cost']:.4f}"),
        ("turns", str(summary["turns"])),
        (
            "tokens",
            f"{tokens['input']} in, {tokens['output']} out, {tokens['cacheRead']} cache read, "
            f"{tokens['cacheWrite']} cache write",
        ),
        ("wall p50 / p95", f"{wall['p50']:.2f} s / {wall['p95']:.2f} s"),
    ]
    width = max(len(name) for name, _ in rows)
    return "".join(f"{name.ljust(width)}  {value}\n" for name, value in rows)

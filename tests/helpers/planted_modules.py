"""Modules and an extension planted in a folder tau works in, each leaving a marker when imported."""

from __future__ import annotations

from pathlib import Path

# Modules tau itself imports: a `python -m tau` in the folder must not take them from there.
TAU_IMPORTS = ("__future__", "typing", "json", "jiter", "httpx", "anyio", "yaml", "asyncio")
# Modules Python's own `-m` imports before any of tau's code runs: only `-P` keeps these out, so
# they show whether the processes tau starts are started with it.
RUNPY_IMPORTS = ("functools", "contextlib", "types", "keyword")


def plant(folder: Path, markers: Path, names: tuple[str, ...]) -> None:
    """``names`` as modules of ``folder`` (each writes ``markers/<name>`` and fails its import), and
    an installed-looking distribution whose ``tau.extensions`` entry point writes ``markers/extension``."""
    markers.mkdir(exist_ok=True)
    for name in names:
        (folder / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').close()\nraise ImportError('planted {name}')\n"
        )
    dist = folder / "planted_extension-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-extension\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[tau.extensions]\nplanted = planted_extension:setup\n")
    (folder / "planted_extension.py").write_text(
        f"open({str(markers / 'extension')!r}, 'w').close()\n\n\ndef setup(tau):\n    pass\n"
    )


def fired(markers: Path) -> list[str]:
    """The planted things that were imported."""
    return sorted(path.name for path in markers.iterdir())

"""The changelog ``/changelog`` shows: the ``CHANGELOG.md`` shipped inside the ``tau`` package."""

from __future__ import annotations

__all__ = ["changelog_text"]


def changelog_text() -> str:
    """The changelog's text, or one line saying it could not be read."""
    from importlib.resources import files
    from pathlib import Path

    from tau._env_twins import tau_only

    moved = tau_only("PACKAGE_DIR")  # tau's files elsewhere (Nix/Guix); pi's PI_PACKAGE_DIR is pi's
    try:
        if moved:
            return (Path(moved) / "CHANGELOG.md").read_text(encoding="utf-8").strip()
        return files("tau").joinpath("CHANGELOG.md").read_text(encoding="utf-8").strip()
    except OSError as exc:
        return f"No changelog found ({exc.strerror or exc})."

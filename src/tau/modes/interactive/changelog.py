"""The changelog ``/changelog`` shows: the ``CHANGELOG.md`` shipped inside the ``tau`` package."""

from __future__ import annotations

__all__ = ["changelog_text"]


def changelog_text() -> str:
    """The changelog's text, or one line saying it could not be read."""
    from importlib.resources import files

    try:
        return files("tau").joinpath("CHANGELOG.md").read_text(encoding="utf-8").strip()
    except OSError as exc:
        return f"No changelog found ({exc.strerror or exc})."

"""Fixtures for the extension tests: extension files written to a temporary project, loaded into a
runner bound to a recording host."""

from __future__ import annotations

import textwrap
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tau.extensions import ExtensionRunner, ExtensionSource, load_extensions
from tau.extensions.testing import RecordingHost

WriteExtension = Callable[[str, str], Path]
Load = Callable[..., Awaitable[ExtensionRunner]]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No extension of the user's leaks in."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def write_extension(tmp_path: Path) -> WriteExtension:
    """Write ``source`` (dedented) to ``<tmp>/ext/<relative>``; returns its path."""

    def write(relative: str, source: str) -> Path:
        path = tmp_path / "ext" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
        return path

    return write


@pytest.fixture
def runners() -> Iterator[list[ExtensionRunner]]:
    """Runners created by ``load``; disposed after the test (providers and modules released)."""
    created: list[ExtensionRunner] = []
    yield created
    for runner in created:
        runner.dispose()


@pytest.fixture
def load(project: Path, runners: list[ExtensionRunner]) -> Load:
    """Load extension files (paths) into a runner bound to a ``RecordingHost`` for ``project``."""

    async def load_files(*paths: Path, bind: bool = True) -> ExtensionRunner:
        sources = [ExtensionSource("file", p.stem, str(p)) for p in paths]
        runner = await load_extensions(sources, cwd=str(project))
        runners.append(runner)
        if bind:
            runner.bind(RecordingHost(str(project)))
        return runner

    return load_files

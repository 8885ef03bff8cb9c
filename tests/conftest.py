"""What every test starts from."""

from __future__ import annotations

import compileall
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import tau
from tau.ai.redaction import clear_secrets

# No per-example deadline: on a loaded two-core machine (CI runs three workers) an example of a few
# milliseconds sometimes took over hypothesis's 200 ms and failed a test that was right.
settings.register_profile("tau", deadline=None)
settings.load_profile("tau")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile tau's modules once, as pip does when it installs a package, before the suite starts
    its thousands of ``tau`` processes. With ``PYTHONDONTWRITEBYTECODE=1`` (set on our machines and
    CI's) an editable install never gets bytecode, and every process compiled each module it
    imported again: about 0.2 s of CPU per ``tau -p``, minutes over the suite."""
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller compiled before starting it
    compileall.compile_dir(Path(tau.__file__).parent, quiet=2)


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> Iterator[None]:
    # A key one test registers must not be redacted from another test's texts (a header value
    # "platform" once turned an expected "aiplatform" into "ai[redacted]").
    yield
    clear_secrets()

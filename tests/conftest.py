"""What every test starts from."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tau.ai.redaction import clear_secrets


@pytest.fixture(autouse=True)
def _forget_registered_secrets() -> Iterator[None]:
    # A key one test registers must not be redacted from another test's texts (a header value
    # "platform" once turned an expected "aiplatform" into "ai[redacted]").
    yield
    clear_secrets()

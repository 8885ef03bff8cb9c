"""Fixtures of the fault campaign, and its count at the end of the run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_campaign import TALLY, Campaign
from tau_command import tau_command


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TALLY.bad_inputs:
        terminalreporter.write_line(
            f"fault campaign: {TALLY.bad_inputs} bad inputs, {TALLY.tracebacks} tracebacks, "
            f"{TALLY.hangs} hangs, {TALLY.lines_lost} lines lost"
        )


@pytest.fixture
def campaign(tmp_path: Path) -> Iterator[Campaign]:
    for tau in tau_command(tmp_path):
        # No retries unless a test asks: a failure shows at once instead of after seconds of waits.
        (tau.agent_dir / "settings.json").write_text(json.dumps(NO_RETRIES))
        yield Campaign(tau)


NO_RETRIES = {"retry": {"enabled": False, "provider": {"maxRetries": 0}}}

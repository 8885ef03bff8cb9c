"""Importing tau's HTTP layer stays light even where rich or click are installed."""

from __future__ import annotations

import subprocess
import sys


def test_httpx_is_imported_without_its_command_line_tool() -> None:
    probe = (
        "import sys, tau.ai.http, tau.ai.providers.anthropic; "
        "print(sorted(m for m in ('click', 'rich', 'pygments', 'httpx._main') if sys.modules.get(m)))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"

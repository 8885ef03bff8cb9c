"""Importing tau's HTTP layer and a provider imports no HTTP library: httpx (whose package init
loads its command-line tool with click, rich and pygments where those are installed) comes only
with the rare request tau's own client does not make (a proxy other than http://, a redirect of an
https request), OAuth, MCP and package downloads."""

from __future__ import annotations

import subprocess
import sys


def test_the_http_layer_and_a_provider_import_no_httpx() -> None:
    probe = (
        "import sys, tau.ai.transport.http, tau.ai.providers.anthropic; "
        "print(sorted(m for m in ('httpx', 'click', 'rich', 'pygments') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"

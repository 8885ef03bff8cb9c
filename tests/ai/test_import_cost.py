"""``import tau.ai`` stays cheap (the bench's figure: within 100 ms of bare Python): it and every name
it exports load the standard library, tau's own core and msgspec (its records) only; each provider, its SDK and the HTTP
stack wait for a request."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = """
import json, sys
before = set(sys.modules)
import tau.ai
for name in tau.ai.__all__:  # the package imports its names on first access
    getattr(tau.ai, name)
print(json.dumps(sorted(name for name in set(sys.modules) - before if sys.modules[name] is not None)))
"""


def test_import_tau_ai_loads_no_provider_no_http_stack_and_nothing_outside_the_standard_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=30, check=True
    )
    loaded = json.loads(done.stdout)
    outside = {
        name
        for name in loaded
        # msgspec makes tau's records (messages, events): the one library every layer uses; it
        # reads type hints with typing_extensions where that is installed
        if name.split(".")[0] not in (*sys.stdlib_module_names, "tau", "msgspec", "typing_extensions")
    }
    assert outside == set()  # no botocore, google-auth, httpx, h11, websockets, zstandard, ...
    assert "tau.ai.catalogue" in loaded  # the probe sees what tau.ai brings in
    heavy = [
        name
        for name in loaded
        if name.startswith(("tau.ai.providers", "tau.ai.transport.http", "tau.ai.transport.wire"))
    ]
    assert heavy == []
    assert not {"asyncio", "ssl", "socket"} & set(loaded)

"""Keep httpx's command-line tool out of tau's start-up.

httpx's package init imports its command-line tool, and with it click, rich and pygments, whenever
those are installed (tau's terminal UI installs rich): about 60 ms and 6 MiB on every start, for a
tool tau never runs. A ``None`` entry in ``sys.modules`` makes that one optional import fail at
once, and httpx goes on without it (its ``httpx`` console script, a separate process, is
unaffected). ``tau.ai`` imports this module first; every module of tau that imports httpx is
inside that package.
"""

import sys

sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

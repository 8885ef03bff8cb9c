"""What ``tau --version`` and a plain import of ``tau`` load (issue #33): the version is printed
without ``typing``, ``re``, ``json``, ``dataclasses`` or msgspec, which together were over half of
its start (152 M instructions before, 67 M after)."""

from __future__ import annotations

import subprocess
import sys

_NOT_AT_START = ("typing", "re", "json", "dataclasses", "msgspec", "asyncio")

_PROBE = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("MODULES " + " ".join(sys.modules) + "\\n"))
sys.argv = ["tau", *sys.argv[1:]]
runpy.run_module("tau", run_name="__main__", alter_sys=True)
"""


def _modules_after(*argv: str) -> tuple[str, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=60, check=True
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return done.stdout, set(line.removeprefix("MODULES ").split())


def test_version_loads_no_typing_re_json_dataclasses_or_msgspec() -> None:
    stdout, modules = _modules_after("--version")
    assert stdout.startswith("tau ")
    assert {name for name in _NOT_AT_START if name in modules} == set()


def test_importing_one_module_of_tau_tools_or_tau_session_loads_no_other() -> None:
    # The packages export lazily: a module under them no longer loads every tool or the listing.
    code = "import sys, tau.tools.glob_match, tau.session.paths; print(sorted(m for m in sys.modules if m.startswith(('tau.tools.', 'tau.session.'))))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['tau.session.paths', 'tau.tools.glob_match']"

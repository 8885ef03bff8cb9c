"""Standard modules the command loads on first use (tau.cli.deferred_modules, issue #17): a run
reads none of them, and one that is read ends up exactly as a normal import leaves it."""

from __future__ import annotations

import json
import subprocess
import sys

from tau_command import MODEL, TauCommand

from tau.cli.deferred_modules import DEFERRED
from tau.testing.fake_llm import ScriptedToolCall, Turn

_RUN_AND_REPORT = """
import json, sys
from types import ModuleType
from tau.cli import main
from tau.cli.deferred_modules import DEFERRED
deferred = [name for name in DEFERRED if name not in sys.modules]  # not by the interpreter's start
code = main(sys.argv[1:])
sys.stdout.flush()
loaded = [name for name in deferred if type(sys.modules.get(name)) is ModuleType]
sys.stderr.write("\\n" + json.dumps([code, loaded]))
"""

# Each deferred module's names, file, identity in sys.modules and type: imported as usual
# ("plain"), or deferred and then read ("deferred"), half of them through `from ... import`.
_STATE = """
import importlib, json, sys
names = json.loads(sys.argv[2])
if sys.argv[1] == "deferred":
    from tau.cli.deferred_modules import defer_standard_modules
    imported = {name for name in names if name in sys.modules}  # by the interpreter's own start
    defer_standard_modules(tuple(names))
    for number, name in enumerate(names):
        module = importlib.import_module(name)
        assert (type(module).__name__ == "_OnFirstUse") != (name in imported), name
        if number % 2:
            exec(f"from {name} import __doc__ as _")
        else:
            getattr(module, "__all__", None)
state = {}
for name in names:
    module = importlib.import_module(name)
    state[name] = [sorted(vars(module)), module.__spec__.origin, sys.modules[name] is module, type(module).__name__]
print(json.dumps(state))
"""

_THREADS = """
import sys, threading
from tau.cli.deferred_modules import defer_standard_modules
defer_standard_modules(("textwrap",))
import textwrap
barrier, seen = threading.Barrier(8), []
def use():
    barrier.wait()
    seen.append((textwrap.dedent("  x\\n  y"), textwrap.TextWrapper))
threads = [threading.Thread(target=use) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert len(seen) == 8 and len(set(seen)) == 1 and seen[0][0] == "x\\ny", seen
assert type(sys.modules["textwrap"]).__name__ == "module"
print("ok")
"""


def test_a_run_with_a_tool_call_reads_none_of_the_deferred_modules(tau: TauCommand) -> None:
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]), Turn(text="done"))
    run = subprocess.run(
        [sys.executable, "-c", _RUN_AND_REPORT, *MODEL, "-p", "run echo"],
        cwd=tau.work, env=tau.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.stdout.strip() == "done"
    assert json.loads(run.stderr.splitlines()[-1]) == [0, []]


def test_a_deferred_module_once_read_is_what_a_normal_import_gives() -> None:
    states = [
        json.loads(subprocess.run(
            [sys.executable, "-c", _STATE, how, json.dumps(DEFERRED)],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout)
        for how in ("plain", "deferred")
    ]  # fmt: skip
    assert states[1] == states[0]
    assert {state[3] for state in states[1].values()} == {"module"}


def test_threads_reading_a_deferred_module_at_once_load_it_once() -> None:
    run = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "ok", run.stderr

"""tau reaches only public interfaces of Python and its libraries: no private name of a standard
module in ``src/``, no private attribute that tau does not define itself (a few of prompt_toolkit's,
named below with what they are for), and no stand-in in ``sys.modules`` after a run (issue #33)."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

SRC = Path(__file__).resolve().parents[2] / "src" / "tau"

# Documented public despite the underscore: os._exit is the documented way to end a process now.
_DOCUMENTED = {"os._exit"}
# Nothing waits for a public replacement (tau's records are msgspec structs since issue #33).
_PENDING: dict[str, set[str]] = {}
# Private attributes of prompt_toolkit objects the terminal UI reads or calls, each for a reason:
_PROMPT_TOOLKIT = {
    "_working_lines",  # Buffer's lines of history as edited, for the history search
    "_request_absolute_cursor_position",  # Renderer: ask the terminal where the cursor is
    "_redraw",  # Application: draw the frame now, inside a frame callback
    "_in_bracketed_paste",  # Vt100Parser: whether a paste is still arriving
}


@functools.cache  # parsed once for both scans
def _trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(SRC.rglob("*.py"))]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _standard_module_private_names(tree: ast.Module) -> set[str]:
    """``module._name``, ``getattr(module, "_name")`` and ``from module import _name`` for a
    standard-library module."""
    modules: dict[str, str] = {}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in sys.stdlib_module_names:
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] in sys.stdlib_module_names
        ):
            found |= {f"{node.module}.{a.name}" for a in node.names if _private(a.name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            if node.value.id in modules:
                found.add(f"{modules[node.value.id]}.{node.attr}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id in modules
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
        ):
            found.add(f"{modules[node.args[0].id]}.{node.args[1].value}")
    return found


def test_src_names_no_private_name_of_a_standard_module() -> None:
    found = {
        f"{path.relative_to(SRC)}: {name}"
        for path, tree in _trees()
        for name in _standard_module_private_names(tree) - _DOCUMENTED - _PENDING.get(path.name, set())
    }
    assert found == set()


def test_src_reads_no_private_attribute_that_tau_does_not_define() -> None:
    """An attribute read ``x._name`` where nothing in tau binds ``_name`` (a function, class,
    variable, parameter, attribute or field) is a reach into another library's internals."""
    trees = _trees()
    defined: set[str] = set()
    for _, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                defined.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                defined.add(node.attr)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.alias):
                defined.add(node.asname or node.name.split(".")[-1])
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                defined.add(node.value)  # __slots__ entries, setattr(obj, "_name", ...)
    reads = {
        f"{path.relative_to(SRC)}:{node.lineno} .{node.attr}"
        for path, tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Load)
        and _private(node.attr)
        and node.attr not in defined
        and node.attr not in _PROMPT_TOOLKIT
        and not (isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in _DOCUMENTED)
    }
    assert reads == set()


_PROBE = """
import sys, types
from tau.cli.main import run
code = run(sys.argv[1:])
odd = sorted(
    name for name, module in list(sys.modules.items())
    # a module, or what the standard library itself puts there (typing.io is a class on 3.11)
    if module is None
    or (type(module) is not types.ModuleType and type(module).__module__.split(".")[0] not in sys.stdlib_module_names)
)
print(code, odd)
"""


def test_a_run_with_a_tool_call_leaves_only_real_modules_in_sys_modules(tau: TauCommand) -> None:
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo hi"})]), Turn(text="done"))
    probe = subprocess.run(
        [sys.executable, "-c", _PROBE, *MODEL, "--no-session", "-p", "go"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.splitlines()[-1] == "0 []"

"""tau._code_cache keeps the code of generated ``__init__`` methods between runs, as bytecode is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# A run that makes a new dataclass's first object; it reports whether it compiled anything.
_RUN = """
import json, sys
from tau._dataclass import dataclass
import tau._code_cache as cache

@dataclass(frozen=True)
class Probe:
    alpha_{n}: int
    beta: str = "b"

probe = Probe(1)
print(json.dumps({{"compiled": cache._added, "path": cache.cache_path(), "beta": probe.beta}}))
"""


def _run(prefix: Path, n: int = 0, *flags: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, *flags, "-c", _RUN.format(n=n)], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_the_second_run_takes_the_code_the_first_compiled(tmp_path: Path) -> None:
    first = _run(tmp_path)
    assert first["compiled"] is True and first["beta"] == "b"
    assert str(first["path"]).startswith(str(tmp_path)) and Path(str(first["path"])).is_file()
    second = _run(tmp_path)
    assert second["compiled"] is False and second["beta"] == "b"


def test_a_changed_class_compiles_anew_and_both_are_kept(tmp_path: Path) -> None:
    _run(tmp_path, 1)
    assert _run(tmp_path, 2)["compiled"] is True
    assert _run(tmp_path, 1)["compiled"] is False and _run(tmp_path, 2)["compiled"] is False


def test_a_damaged_file_is_compiled_around_and_replaced(tmp_path: Path) -> None:
    path = Path(str(_run(tmp_path)["path"]))
    path.write_bytes(path.read_bytes()[:40])
    assert _run(tmp_path)["compiled"] is True
    assert _run(tmp_path)["compiled"] is False


def test_nothing_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    result = _run(tmp_path, 0, "-B")
    assert result["compiled"] is True and not Path(str(result["path"])).exists()

"""``update_json_file``: the one read-modify-write of a shared JSON file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tau._lockdir import LockTimeoutError, held, lock_path_for
from tau._shared_file import update_json_file


def test_the_change_sees_the_file_as_it_is_now_and_its_result_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    path.write_text(json.dumps({"a": 1}))

    def change(data: dict[str, Any]) -> int:
        data["b"] = 2
        return len(data)

    assert update_json_file(path, change) == 2
    assert json.loads(path.read_text()) == {"a": 1, "b": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.json"]  # no lock, no temporary file left


def test_a_missing_file_is_created_only_when_the_change_adds_something(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "shared.json"
    update_json_file(path, lambda data: None)
    assert not path.exists()
    update_json_file(path, lambda data: data.update(x=True))
    assert json.loads(path.read_text()) == {"x": True}


def test_a_damaged_file_is_never_written_over(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    path.write_text('{"a": ')
    with pytest.raises(ValueError, match="invalid JSON"):
        update_json_file(path, lambda data: data.update(b=1))
    assert path.read_text() == '{"a": '


def test_a_change_that_raises_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    path.write_text('{"a": 1}')

    def change(data: dict[str, Any]) -> None:
        data.clear()
        raise RuntimeError("refused")

    with pytest.raises(RuntimeError):
        update_json_file(path, change)
    assert path.read_text() == '{"a": 1}'
    assert not lock_path_for(path, follow_links=True).exists()


def test_it_waits_for_another_holder_of_the_lock_then_gives_up(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    with (
        held(lock_path_for(path, follow_links=True), stale_s=10, timeout_s=1),
        pytest.raises(LockTimeoutError),
    ):
        update_json_file(path, lambda data: data.update(a=1), timeout_s=0.1)
    assert not path.exists()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "shared.json"
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from tau._lockdir import held, lock_path_for\n"
        "with held(lock_path_for(Path(sys.argv[1]), follow_links=True), stale_s=10, timeout_s=5):\n"
        "    print('held', flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert done.stdout == "held\n" and done.returncode == -9
    assert lock_path_for(path, follow_links=True).exists()
    update_json_file(path, lambda data: data.update(a=1), timeout_s=2)
    assert json.loads(path.read_text()) == {"a": 1}

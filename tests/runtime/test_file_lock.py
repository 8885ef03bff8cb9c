"""The lock of a shared file, in pi's protocol: a directory ``<file>.lock`` made with mkdir, kept fresh
while held, removed on release, taken over when its holder is gone; an older tau's lock file no
longer blocks anyone. (With the real pi: tests/cli/test_pi16_file_locks.py.)"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tau._lockdir import DirLock
from tau.accounts.auth_storage import AuthStorage
from tau.accounts.models_store import stored_models
from tau.config.paths import STORE_STALE_S, LockTimeoutError, file_lock, write_file_atomic
from tau.config.project_trust import TrustStore
from tau.config.settings import SettingsManager

HOLD = """
import sys, time
from pathlib import Path
from tau.config.paths import file_lock
with file_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(60)
"""


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_held_lock_is_a_directory_and_its_release_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"

    with file_lock(target):
        assert (tmp_path / "settings.json.lock").is_dir()

    assert os.listdir(tmp_path) == []


def test_processes_taking_the_lock_in_turn_lose_no_update(tmp_path: Path) -> None:
    counter = tmp_path / "counter.json"
    counter.write_text("0")
    add = (
        "import sys\nfrom pathlib import Path\nfrom tau.config.paths import file_lock, write_file_atomic\n"
        "p = Path(sys.argv[1])\n"
        "for _ in range(40):\n"
        "    with file_lock(p):\n        write_file_atomic(p, str(int(p.read_text()) + 1))\n"
    )

    adders = [subprocess.Popen([sys.executable, "-c", add, str(counter)]) for _ in range(2)]

    assert [adder.wait(timeout=60) for adder in adders] == [0, 0]
    assert counter.read_text() == "80"
    assert os.listdir(tmp_path) == ["counter.json"]


def test_a_lock_directory_another_program_made_is_waited_for_until_it_is_removed(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    lock = tmp_path / "settings.json.lock"
    lock.mkdir()  # as pi makes it

    busy = r"settings\.json\.lock: still locked by another process after 0\.1 s"
    with pytest.raises(LockTimeoutError, match=busy), file_lock(target, timeout_s=0.1):
        pass
    threading.Timer(0.3, lock.rmdir).start()
    started = time.monotonic()
    with file_lock(target, timeout_s=5):
        waited = time.monotonic() - started

    assert 0.2 < waited < 3
    assert not lock.exists()


def test_a_lock_its_holder_stopped_touching_is_taken_over_after_the_stale_time_of_its_file(
    tmp_path: Path,
) -> None:
    settings_lock = tmp_path / "settings.json.lock"
    auth_lock = tmp_path / "auth.json.lock"
    for lock in (settings_lock, auth_lock):
        lock.mkdir()
        _age(lock, 11)

    with file_lock(tmp_path / "settings.json", timeout_s=0.1):
        pass
    # pi's auth.json holders touch their lock only every 15 s: 11 s is not stale there.
    auth = tmp_path / "auth.json"
    with pytest.raises(LockTimeoutError), file_lock(auth, timeout_s=0.1, stale_s=STORE_STALE_S):
        pass

    assert not settings_lock.exists()
    assert auth_lock.is_dir()


def test_a_holder_keeps_touching_its_lock(tmp_path: Path) -> None:
    lock = DirLock(tmp_path / "file.lock", stale_s=10, update_s=0.05)
    assert lock.try_acquire()
    try:
        first = lock.path.stat().st_mtime_ns
        time.sleep(0.3)
        later = lock.path.stat().st_mtime_ns
    finally:
        lock.release()

    assert later > first
    assert not lock.path.exists()


def test_the_lock_of_a_killed_tau_is_taken_at_once_and_a_live_one_is_not(tmp_path: Path) -> None:
    target = tmp_path / "auth.json"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(target)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline() == "held\n"
    with pytest.raises(LockTimeoutError), file_lock(target, timeout_s=0.2, stale_s=STORE_STALE_S):
        pass

    holder.kill()  # no clean-up of any kind: the lock directory stays, fresh
    holder.wait(timeout=10)
    assert (tmp_path / "auth.json.lock").is_dir()
    started = time.monotonic()
    with file_lock(target, timeout_s=1, stale_s=STORE_STALE_S):
        waited = time.monotonic() - started

    assert waited < 0.5
    assert not (tmp_path / "auth.json.lock").exists()


def test_an_older_taus_lock_file_is_removed_unless_a_process_still_holds_it(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    old = tmp_path / "settings.json.lock"
    old.touch()
    fd = os.open(old, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as an older tau held it
    try:
        with pytest.raises(LockTimeoutError), file_lock(target, timeout_s=0.1):
            pass
    finally:
        os.close(fd)

    with file_lock(target, timeout_s=0.1):
        assert old.is_dir()

    assert not old.exists()


def test_reading_the_shared_files_removes_an_older_taus_lock_files(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    names = ["settings.json", "auth.json", "trust.json", "models-store.json"]
    for name in names:
        write_file_atomic(agent / name, "{}")
        (agent / f"{name}.lock").touch()

    SettingsManager.create(tmp_path, agent)
    AuthStorage(agent / "auth.json")
    TrustStore(agent).entry(str(tmp_path))
    stored_models("radius", agent / "models-store.json")

    assert sorted(os.listdir(agent)) == sorted(names)


def test_auth_json_is_locked_where_its_symlink_points_and_settings_json_where_the_link_is(
    tmp_path: Path,
) -> None:
    agent, dotfiles = tmp_path / "agent", tmp_path / "dotfiles"
    agent.mkdir()
    dotfiles.mkdir()
    for name in ("auth.json", "settings.json"):
        (dotfiles / name).write_text(json.dumps({}))
        (agent / name).symlink_to(dotfiles / name)

    with file_lock(agent / "auth.json"), file_lock(agent / "settings.json", follow_links=False):
        locks = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*.lock"))

    assert locks == ["agent/settings.json.lock", "dotfiles/auth.json.lock"]

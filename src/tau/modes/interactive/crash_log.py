"""pi 1.6's crash log: ``<agent dir>/crashes.json`` keeps the last five crashes of the terminal UI
(when, tau's version, the error and its traceback, the session file, the folder). The next start
says so once ("tau crashed on ... Run /bug to report it"), and ``/bug`` attaches the records to its
``diagnostics.json`` and clears the log. Same file and record shape as pi's."""

from __future__ import annotations

import contextlib
import json
import os
import time
import traceback
from datetime import UTC, datetime
from typing import Any

__all__ = ["clear_crash_log", "crash_notice", "read_crash_log", "record_crash", "take_unnotified_crash"]

_MAX_RECORDS = 5
_MAX_AGE_S = 7 * 24 * 60 * 60


def _path(agent_dir: str) -> str:
    return os.path.join(agent_dir, "crashes.json")


def read_crash_log(agent_dir: str) -> list[dict[str, Any]]:
    """The records (a broken or missing file is none)."""
    try:
        with open(_path(agent_dir), encoding="utf-8") as file:
            records = json.load(file)
    except (OSError, ValueError):
        return []
    if not isinstance(records, list):
        return []
    return [
        r
        for r in records
        if isinstance(r, dict) and isinstance(r.get("timestamp"), str) and isinstance(r.get("message"), str)
    ]


def _write(agent_dir: str, records: list[dict[str, Any]]) -> None:
    os.makedirs(agent_dir, exist_ok=True)
    with open(_path(agent_dir), "w", encoding="utf-8") as file:
        file.write(json.dumps(records, indent=2) + "\n")


def record_crash(
    agent_dir: str, kind: str, error: BaseException, *, session_file: str | None, cwd: str
) -> None:
    """Best effort, from a program that is already failing: never raises."""
    from tau import __version__

    try:
        record = {
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "version": __version__,
            "kind": kind,
            "message": str(error) or type(error).__name__,
            "stack": "".join(traceback.format_exception(error)),
            "sessionFile": session_file,
            "cwd": cwd,
        }
        _write(agent_dir, [*read_crash_log(agent_dir), record][-_MAX_RECORDS:])
    except Exception:  # a log that cannot be written must not hide the crash being recorded
        return


def take_unnotified_crash(agent_dir: str, now: float | None = None) -> dict[str, Any] | None:
    """The newest crash of the last week not announced yet; every record is marked announced."""
    records = read_crash_log(agent_dir)
    moment = time.time() if now is None else now
    for record in reversed(records):
        try:
            when = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        if not record.get("notified") and moment - when <= _MAX_AGE_S:
            with contextlib.suppress(OSError):  # announcing it again is harmless
                _write(agent_dir, [{**r, "notified": True} for r in records])
            return dict(record)
    return None


def crash_notice(record: dict[str, Any]) -> str:
    when = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00")).astimezone()
    return (
        f"tau crashed on {when:%Y-%m-%d %H:%M} ({record['message']}). Run /bug to report it; "
        "the crash details are attached automatically."
    )


def clear_crash_log(agent_dir: str) -> None:
    with contextlib.suppress(OSError):  # attached again next time
        os.remove(_path(agent_dir))

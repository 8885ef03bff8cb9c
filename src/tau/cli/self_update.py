"""``tau update --self`` (``tau update self``, ``--all``): update tau itself, as ``pi update`` does.

The command is ``TAU_SELF_UPDATE_COMMAND`` (split on whitespace), else the ``selfUpdateCommand``
setting (an argv list), else pip for the interpreter tau runs on. ``{packageName}``,
``{version}`` and ``{installSpec}`` are replaced as in pi's; tau has no release feed to ask for
the newest version, so ``{version}`` is ``latest`` and ``{installSpec}`` the package name, and the
command always runs. An editable install (a source checkout) is not replaced: it is updated
where it lives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tau.errors import TauError

__all__ = ["PACKAGE_NAME", "SelfUpdateError", "self_update"]

PACKAGE_NAME = "tau-agent"


class SelfUpdateError(TauError):
    """tau could not be updated; the message says why and what to do."""


def _editable_folder() -> str | None:
    from importlib import metadata

    try:
        raw = metadata.distribution(PACKAGE_NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not raw:
        return None
    try:
        info = json.loads(raw)
    except ValueError:
        return None
    if isinstance(info, dict) and isinstance(info.get("dir_info"), dict) and info["dir_info"].get("editable"):
        url = str(info.get("url", ""))
        return url.removeprefix("file://") or "its source folder"
    return None


def _command(setting: object, *, force: bool) -> list[str]:
    custom = os.environ.get("TAU_SELF_UPDATE_COMMAND", "").split()
    if not custom and isinstance(setting, list) and setting and all(isinstance(a, str) for a in setting):
        custom = list(setting)
    if custom:
        values = {"{packageName}": PACKAGE_NAME, "{version}": "latest", "{installSpec}": PACKAGE_NAME}
        out = []
        for arg in custom:
            for key, value in values.items():
                arg = arg.replace(key, value)
            out.append(arg)
        return out
    if (folder := _editable_folder()) is not None:
        raise SelfUpdateError(
            f"tau is installed from {folder} (an editable install): update it there (git pull), "
            "or set TAU_SELF_UPDATE_COMMAND"
        )
    return [
        sys.executable, "-m", "pip", "install", "--upgrade", *(["--force-reinstall"] if force else []), PACKAGE_NAME
    ]  # fmt: skip


def self_update(setting: object, *, force: bool) -> None:
    """Run the update command, its output going to the terminal; ``SelfUpdateError`` if it fails."""
    command = _command(setting, force=force)
    print(f"Updating tau: {' '.join(command)}", flush=True)
    try:
        result = subprocess.run(command, stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        raise SelfUpdateError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    if result.returncode != 0:
        raise SelfUpdateError(f"the update command failed (exit {result.returncode}): {' '.join(command)}")

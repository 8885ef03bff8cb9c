"""Project settings that choose where tau reads or writes data wait for the folder's trust.

None of a folder's settings load until it is trusted, but one is needed before the trust decision:
the session folder, which picks the session ``-c`` continues and where the new one is written. pi
1.6 reads a project's ``sessionDir`` before deciding; tau does not, on purpose: an untrusted clone
could otherwise have tau continue a conversation it planted (forged turns for the model) and write
the user's prompts, files and command output into the repository. So the project's value applies
only once the folder is trusted, and until then it is ignored with one warning naming it.

Every other key of the settings schema is read from a project only once the folder is trusted
(``shellPath``, ``npmCommand``, ``packages``, ``extensions``, ``skills``, ...), or never from a
project at all (``httpProxy``, ``defaultProjectTrust``): ``sessionDir`` is the only key that picks
where data goes and was read earlier.
"""

from __future__ import annotations

import os

from tau.config.config_errors import ConfigError, read_json_file
from tau.config.paths import CONFIG_DIR_NAME, pi_project_settings_path, project_settings_path

__all__ = ["DATA_LOCATION_KEYS", "data_location_settings", "ignored_settings_warning"]

DATA_LOCATION_KEYS = ("sessionDir",)


def data_location_settings(cwd: str | os.PathLike[str]) -> list[str]:
    """The keys of ``DATA_LOCATION_KEYS`` the project's ``.tau/settings.json`` or pi's
    ``.pi/settings.json`` sets (a file that cannot be read sets none: it is reported once the folder
    is trusted and loads)."""
    found: list[str] = []
    for path in (project_settings_path(cwd), pi_project_settings_path(cwd)):
        try:
            data = read_json_file(path)
        except (ConfigError, OSError):
            continue
        if isinstance(data, dict):
            found += [key for key in DATA_LOCATION_KEYS if data.get(key) is not None and key not in found]
    return found


def ignored_settings_warning(keys: list[str]) -> str:
    """The one line that says which of the project's settings wait for trust."""
    named = ", ".join(f'"{key}"' for key in keys)
    return (
        f"the folder is not trusted, so {named} in its {CONFIG_DIR_NAME}/ or .pi/ settings.json is ignored "
        "(sessions stay where they would be without it); trust the folder to use it"
    )

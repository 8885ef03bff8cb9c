"""``<agent dir>/models-store.json``: the model lists providers report for an account, in pi 1.6's
format, ``{"<provider>": {"models": [Model, ...], "checkedAt": <epoch ms>}}``.

The Radius gateway lists the models its organisation allows; once known, that list replaces the
catalogue's for the provider (pi does the same, so both read one file). Written under pi's lock of
the file, replaced in one step; a file that cannot be read counts as empty.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tau.ai.types import JsonObject, Model
from tau.config.paths import STORE_STALE_S, agent_dir, forget_old_lock_file, update_json_file

__all__ = ["MODELS_STORE_FILE", "models_store_path", "store_models", "stored_models"]

MODELS_STORE_FILE = "models-store.json"


def models_store_path(base: Path | None = None) -> Path:
    return (base or agent_dir()) / MODELS_STORE_FILE


def stored_models(provider: str, path: Path | None = None) -> list[Model] | None:
    """The models last stored for ``provider``; ``None`` when there is no usable entry."""
    target = path or models_store_path()
    forget_old_lock_file(target)
    entry = _read(target).get(provider)
    models = entry.get("models") if isinstance(entry, dict) else None
    if not isinstance(models, list):
        return None
    result = []
    for item in models:
        try:
            model = Model.from_json(item)
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # one malformed entry does not hide the others
        if model.provider == provider:
            result.append(model)
    return result


def store_models(provider: str, models: list[JsonObject], path: Path | None = None) -> None:
    """Replace ``provider``'s list (other providers' entries are kept). Raises ``OSError``."""
    target = path or models_store_path()

    def apply(data: dict[str, object]) -> None:
        data[provider] = {"models": models, "checkedAt": int(time.time() * 1000)}

    update_json_file(target, apply, read=_read, stale_s=STORE_STALE_S)


def _read(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

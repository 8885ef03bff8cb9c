"""``tau --list-models [search]``: the models you can use now, as a table."""

from __future__ import annotations

import difflib
from typing import TextIO

from tau.accounts.model_registry import ModelRegistry


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:g}M"
    if count >= 1_000:
        return f"{count / 1_000:g}K"
    return str(count)


def list_models(registry: ModelRegistry, search: str | None, out: TextIO) -> None:
    """Models whose provider has auth configured, filtered by a fuzzy ``search``."""
    models = sorted(registry.get_available(), key=lambda m: (m.provider, m.id))
    if search:
        needle = search.lower()
        models = [
            m
            for m in models
            if needle in f"{m.provider}/{m.id}".lower()
            or difflib.SequenceMatcher(None, needle, m.id.lower()).ratio() >= 0.6
        ]
    if not models:
        hint = f' matching "{search}"' if search else ""
        out.write(
            f"No models available{hint}. Set a provider key (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) "
            "or add providers in models.json.\n"
        )
        return
    rows = [("provider", "model", "context", "max-out", "thinking", "images")]
    rows += [
        (
            m.provider,
            m.id,
            _tokens(m.context_window),
            _tokens(m.max_tokens),
            "yes" if m.reasoning else "no",
            "yes" if "image" in m.input else "no",
        )
        for m in models
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() + "\n"
        )

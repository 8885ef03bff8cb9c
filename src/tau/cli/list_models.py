"""``tau --list-models [search]``: the models you can use now, as a table."""

from __future__ import annotations

from typing import TextIO

from tau.accounts.model_registry import ModelRegistry


def _tokens(count: int) -> str:
    """``200K``, ``16.4K``, ``1M``, ``1.2M``: whole thousands or millions, else one decimal (pi's)."""
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            return f"{count // size}{unit}" if count % size == 0 else f"{count / size:.1f}{unit}"
    return str(count)


def list_models(registry: ModelRegistry, search: str | None, out: TextIO) -> None:
    """Models whose provider has auth configured, filtered by a fuzzy ``search``."""
    models = registry.get_available()
    if not models:
        out.write(
            "No models available. Set a provider key (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) "
            "or add providers in models.json.\n"
        )
        return
    if search:  # as pi: every word of the search, in order, in "provider id"
        from tau.modes.interactive.fuzzy import fuzzy_filter

        models = fuzzy_filter(search, models, lambda m: f"{m.provider} {m.id}")
    if not models:
        out.write(f'No models matching "{search}"\n')
        return
    models = sorted(models, key=lambda m: (m.provider.casefold(), m.provider, m.id.casefold(), m.id))
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
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + "\n")

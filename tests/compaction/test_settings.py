"""``compaction.modelOverrides`` applied to the ordinary settings (``tau.compaction.for_model``)."""

from __future__ import annotations

from tau.compaction import CompactionSettings
from tau.compaction.settings import for_model

ORDINARY = CompactionSettings(enabled=False, reserve_tokens=1000, keep_recent_tokens=2000)


def test_each_budget_falls_back_on_its_own_to_the_ordinary_setting() -> None:
    overrides = {"p/big": {"keepRecentTokens": 50_000}}
    assert for_model(ORDINARY, overrides, "p/big") == CompactionSettings(False, 1000, 50_000)


def test_keys_are_the_exact_provider_slash_model_id_slashes_included() -> None:
    overrides = {"openrouter/anthropic/claude": {"reserveTokens": 7}, "p/Big": {"reserveTokens": 9}}
    assert for_model(ORDINARY, overrides, "openrouter/anthropic/claude").reserve_tokens == 7
    assert for_model(ORDINARY, overrides, "p/big") == ORDINARY  # case-sensitive
    assert for_model(ORDINARY, overrides, None) == ORDINARY  # no model


def test_values_that_are_not_whole_counts_keep_the_ordinary_setting() -> None:
    for bad in (-1, 1.5, "400", True, None, 2**53):
        assert for_model(ORDINARY, {"p/m": {"reserveTokens": bad}}, "p/m") == ORDINARY
    assert for_model(ORDINARY, {"p/m": 5000}, "p/m") == ORDINARY  # an entry must be an object
    assert for_model(ORDINARY, {"p/m": {"reserveTokens": 4000.0}}, "p/m").reserve_tokens == 4000

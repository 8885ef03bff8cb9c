"""Tests for tau.ai.thinking: reasoning levels, maps and budgets."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tau.ai.thinking import (
    THINKING_LEVELS,
    adjust_max_tokens_for_thinking,
    clamp_thinking_level,
    get_supported_thinking_levels,
    map_thinking_level,
    supports_xhigh,
)
from tau.ai.types import Model, ThinkingLevel


def make_model(
    model_id: str = "m", reasoning: bool = True, level_map: dict[str, str | None] | None = None
) -> Model:
    return Model(
        id=model_id, api="x", provider="x", base_url="", reasoning=reasoning, thinking_level_map=level_map
    )


budget_levels = st.sampled_from(["minimal", "low", "medium", "high", "xhigh"])


def test_high_on_a_roomy_model_adds_the_high_budget() -> None:
    assert adjust_max_tokens_for_thinking(32000, 64000, "high") == (48384, 16384)


def test_a_small_model_limit_shrinks_the_budget_to_leave_room_for_the_answer() -> None:
    assert adjust_max_tokens_for_thinking(0, 2000, "high") == (2000, 976)


def test_a_tiny_model_limit_gives_a_zero_budget() -> None:
    assert adjust_max_tokens_for_thinking(0, 500, "low") == (500, 0)


def test_xhigh_uses_the_high_budget() -> None:
    assert adjust_max_tokens_for_thinking(1000, 100_000, "xhigh") == (17384, 16384)


def test_custom_budgets_override_the_defaults() -> None:
    assert adjust_max_tokens_for_thinking(1000, 100_000, "low", {"low": 4000}) == (5000, 4000)


@given(st.integers(0, 200_000), st.integers(1, 200_000), budget_levels)
def test_the_budget_never_exceeds_the_token_limit(base: int, model_max: int, level: ThinkingLevel) -> None:
    max_tokens, budget = adjust_max_tokens_for_thinking(base, model_max, level)
    assert max_tokens <= model_max
    assert budget >= 0
    assert budget < max_tokens or budget == 0


def test_a_model_without_reasoning_supports_only_off() -> None:
    assert get_supported_thinking_levels(make_model(reasoning=False)) == ["off"]


def test_a_reasoning_model_without_a_map_supports_all_but_xhigh() -> None:
    assert get_supported_thinking_levels(make_model()) == ["off", "minimal", "low", "medium", "high"]


def test_a_mapped_xhigh_is_supported_and_null_levels_are_not() -> None:
    model = make_model(level_map={"off": None, "minimal": None, "xhigh": "max"})
    assert get_supported_thinking_levels(model) == ["low", "medium", "high", "xhigh"]


def test_a_supported_level_clamps_to_itself() -> None:
    assert clamp_thinking_level(make_model(), "medium") == "medium"


def test_an_unsupported_level_clamps_to_the_next_higher_supported_level() -> None:
    model = make_model(level_map={"minimal": None, "low": None})
    assert clamp_thinking_level(model, "minimal") == "medium"


def test_xhigh_clamps_down_to_high_when_nothing_higher_is_supported() -> None:
    assert clamp_thinking_level(make_model(), "xhigh") == "high"


def test_a_non_reasoning_model_clamps_every_level_to_off() -> None:
    model = make_model(reasoning=False)
    assert [clamp_thinking_level(model, level) for level in THINKING_LEVELS] == ["off"] * len(THINKING_LEVELS)


def test_off_clamps_upward_when_off_is_unsupported() -> None:
    assert clamp_thinking_level(make_model(level_map={"off": None}), "off") == "minimal"


def test_an_unknown_level_clamps_to_the_lowest_supported_level() -> None:
    assert clamp_thinking_level(make_model(level_map={"off": None}), "turbo") == "minimal"


@given(
    st.sampled_from(THINKING_LEVELS),
    st.dictionaries(st.sampled_from(THINKING_LEVELS), st.none() | st.just("v")),
)
def test_a_clamped_level_is_always_supported(level: str, level_map: dict[str, str | None]) -> None:
    model = make_model(level_map=level_map)
    supported = get_supported_thinking_levels(model)
    assert clamp_thinking_level(model, level) in (supported or ["off"])


def test_xhigh_is_supported_when_the_map_names_it() -> None:
    assert supports_xhigh(make_model("claude-opus-4-7", level_map={"xhigh": "xhigh"}))


def test_xhigh_is_unsupported_when_the_map_marks_it_null() -> None:
    assert not supports_xhigh(make_model("gpt-5.4", level_map={"xhigh": None}))


def test_without_a_map_entry_xhigh_follows_the_model_id() -> None:
    assert supports_xhigh(make_model("gpt-5.2-codex"))
    assert supports_xhigh(make_model("claude-opus-4-6"))
    assert supports_xhigh(make_model("claude-opus-4.6"))
    assert not supports_xhigh(make_model("gpt-5.1"))
    assert not supports_xhigh(make_model("claude-sonnet-4-5", level_map={"off": None}))


def test_a_mapped_level_gives_the_provider_value() -> None:
    assert map_thinking_level(make_model(level_map={"xhigh": "max"}), "xhigh") == "max"


def test_an_unmapped_level_maps_to_itself() -> None:
    assert map_thinking_level(make_model(level_map={"xhigh": "max"}), "low") == "low"


def test_a_level_mapped_to_null_maps_to_none() -> None:
    assert map_thinking_level(make_model(level_map={"off": None}), "off") is None


def test_max_is_offered_only_when_the_level_map_names_it() -> None:
    assert "max" not in get_supported_thinking_levels(make_model(level_map={"xhigh": "xhigh"}))
    assert clamp_thinking_level(make_model(level_map={"xhigh": "xhigh"}), "max") == "xhigh"
    assert clamp_thinking_level(make_model(level_map={"max": "max"}), "max") == "max"

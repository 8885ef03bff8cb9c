"""Tests for tau.ai.cost: dollar cost from usage and catalogue prices."""

from __future__ import annotations

import pytest

from tau.ai.cost import apply_reported_cost, apply_service_tier, calculate_cost
from tau.ai.types import Cost, CostTier, Model, ModelCost, Usage


def make_model(model_id: str = "m", **prices: float) -> Model:
    return Model(
        id=model_id, api="openai-responses", provider="openai", base_url="", cost=ModelCost(**prices)
    )


def priced_usage() -> Usage:
    usage = Usage(input=1_000_000, output=500_000, cache_read=2_000_000, cache_write=100_000)
    calculate_cost(make_model(input=3, output=15, cache_read=0.3, cache_write=3.75), usage)
    return usage


def test_a_million_input_tokens_at_three_dollars_cost_three_dollars() -> None:
    usage = Usage(input=1_000_000)
    cost = calculate_cost(make_model(input=3), usage)
    assert cost.input == pytest.approx(3.0)
    assert cost.total == pytest.approx(3.0)


def test_every_part_is_priced_per_million_and_summed() -> None:
    cost = priced_usage().cost
    assert (cost.input, cost.output, cost.cache_read, cost.cache_write) == pytest.approx(
        (3.0, 7.5, 0.6, 0.375)
    )
    assert cost.total == pytest.approx(11.475)


def _tiered_model() -> Model:
    prices = ModelCost(
        input=2,
        output=6,
        tiers=[
            CostTier(input_tokens_above=200_000, input=4, output=12),
            CostTier(input_tokens_above=100_000, input=3, output=9),
        ],
    )
    return Model(id="m", api="openai-responses", provider="xai", base_url="", cost=prices)


def test_a_long_request_is_billed_at_the_highest_tier_its_input_exceeds() -> None:
    cost = calculate_cost(_tiered_model(), Usage(input=150_000, cache_read=100_000, output=1_000_000))
    assert (cost.input, cost.output) == pytest.approx((0.6, 12.0))


def test_a_request_at_a_tier_threshold_keeps_the_base_prices() -> None:
    cost = calculate_cost(_tiered_model(), Usage(input=100_000, output=1_000_000))
    assert (cost.input, cost.output) == pytest.approx((0.2, 6.0))


def test_price_tiers_round_trip_through_pi_json() -> None:
    data = {
        "input": 2,
        "output": 6,
        "cacheRead": 0.5,
        "cacheWrite": 0,
        "tiers": [{"inputTokensAbove": 200000, "input": 4, "output": 12, "cacheRead": 1, "cacheWrite": 0}],
    }
    assert ModelCost.from_json(data).to_json() == data


def test_the_cost_is_written_into_the_usage_and_returned() -> None:
    usage = Usage(output=1_000_000)
    cost = calculate_cost(make_model(output=10), usage)
    assert cost is usage.cost
    assert usage.cost.output == pytest.approx(10.0)


def test_negative_catalogue_prices_count_as_free() -> None:
    usage = Usage(input=1000, output=1000)
    cost = calculate_cost(make_model(input=-1_000_000, output=-1_000_000), usage)
    assert cost.total == 0


def test_the_flex_tier_halves_every_part() -> None:
    usage = priced_usage()
    apply_service_tier(usage, "flex", "gpt-5")
    assert usage.cost.input == pytest.approx(1.5)
    assert usage.cost.total == pytest.approx(11.475 / 2)


def test_the_priority_tier_doubles_the_cost() -> None:
    usage = priced_usage()
    apply_service_tier(usage, "priority", "gpt-5")
    assert usage.cost.total == pytest.approx(11.475 * 2)


def test_the_priority_tier_on_gpt_5_5_multiplies_by_two_and_a_half() -> None:
    usage = priced_usage()
    apply_service_tier(usage, "priority", "gpt-5.5")
    assert usage.cost.output == pytest.approx(7.5 * 2.5)
    assert usage.cost.total == pytest.approx(11.475 * 2.5)


@pytest.mark.parametrize("tier", [None, "default", "auto"])
def test_other_tiers_leave_the_cost_alone(tier: str | None) -> None:
    usage = priced_usage()
    apply_service_tier(usage, tier, "gpt-5.5")
    assert usage.cost.total == pytest.approx(11.475)


def test_openrouters_billed_cost_replaces_the_estimate_only_when_complete() -> None:
    def total(reported: object) -> tuple[float, bool | None]:
        usage = Usage(input=1000, output=100)
        usage.cost = Cost(input=0.001, output=0.002, total=0.003, total_from_provider=False)
        apply_reported_cost(usage, reported)
        return usage.cost.total, usage.cost.total_from_provider

    assert total({"cost": 0.5, "is_byok": False}) == (0.5, True)
    byok = {"cost": 0.01, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.2}}
    assert total(byok) == (0.01 + 0.2, True)
    split = {
        "upstream_inference_cost": None,
        "upstream_inference_prompt_cost": 0.1,
        "upstream_inference_completions_cost": 0.2,
    }
    assert total({"cost": 0.0, "is_byok": True, "cost_details": split}) == (0.0 + (0.1 + 0.2), True)
    assert total({"cost": 0.5}) == (0.003, False)  # BYOK unknown: the estimate stays
    assert total({"cost": -1, "is_byok": False}) == (0.003, False)
    assert total({"cost": 0.01, "is_byok": True}) == (0.003, False)  # no upstream figures


def test_an_hour_long_cache_write_is_billed_at_twice_the_input_price() -> None:
    model = Model(id="m", api="x", provider="p", base_url="", cost=ModelCost(input=3.0, cache_write=3.75))
    usage = Usage(cache_write=1_000_000, cache_write_1h=400_000)
    assert calculate_cost(model, usage).cache_write == 3.75 * 0.6 + 6.0 * 0.4
    assert usage.cost.total_from_provider is False

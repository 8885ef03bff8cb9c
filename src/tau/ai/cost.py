"""Dollar cost of a response from its token usage and the model's per-million prices."""

from __future__ import annotations

from tau.ai.types import Cost, CostTier, Model, ModelCost, Usage

_PER_MILLION = 1_000_000


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Fill ``usage.cost`` from the model's prices (negative sentinel prices count as 0) and return it.

    A long request is billed at the highest price tier whose threshold its input (fresh plus cached
    tokens) exceeds, as pi does.
    """
    prices = _prices_for(model.cost, usage.input + usage.cache_read + usage.cache_write)
    cost = usage.cost
    cost.input = _price(prices.input) * usage.input
    cost.output = _price(prices.output) * usage.output
    cost.cache_read = _price(prices.cache_read) * usage.cache_read
    cost.cache_write = _price(prices.cache_write) * usage.cache_write
    _recompute_total(cost)
    return cost


def _prices_for(cost: ModelCost, input_tokens: int) -> ModelCost | CostTier:
    chosen: ModelCost | CostTier = cost
    threshold = -1
    for tier in cost.tiers:
        if input_tokens > tier.input_tokens_above > threshold:
            chosen, threshold = tier, tier.input_tokens_above
    return chosen


def service_tier_multiplier(tier: str | None, model_id: str) -> float:
    """The price factor of an OpenAI service tier: flex halves, priority doubles (×2.5 on gpt-5.5)."""
    if tier == "flex":
        return 0.5
    if tier == "priority":
        return 2.5 if model_id == "gpt-5.5" else 2.0
    return 1.0


def apply_service_tier(usage: Usage, tier: str | None, model_id: str) -> Cost:
    """Scale an already calculated ``usage.cost`` by the service tier's multiplier and return it."""
    cost = usage.cost
    multiplier = service_tier_multiplier(tier, model_id)
    if multiplier != 1.0:
        cost.input *= multiplier
        cost.output *= multiplier
        cost.cache_read *= multiplier
        cost.cache_write *= multiplier
        _recompute_total(cost)
    return cost


def _price(per_million: float) -> float:
    """Dollars per token; OpenRouter's negative "router" sentinel prices become free."""
    return max(per_million, 0.0) / _PER_MILLION


def _recompute_total(cost: Cost) -> None:
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write

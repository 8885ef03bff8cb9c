"""Dollar cost of a response from its token usage and the model's per-million prices."""

from __future__ import annotations

import math

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
    long_write = min(usage.cache_write_1h or 0, usage.cache_write)
    cost.cache_write = (
        _price(prices.cache_write) * (usage.cache_write - long_write) + 2 * _price(prices.input) * long_write
    )
    _recompute_total(cost)
    cost.total_from_provider = False
    return cost


def apply_reported_cost(usage: Usage, reported: object) -> None:
    """Take OpenRouter's billed cost (its ``usage.cost``) as the total when the report is complete,
    as pi-ai does: a non-BYOK request costs what it says; a BYOK one adds the upstream cost."""
    if not isinstance(reported, dict) or not _is_cost(reported.get("cost")):
        return
    billed = float(reported["cost"])
    byok = reported.get("is_byok")
    if byok is False:
        total = billed
    elif byok is True:
        details = reported.get("cost_details")
        if not isinstance(details, dict):
            return
        upstream = details.get("upstream_inference_cost")
        if upstream is None:
            prompt = details.get("upstream_inference_prompt_cost")
            completion = details.get("upstream_inference_completions_cost")
            if not (_is_cost(prompt) and _is_cost(completion)):
                return
            upstream = float(prompt) + float(completion)  # type: ignore[arg-type]
        if not _is_cost(upstream):
            return
        total = billed + float(upstream)
    else:
        return
    usage.cost.total = total
    usage.cost.total_from_provider = True


def _is_cost(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


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

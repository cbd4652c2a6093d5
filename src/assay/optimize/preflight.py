"""Checks before an optimization's first model call, so a missing key or a budget that can
never stop fails in a second with a line naming the model, not after a search in which
every call failed (and the seed was written out as the "best" prompt)."""

from __future__ import annotations

import os

from assay.models.prices import DEFAULT_PRICES
from assay.models.providers import PROVIDERS
from assay.optimize.config import OptimizeConfig


class PreflightError(ValueError):
    """The optimization cannot work as configured; the message names the model or limit."""


def _models(config: OptimizeConfig) -> dict[str, str]:
    return {"task_model": config.task_model, "reflection_model": config.reflection_model}


def check_api_keys(config: OptimizeConfig) -> None:
    """Every provider model whose provider needs a key has one in the environment."""
    for key, model in _models(config).items():
        prefix, sep, _ = model.partition("/")
        spec = PROVIDERS.get(prefix) if sep else None
        if spec is None or not spec.key_required:
            continue
        if not any(os.environ.get(env) for env in spec.api_key_env):
            raise PreflightError(
                f"{key} {model!r}: no API key; set {' or '.join(spec.api_key_env)} "
                "(every call of the search would fail)"
            )


def check_cost_budget(config: OptimizeConfig) -> None:
    """A budget limited only by cost needs every model priced: an unpriced model costs
    ``$0`` on the meter, so the search would never stop."""
    budget = config.budget
    others = (budget.max_metric_calls, budget.max_iterations, budget.max_wall_time_s)
    if budget.max_cost_usd is None or any(v is not None for v in others):
        return
    for key, model in _models(config).items():
        prefix, sep, name = model.partition("/")
        provider, model_name = (prefix, name) if sep else (None, model)
        if DEFAULT_PRICES.lookup(provider, model_name) is None:
            raise PreflightError(
                f"budget.max_cost_usd is the only limit but {key} {model!r} has no price, so "
                "its spend counts as $0 and the search would never stop; add "
                "max_metric_calls, max_iterations or max_wall_time_s, or price the model"
            )


def preflight(config: OptimizeConfig) -> None:
    """All checks above, cheapest first."""
    check_cost_budget(config)
    check_api_keys(config)

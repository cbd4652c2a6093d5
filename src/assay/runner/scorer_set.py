"""A run's scorers: built from any accepted form, with unique ids, described as specs.

Accepted forms: a ``Scorer``, a registered type id (``"faithfulness"``), a ``ScorerConfig``,
or a config dict (``{"type": "tone", "params": {...}}``). A config with ``enabled: false`` is
left out (it does not run and is not part of the run's record). Two scorers with the same id
get ``-2``, ``-3`` suffixes, because results are keyed by scorer id and one must not overwrite
the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from assay.fingerprint import digest
from assay.scoring.registry import ScorerConfig, create_scorer
from assay.scoring.scorer import Scorer
from assay.types import ScorerSpec


def build_scorers(scorers: Iterable[Any] | None) -> list[Scorer]:
    """The run's ``Scorer`` objects, ids made unique."""
    built: list[Scorer] = []
    seen: dict[str, int] = {}
    for position, entry in enumerate(scorers or ()):
        if not _enabled(entry):
            continue
        scorer = _build(entry, position)
        if scorer.aggregations:  # the registry (and numpy) only when some scorer names one
            from assay.summary.aggregations import check_aggregations

            try:
                check_aggregations(scorer.aggregations)  # fail before the run, not at its end
            except KeyError as exc:
                raise ValueError(f"scorers[{position}] ({scorer.id!r}): {exc}") from exc
        count = seen.get(scorer.id, 0) + 1
        seen[scorer.id] = count
        if count > 1:
            scorer = scorer.with_options(id=f"{scorer.id}-{count}")
        built.append(scorer)
    return built


def _enabled(entry: Any) -> bool:
    """``enabled: false`` in a scorer config keeps the scorer out of the run entirely."""
    if isinstance(entry, ScorerConfig):
        return entry.enabled
    if isinstance(entry, Mapping):
        return entry.get("enabled", True) is not False
    return True


def _build(entry: Any, position: int) -> Scorer:
    if isinstance(entry, Scorer):
        return entry
    if isinstance(entry, str | ScorerConfig | Mapping):
        try:
            return create_scorer(entry)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"scorers[{position}]: {exc}") from exc
    raise TypeError(
        f"scorers[{position}]: expected a Scorer, a type id or a config dict, got "
        f"{type(entry).__name__}"
    )


def scorer_spec(scorer: Scorer) -> ScorerSpec:
    """How a run records ``scorer`` (enough to re-create registered types on resume)."""
    parts = scorer.fingerprint_parts()
    return ScorerSpec(
        id=scorer.id,
        label=scorer.label,
        type=scorer.type_id,
        params=dict(scorer.params),
        weight=scorer.weight,
        fingerprint=digest(parts),
        fingerprint_parts=parts,
        higher_is_better=scorer.higher_is_better,
        score_range=scorer.score_range,
        threshold=scorer.threshold,
        aggregations=scorer.aggregations,
    )


def scorers_from_specs(specs: Iterable[ScorerSpec]) -> list[Scorer]:
    """Re-create a stored run's scorers; custom (unregistered) scorers cannot be."""
    rebuilt: list[Scorer] = []
    for spec in specs:
        if spec.type is None:
            raise ValueError(
                f"scorer {spec.id!r} was a custom Scorer object; pass the scorers again to resume"
            )
        scorer = create_scorer(
            ScorerConfig(
                type=spec.type, params=spec.params, weight=spec.weight, threshold=spec.threshold
            )
        )
        rebuilt.append(scorer.with_options(id=spec.id, label=spec.label))
    return rebuilt

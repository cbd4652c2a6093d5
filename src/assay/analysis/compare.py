"""Compare two runs item by item: paired deltas, a paired bootstrap CI, regressions.

Mastra's ``compareExperiments`` (scorers.md §5.7) compares two averages. Two runs over the
same items are paired data, though: resampling the per-item differences gives a CI that is
much tighter than two independent CIs and says whether B really differs from A. Items are
matched by id (positions may move between dataset versions); repeats are averaged first.

Only score rows are read, so an item whose target failed (it has no scores) counts as
missing from that run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from assay.summary.columns import ERROR, READY, STATUS_CODES, ScoreColumns, ScoreColumnsBuilder
from assay.summary.stats import bootstrap_mean_ci, item_stats
from assay.types import RunRecord, ScoreRow, ScorerSpec

Verdict = Literal["improved", "regressed", "not_significant", "insufficient_data"]


class RunRef(BaseModel):
    """Enough of a run to label it in a comparison."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str | None = None
    dataset_id: str | None = None
    dataset_name: str | None = None
    dataset_version: int | None = None
    data_source: str | None = None
    target: str = ""
    status: str = ""

    @classmethod
    def of(cls, record: RunRecord) -> RunRef:
        info = record.info
        return cls(
            id=info.id,
            name=info.name,
            dataset_id=info.dataset_id,
            dataset_name=info.dataset_name,
            dataset_version=info.dataset_version,
            data_source=info.data_source,
            target=info.target.label,
            status=record.status,
        )


class ItemDelta(BaseModel):
    """One item's per-item means in both runs and ``delta = score_b - score_a``."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    score_a: float
    score_b: float
    delta: float


class ValueComparison(BaseModel):
    """The paired comparison of one named value of a scorer (``rouge2``, ``recall`` ...):
    the same statistics as the scorer's headline comparison, without the item lists."""

    model_config = ConfigDict(frozen=True)

    n_paired: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: Verdict = "insufficient_data"


class ScorerComparison(BaseModel):
    """One scorer's paired comparison. Means are over the paired items, so
    ``delta == mean_b - mean_a`` exactly; ``n_a``/``n_b`` count items with a number in each
    run. ``verdict`` says whether the CI excludes zero, in the scorer's direction."""

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    scorer_label: str
    higher_is_better: bool = True
    n_a: int = 0
    n_b: int = 0
    n_paired: int = 0
    mean_a: float | None = None
    mean_b: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: Verdict = "insufficient_data"
    regressed: list[ItemDelta] = Field(default_factory=list)
    """Items worse than the threshold in the scorer's direction, worst first."""
    improved: list[ItemDelta] = Field(default_factory=list)
    """Items better than the threshold in the scorer's direction, best first."""
    n_regressed: int = 0
    """How many items regressed: ``len(regressed)`` unless the list was capped
    (``max_items``) or left out (the web compare page sends counts, not 100,000 ids)."""
    n_improved: int = 0
    """How many items improved (as ``n_regressed``)."""
    values: dict[str, ValueComparison] = Field(default_factory=dict)
    """Each named value both runs reported, compared the same way (the scorer's direction;
    they do not enter ``verdict`` or ``has_regression``)."""

    @model_validator(mode="after")
    def _count_lists(self) -> ScorerComparison:
        # a comparison written before the counts existed: its lists are whole
        if self.n_regressed < len(self.regressed):
            object.__setattr__(self, "n_regressed", len(self.regressed))
        if self.n_improved < len(self.improved):
            object.__setattr__(self, "n_improved", len(self.improved))
        return self

    def without_item_lists(self) -> ScorerComparison:
        """This comparison with empty ``regressed``/``improved`` lists (their counts kept):
        what a page shows, where 100,000 item ids would be megabytes."""
        return self.model_copy(update={"regressed": [], "improved": []})


class RunComparison(BaseModel):
    """The comparison of run B against baseline run A."""

    model_config = ConfigDict(frozen=True)

    a: RunRef
    b: RunRef
    threshold: float = 0.0
    n_boot: int = 2000
    scorers: list[ScorerComparison] = Field(default_factory=list)
    items_in_both: int = 0
    only_in_a: list[str] = Field(default_factory=list)
    only_in_b: list[str] = Field(default_factory=list)
    scorers_only_in_a: list[str] = Field(default_factory=list)
    scorers_only_in_b: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def without_item_lists(self) -> RunComparison:
        """This comparison with each scorer's ``without_item_lists``."""
        return self.model_copy(update={"scorers": [s.without_item_lists() for s in self.scorers]})

    @computed_field  # type: ignore[prop-decorator]
    @property
    def has_regression(self) -> bool:
        """Any scorer whose mean got significantly worse (the CI excludes zero)."""
        return any(s.verdict == "regressed" for s in self.scorers)


class _Columns(Protocol):
    """Where ``_RunScores`` gets its columns: a ``ScoreColumnsBuilder`` fed row by row, or
    ``_ArrayColumns`` cut from whole-run arrays."""

    def columns(self, scorer_id: str) -> ScoreColumns: ...
    def value_columns(self, scorer_id: str, key: str) -> ScoreColumns: ...
    def scorer_ids(self) -> list[str]: ...
    def value_keys(self, scorer_id: str) -> list[str]: ...


class ScoreArraysLike(Protocol):
    """A run's scores as columns in (position, repeat, item id, scorer) order, one entry
    per stored score (``store.run_queries.ScoreArrays``): ``score`` NaN where none was
    stored, ``values`` the (row, named values) of the scores that have some."""

    @property
    def item_id(self) -> Sequence[str]: ...
    @property
    def position(self) -> npt.NDArray[np.int64]: ...
    @property
    def repeat(self) -> npt.NDArray[np.int64]: ...
    @property
    def scorer_id(self) -> Sequence[str]: ...
    @property
    def status(self) -> Sequence[str]: ...
    @property
    def score(self) -> npt.NDArray[np.float64]: ...
    @property
    def values(self) -> Sequence[tuple[int, Mapping[str, float]]]: ...


@dataclass
class _ArrayColumns:
    """The columns ``ScoreColumnsBuilder`` would have built from the same rows."""

    by_scorer: dict[str, ScoreColumns]
    by_value: dict[str, dict[str, ScoreColumns]]

    def columns(self, scorer_id: str) -> ScoreColumns:
        return self.by_scorer.get(scorer_id) or ScoreColumns.empty()

    def value_columns(self, scorer_id: str, key: str) -> ScoreColumns:
        return self.by_value.get(scorer_id, {}).get(key) or ScoreColumns.empty()

    def scorer_ids(self) -> list[str]:
        return list(self.by_scorer)

    def value_keys(self, scorer_id: str) -> list[str]:
        return list(self.by_value.get(scorer_id, {}))


def _status_codes(status: Sequence[str]) -> npt.NDArray[np.int8]:
    try:
        return np.fromiter(map(STATUS_CODES.__getitem__, status), np.int8, len(status))
    except KeyError as error:
        raise ValueError(f"unknown score status code {error.args[0]!r}") from None


def _value_columns(
    arrays: ScoreArraysLike, dense: npt.NDArray[np.int64]
) -> dict[str, dict[str, ScoreColumns]]:
    """Named values per (scorer, key) in row order; non-finite numbers skipped, as
    ``ScoreColumnsBuilder.add_values`` does."""
    found: dict[str, dict[str, tuple[list[int], list[int], list[float]]]] = {}
    for row, values in arrays.values:
        keys = found.setdefault(arrays.scorer_id[row], {})
        for key, number in values.items():
            if number is None or not math.isfinite(number):
                continue
            lists = keys.setdefault(key, ([], [], []))
            lists[0].append(int(dense[row]))
            lists[1].append(int(arrays.repeat[row]))
            lists[2].append(float(number))
    return {
        sid: {
            key: ScoreColumns(
                position=np.asarray(k, dtype=np.int64),
                repeat=np.asarray(r, dtype=np.int32),
                value=np.asarray(v, dtype=np.float64),
                status=np.full(len(k), READY, dtype=np.int8),
            )
            for key, (k, r, v) in keys.items()
        }
        for sid, keys in found.items()
    }


@dataclass
class _RunScores:
    """One run's rows, keyed by dense item index (first-seen order of item ids)."""

    index: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    builder: _Columns = field(default_factory=ScoreColumnsBuilder)

    @classmethod
    def read(cls, rows: Iterable[ScoreRow]) -> _RunScores:
        run = cls()
        builder = ScoreColumnsBuilder()
        run.builder = builder
        for row in rows:
            k = run.index.get(row.item_id)
            if k is None:
                k = run.index[row.item_id] = len(run.ids)
                run.ids.append(row.item_id)
                run.positions.append(row.position)
            builder.add(row.scorer_id, k, row.repeat, row.status, row.score)
            if row.values:
                builder.add_values(row.scorer_id, k, row.repeat, row.values)
        return run

    @classmethod
    def from_arrays(cls, arrays: ScoreArraysLike) -> _RunScores:
        """The same as ``read`` over the same rows, with numpy doing the per-row work."""
        n = len(arrays.item_id)
        ids = list(dict.fromkeys(arrays.item_id))
        index = {item_id: k for k, item_id in enumerate(ids)}
        dense = np.fromiter(map(index.__getitem__, arrays.item_id), np.int64, n)
        first_row = np.unique(dense, return_index=True)[1]
        code = _status_codes(arrays.status)
        ready = code == READY
        # a ready status without a finite number is an error, never a number
        code[ready & ~np.isfinite(arrays.score)] = ERROR
        value = np.where(code == READY, arrays.score, np.nan)
        scorer_of = np.asarray(arrays.scorer_id, dtype=object)
        by_scorer = {}
        for sid in dict.fromkeys(arrays.scorer_id):
            mask = scorer_of == sid
            by_scorer[sid] = ScoreColumns(
                position=dense[mask],
                repeat=arrays.repeat[mask].astype(np.int32),
                value=value[mask].astype(np.float64),
                status=code[mask],
            )
        return cls(
            index=index,
            ids=ids,
            positions=[int(p) for p in arrays.position[first_row]],
            builder=_ArrayColumns(by_scorer, _value_columns(arrays, dense)),
        )

    def item_means(self, scorer_id: str, key: str | None = None) -> npt.NDArray[np.float64]:
        """Per-item mean over ready repeats for every item of the run, NaN when none; of
        the named value ``key`` when given."""
        cols = (
            self.builder.columns(scorer_id)
            if key is None
            else self.builder.value_columns(scorer_id, key)
        )
        stats = item_stats(cols)
        full = np.full(len(self.ids), np.nan)
        full[stats.position] = stats.mean
        return full


def _scorer_ids(record: RunRecord, run: _RunScores) -> list[str]:
    ids = [s.id for s in record.info.scorers]
    return ids + [sid for sid in run.builder.scorer_ids() if sid not in ids]


def _dataset_warnings(a: RunRecord, b: RunRecord) -> list[str]:
    ia, ib = a.info, b.info
    label_a = ia.dataset_name or ia.dataset_id or ia.data_source or "inline data"
    label_b = ib.dataset_name or ib.dataset_id or ib.data_source or "inline data"
    same = (ia.dataset_id, ia.dataset_name, ia.data_source) == (
        ib.dataset_id,
        ib.dataset_name,
        ib.data_source,
    )
    if not same:
        return [f"the runs used different data: A {label_a!r}, B {label_b!r}"]
    if ia.dataset_version != ib.dataset_version:
        return [
            f"dataset {label_a!r} version differs: A v{ia.dataset_version}, B v{ib.dataset_version}"
        ]
    return []


def _ranked(
    ids: Sequence[str],
    a: npt.NDArray[np.float64],
    b: npt.NDArray[np.float64],
    mask: npt.NDArray[np.bool_],
    key: npt.NDArray[np.float64],
    order_hint: npt.NDArray[np.int64],
    limit: int | None,
) -> list[ItemDelta]:
    """Items under ``mask`` sorted by ``key`` ascending, then by run-A order for ties."""
    picked = np.flatnonzero(mask)
    picked = picked[np.lexsort((order_hint[picked], key[picked]))]
    if limit is not None:
        picked = picked[:limit]
    return [
        ItemDelta(
            item_id=ids[k],
            score_a=float(a[k]),
            score_b=float(b[k]),
            delta=float(b[k] - a[k]),
        )
        for k in picked.tolist()
    ]


def _verdict(ci: tuple[float, float] | None, higher_is_better: bool) -> Verdict:
    if ci is None:
        return "insufficient_data"
    if ci[0] > 0:
        return "improved" if higher_is_better else "regressed"
    if ci[1] < 0:
        return "regressed" if higher_is_better else "improved"
    return "not_significant"


def _compare_scorer(
    spec: ScorerSpec,
    run_a: _RunScores,
    run_b: _RunScores,
    a_to_b: npt.NDArray[np.int64],
    *,
    threshold: float,
    n_boot: int,
    seed: int,
    max_items: int | None,
) -> ScorerComparison:
    mean_a = run_a.item_means(spec.id)
    mean_b_own = run_b.item_means(spec.id)
    mean_b = np.full(a_to_b.shape[0], np.nan)
    matched = a_to_b >= 0
    mean_b[matched] = mean_b_own[a_to_b[matched]]
    paired = ~np.isnan(mean_a) & ~np.isnan(mean_b)
    delta = mean_b - mean_a
    d = delta[paired]
    n = int(d.shape[0])
    ci = bootstrap_mean_ci(d, n_boot=n_boot, seed=seed)
    sign = 1.0 if spec.higher_is_better else -1.0
    gain = np.where(paired, sign * delta, 0.0)  # > 0: better in the scorer's direction
    order = np.asarray(run_a.positions, dtype=np.int64)
    worse, better = paired & (gain < -threshold), paired & (gain > threshold)
    return ScorerComparison(
        scorer_id=spec.id,
        scorer_label=spec.label,
        higher_is_better=spec.higher_is_better,
        n_a=int(np.count_nonzero(~np.isnan(mean_a))),
        n_b=int(np.count_nonzero(~np.isnan(mean_b_own))),
        n_paired=n,
        mean_a=float(mean_a[paired].mean()) if n else None,
        mean_b=float(mean_b[paired].mean()) if n else None,
        delta=float(d.mean()) if n else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        verdict=_verdict(ci, spec.higher_is_better),
        regressed=_ranked(run_a.ids, mean_a, mean_b, worse, gain, order, max_items),
        improved=_ranked(run_a.ids, mean_a, mean_b, better, -gain, order, max_items),
        n_regressed=int(np.count_nonzero(worse)),
        n_improved=int(np.count_nonzero(better)),
        values={
            key: _compare_value(spec, run_a, run_b, a_to_b, key, n_boot=n_boot, seed=seed)
            for key in run_a.builder.value_keys(spec.id)
            if key in run_b.builder.value_keys(spec.id)
        },
    )


def _compare_value(
    spec: ScorerSpec,
    run_a: _RunScores,
    run_b: _RunScores,
    a_to_b: npt.NDArray[np.int64],
    key: str,
    *,
    n_boot: int,
    seed: int,
) -> ValueComparison:
    mean_a = run_a.item_means(spec.id, key)
    mean_b = np.full(a_to_b.shape[0], np.nan)
    matched = a_to_b >= 0
    mean_b[matched] = run_b.item_means(spec.id, key)[a_to_b[matched]]
    paired = ~np.isnan(mean_a) & ~np.isnan(mean_b)
    d = (mean_b - mean_a)[paired]
    n = int(d.shape[0])
    ci = bootstrap_mean_ci(d, n_boot=n_boot, seed=seed)
    return ValueComparison(
        n_paired=n,
        mean_a=float(mean_a[paired].mean()) if n else None,
        mean_b=float(mean_b[paired].mean()) if n else None,
        delta=float(d.mean()) if n else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        verdict=_verdict(ci, spec.higher_is_better),
    )


def compare_run_arrays(
    a: RunRecord,
    a_scores: ScoreArraysLike,
    b: RunRecord,
    b_scores: ScoreArraysLike,
    *,
    threshold: float = 0.0,
    n_boot: int = 2000,
    seed: int = 0,
    max_items: int | None = None,
) -> RunComparison:
    """``compare_runs`` over columnar scores (``store.run_queries.score_arrays``): the
    same result, without a Python object per score (seconds saved on 100,000 items)."""
    return _compare(
        a,
        _RunScores.from_arrays(a_scores),
        b,
        _RunScores.from_arrays(b_scores),
        threshold=threshold,
        n_boot=n_boot,
        seed=seed,
        max_items=max_items,
    )


def compare_runs(
    a: RunRecord,
    a_rows: Iterable[ScoreRow],
    b: RunRecord,
    b_rows: Iterable[ScoreRow],
    *,
    threshold: float = 0.0,
    n_boot: int = 2000,
    seed: int = 0,
    max_items: int | None = None,
) -> RunComparison:
    """Compare run B against baseline A.

    An item regressed when its delta is worse than ``threshold`` in the scorer's direction
    (``delta < -threshold`` when higher is better, ``delta > threshold`` otherwise); the
    default 0 flags any drop, as Mastra does. The direction comes from A's ``ScorerSpec``
    (B's when A lacks it). ``max_items`` caps each regressed/improved list.
    """
    return _compare(
        a,
        _RunScores.read(a_rows),
        b,
        _RunScores.read(b_rows),
        threshold=threshold,
        n_boot=n_boot,
        seed=seed,
        max_items=max_items,
    )


def _compare(
    a: RunRecord,
    run_a: _RunScores,
    b: RunRecord,
    run_b: _RunScores,
    *,
    threshold: float,
    n_boot: int,
    seed: int,
    max_items: int | None,
) -> RunComparison:
    a_to_b = np.fromiter((run_b.index.get(i, -1) for i in run_a.ids), np.int64, len(run_a.ids))
    warnings = _dataset_warnings(a, b)
    for label, run in (("A", run_a), ("B", run_b)):
        if not run.ids:
            warnings.append(f"run {label} has no scores")
    both = int(np.count_nonzero(a_to_b >= 0))
    if run_a.ids and run_b.ids and both == 0:
        warnings.append("the runs have no items in common")

    specs_a = {s.id: s for s in a.info.scorers}
    specs_b = {s.id: s for s in b.info.scorers}
    ids_a, ids_b = _scorer_ids(a, run_a), _scorer_ids(b, run_b)
    comparisons = []
    for sid in (s for s in ids_a if s in ids_b):
        spec = specs_a.get(sid) or specs_b.get(sid) or ScorerSpec(id=sid, label=sid)
        other = specs_b.get(sid)
        if other is not None and other.higher_is_better != spec.higher_is_better:
            warnings.append(f"scorer {sid!r} changed direction between runs; using A's")
        comparisons.append(
            _compare_scorer(
                spec,
                run_a,
                run_b,
                a_to_b,
                threshold=threshold,
                n_boot=n_boot,
                seed=seed,
                max_items=max_items,
            )
        )

    in_a = set(run_a.index)
    b_order = sorted(range(len(run_b.ids)), key=lambda k: (run_b.positions[k], k))
    a_order = sorted(range(len(run_a.ids)), key=lambda k: (run_a.positions[k], k))
    return RunComparison(
        a=RunRef.of(a),
        b=RunRef.of(b),
        threshold=threshold,
        n_boot=n_boot,
        scorers=comparisons,
        items_in_both=both,
        only_in_a=[run_a.ids[k] for k in a_order if a_to_b[k] < 0],
        only_in_b=[run_b.ids[k] for k in b_order if run_b.ids[k] not in in_a],
        scorers_only_in_a=[s for s in ids_a if s not in ids_b],
        scorers_only_in_b=[s for s in ids_b if s not in ids_a],
        warnings=warnings,
    )


def top_items(
    cmp: RunComparison, limit: int, *, which: Literal["regressed", "improved"] = "regressed"
) -> list[tuple[ScorerComparison, ItemDelta]]:
    """Up to ``limit`` regressed (worst first) or improved (best first) items for display,
    grouped by scorer.

    Taken round-robin by rank across scorers so one noisy scorer cannot push every other
    scorer's items off a capped table.
    """
    lists = [getattr(s, which) for s in cmp.scorers]
    picked: list[tuple[int, int]] = []
    depth = max((len(items) for items in lists), default=0)
    for rank in range(depth):
        if len(picked) >= limit:
            break
        for k, items in enumerate(lists):
            if rank < len(items) and len(picked) < limit:
                picked.append((k, rank))
    picked.sort()
    return [(cmp.scorers[k], lists[k][rank]) for k, rank in picked]

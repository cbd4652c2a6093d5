"""Ordinal and numeric calibration: human labels against scores on the same scale.

Correlations (Pearson, Spearman, Kendall τ-b), errors (MAE, RMSE), quadratic-weighted κ
and Krippendorff's α (interval, ordinal; human and scorer as the two coders). Each is a
``StatGroup`` for ``resample.run_bootstrap``; definitions are scipy's, scikit-learn's and
the ``krippendorff`` package's (tests check equality to 1e-9).

Statistics over categories (quadratic-weighted κ, ordinal α and the fast Kendall τ-b)
work on the contingency table of (label, score) values, so they need few distinct values:
κ and ordinal α are undefined above ``MAX_CATEGORIES`` distinct values (scores on another
scale than the labels make them meaningless anyway). Kendall τ-b uses the table up to
``MAX_TABLE_CELLS`` cells, then level pairs while one side has at most ``MAX_LEVELS``
distinct values, and otherwise counts discordant pairs as weighted inversions of one
sort (``inversions``), never calling scipy per resample.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assay.calibration.statistics.inversions import WeightedInversions
from assay.calibration.statistics.resample import (
    FloatArray,
    Groups,
    IntArray,
    StatGroup,
    dense_groups,
    indicator,
    safe_divide,
    sum_by,
)

MAX_CATEGORIES = 100
"""Distinct values (labels and scores pooled) above which κ_w and ordinal α are undefined."""

MAX_TABLE_CELLS = 1 << 14
"""Contingency cells up to which Kendall τ-b is computed for all resamples at once."""

MAX_LEVELS = 12
"""Distinct values on the smaller side up to which Kendall τ-b runs level pair by level
pair (vectorised over resamples) when the contingency table is too large; above it the
inversion count is cheaper (measured at 100,000 items: level pairs 2.0 s at 8 levels,
2.6 s at 16, 7.3 s at 26 tied scores, inversions 3.4-4.8 s)."""

ORDINAL_STATISTICS: dict[str, str] = {
    "pearson": "labels or scores are constant",
    "spearman": "labels or scores are constant",
    "kendall_tau_b": "labels or scores are constant",
    "mae": "no items",
    "rmse": "no items",
    "quadratic_weighted_kappa": "chance disagreement is 0 (one category only)",
    "krippendorff_alpha_interval": "no variation among labels and scores",
    "krippendorff_alpha_ordinal": "no variation among labels and scores",
}


def too_many_categories(labels: FloatArray, scores: FloatArray) -> str | None:
    """Why κ_w and ordinal α are not computed for these values, or ``None`` if they are."""
    n_values = np.unique(np.concatenate([labels, scores])).shape[0]
    if n_values > MAX_CATEGORIES:
        return (
            f"needs discrete values: labels and scores take {n_values} distinct values "
            f"(at most {MAX_CATEGORIES}); put scores on the label scale"
        )
    return None


def moments_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Pearson r, MAE and RMSE from weighted sums of (centred) values, squares and products."""
    x = labels - labels.mean()
    y = scores - scores.mean()
    diff = labels - scores
    features = np.column_stack([np.ones_like(x), x, y, x * x, y * y, x * y, np.abs(diff), diff**2])

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        s = weights @ features
        count = s[:, 0]
        mx, my = s[:, 1] / count, s[:, 2] / count
        sxx = s[:, 3] - count * mx * mx
        syy = s[:, 4] - count * my * my
        sxy = s[:, 5] - count * mx * my
        den = np.sqrt(np.clip(sxx, 0.0, None) * np.clip(syy, 0.0, None))
        pearson = np.clip(safe_divide(sxy, den), -1.0, 1.0)
        return {
            "pearson": pearson,
            "mae": s[:, 6] / count,
            "rmse": np.sqrt(s[:, 7] / count),
        }

    return group


def _midranks(counts: FloatArray) -> FloatArray:
    """Mid-rank of each distinct value (columns, ascending) given its count per resample."""
    ranks = np.cumsum(counts, axis=1)
    ranks -= 0.5 * counts
    ranks += 0.5  # drawn before + (drawn here + 1) / 2
    return ranks


DENSE_LABEL_VALUES = 64
"""Distinct label values up to which per-label sums are one dense matrix product."""


class _LabelSums:
    """Per-label-value sums of per-cell quantities, whatever order the cells are in.

    Cells are sorted by score, so the label values are scattered among them. With few
    values, ``quantity @ indicator`` (one BLAS product); otherwise the quantity is laid
    out in label order once (a gather) and summed over contiguous runs."""

    def __init__(self, labels: FloatArray) -> None:
        self.by_label = Groups(labels)
        self.n_groups = self.by_label.n_groups
        self.dense: FloatArray | None = None
        self.order: IntArray | None = None
        if self.by_label.contiguous:
            return
        if self.n_groups <= DENSE_LABEL_VALUES:
            dense = np.zeros((labels.shape[0], self.n_groups))
            dense[np.arange(labels.shape[0]), self.by_label.inverse] = 1.0
            self.dense = dense
            return
        self.order = np.argsort(labels, kind="stable").astype(np.int64)
        self.sorted = Groups(labels[self.order])
        self.back = np.empty_like(self.order)
        self.back[self.order] = np.arange(self.order.shape[0])

    def sums(self, values: FloatArray) -> FloatArray:
        """(resamples x cells) -> (resamples x label values), ascending."""
        if self.dense is not None:
            return np.asarray(values @ self.dense, dtype=np.float64)
        if self.order is not None:
            return self.sorted.sums(np.take(values, self.order, axis=1))
        return self.by_label.sums(values)


def spearman_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Spearman ρ: Pearson r of the mid-ranks each resample gives its values.

    A value's mid-rank in a resample depends only on how many times each distinct value
    was drawn, so ranks are computed per distinct value. The cross term Σ w·rx·ry is summed
    per label value first (Σ_v rx_v · Σ_{cells of v} w·ry), so only the score ranks are
    handed back to the cells (which are in score order: a run per score value)."""
    per_label = _LabelSums(labels)
    by_score = Groups(scores)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        cy = by_score.sums(weights)
        count = cy.sum(axis=1)
        mean = ((count + 1.0) / 2.0)[:, None]  # the mean mid-rank is always (N + 1) / 2
        ry = np.cumsum(cy, axis=1)
        ry -= 0.5 * cy
        ry += 0.5 - mean  # mid-rank = drawn before + (drawn here + 1) / 2, centred
        weighted_ry = cy * ry
        syy = np.einsum("ij,ij->i", weighted_ry, ry)
        per_cell = weighted_ry if by_score.distinct else by_score.expand(ry) * weights
        if per_label.order is not None:
            # many label values: ranks in label order, handed back to the cells (one
            # gather each way instead of gathering both weights and score ranks)
            cx = per_label.sorted.sums(np.take(weights, per_label.order, axis=1))
            rx = _midranks(cx)
            rx -= mean
            rx_cells = np.take(per_label.sorted.expand(rx), per_label.back, axis=1)
            sxy = np.einsum("ij,ij->i", per_cell, rx_cells)
        else:
            cx = per_label.sums(weights)
            rx = _midranks(cx)
            rx -= mean
            sxy = np.einsum("ij,ij->i", per_label.sums(per_cell), rx)
        sxx = np.einsum("ij,ij->i", cx * rx, rx)
        return {"spearman": np.clip(safe_divide(sxy, np.sqrt(sxx * syy)), -1.0, 1.0)}

    return group


def _table_pairs(table: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Concordant and discordant pair counts of contingency tables (R x a x b)."""
    # below_left[r, i, j] = sum of table[r, :i, :j]; below_right = sum of table[r, :i, j+1:]
    cum = np.cumsum(np.cumsum(table, axis=1), axis=2)
    padded = np.zeros((table.shape[0], table.shape[1] + 1, table.shape[2] + 1))
    padded[:, 1:, 1:] = cum
    below_left = padded[:, :-1, :-1]
    rows_above = padded[:, :-1, -1:]  # sum of table[r, :i, :]
    below_to_col = padded[:, :-1, 1:]  # sum of table[r, :i, :j+1]
    below_right = rows_above - below_to_col
    concordant = np.einsum("rij,rij->r", table, below_left)
    discordant = np.einsum("rij,rij->r", table, below_right)
    return concordant, discordant


def _tau_b(concordant: FloatArray, discordant: FloatArray, table: FloatArray) -> FloatArray:
    count = table.sum(axis=(1, 2))
    rows = table.sum(axis=2)
    cols = table.sum(axis=1)
    total = count * (count - 1.0) / 2.0
    x_ties = (rows * (rows - 1.0) / 2.0).sum(axis=1)
    y_ties = (cols * (cols - 1.0) / 2.0).sum(axis=1)
    den = np.sqrt((total - x_ties) * (total - y_ties))
    return np.clip(safe_divide(concordant - discordant, den), -1.0, 1.0)


def kendall_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Kendall τ-b (scipy's, with ties) from contingency tables, level pairs, or weighted
    inversions, whichever fits the number of distinct values."""
    _, gx = dense_groups(labels)
    _, gy = dense_groups(scores)
    a, b = int(gx.max()) + 1, int(gy.max()) + 1
    if a * b <= MAX_TABLE_CELLS:
        cells = indicator(gx * b + gy, a * b)

        def by_table(weights: FloatArray) -> dict[str, FloatArray]:
            table = sum_by(weights, cells).reshape(-1, a, b)
            concordant, discordant = _table_pairs(table)
            return {"kendall_tau_b": _tau_b(concordant, discordant, table)}

        return by_table

    if min(a, b) <= MAX_LEVELS:
        return _kendall_by_levels(labels, scores) if a <= b else _kendall_by_levels(scores, labels)
    return _kendall_by_inversions(labels, scores)


def _tied_pairs(values: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """Weights -> pairs tied on ``values`` per resample, Σ_v c_v (c_v - 1) / 2 with c_v
    the weight on value v (with every value distinct, c is the weights themselves)."""
    by_value = _LabelSums(values)
    distinct = by_value.n_groups == values.shape[0]

    def tied(weights: FloatArray) -> FloatArray:
        per_value = weights if distinct else by_value.sums(weights)
        pairs: FloatArray = np.einsum("ij,ij->i", per_value, per_value - 1.0) / 2.0
        return pairs

    return tied


def _kendall_by_inversions(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Kendall τ-b for any values, O(n log n)-like work per resample without scipy.

    As scipy's (Knight's algorithm): with the items sorted by (label, score), discordant
    pairs are the inversions of the score order, and τ-b = (all pairs - label ties -
    score ties + ties on both - 2 discordant) / sqrt((all - label ties)(all - score
    ties)), every count weighted by how many times each item was drawn. The sort is done
    once; ``inversions.WeightedInversions`` counts the weighted inversions of all
    resamples. Ties on the score are broken by label position, which adds no inversion,
    so the permutation has no ties left."""
    x_order = np.lexsort((scores, labels)).astype(np.int64)
    xpos = np.empty_like(x_order)
    xpos[x_order] = np.arange(x_order.shape[0])
    y_order = np.lexsort((xpos, scores))
    rank = np.empty_like(x_order)
    rank[y_order] = np.arange(x_order.shape[0])
    discordant = WeightedInversions(x_order, rank)
    label_ties, score_ties = _tied_pairs(labels), _tied_pairs(scores)
    _, joint = np.unique(np.column_stack([labels, scores]), axis=0, return_inverse=True)
    both_ties = _tied_pairs(joint.ravel().astype(np.float64))

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        count = weights.sum(axis=1)
        total = count * (count - 1.0) / 2.0
        tx, ty = label_ties(weights), score_ties(weights)
        difference = total - tx - ty + both_ties(weights) - 2.0 * discordant(weights)
        den = np.sqrt((total - tx) * (total - ty))
        return {"kendall_tau_b": np.clip(safe_divide(difference, den), -1.0, 1.0)}

    return group


def _kendall_by_levels(levels: FloatArray, values: FloatArray) -> StatGroup:
    """Kendall τ-b when one side has few distinct values (ordinal labels against
    continuous scores): τ is symmetric, so ``levels`` is whichever side has fewer.

    For levels a < b, the pairs (i in a, j in b) contribute Σ_j w_j (W_a(< v_j) -
    W_a(> v_j)), read off level a's cumulative weights (cells of a level in ``values``
    order) at positions found once by binary search. The cost is about (number of
    levels / 2) passes over the weights, cheaper than counting inversions while the
    levels are few."""
    uniq, level_of = dense_groups(levels)
    members = []
    for k in range(uniq.shape[0]):
        at = np.flatnonzero(level_of == k)
        members.append(at[np.argsort(values[at], kind="stable")])
    sorted_values = [values[at] for at in members]
    pairs = []
    for hi in range(len(members)):
        for lo in range(hi):
            below = np.searchsorted(sorted_values[lo], sorted_values[hi], side="left")
            level = np.searchsorted(sorted_values[lo], sorted_values[hi], side="right")
            tied = bool(np.any(level != below))
            pairs.append((lo, hi, below.astype(np.int64), level.astype(np.int64), tied))
    by_value = Groups(values)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        rows = weights.shape[0]
        parts = [weights[:, at] for at in members]
        cumulative = []
        for part in parts:
            c = np.zeros((rows, part.shape[1] + 1))
            np.cumsum(part, axis=1, out=c[:, 1:])
            cumulative.append(c)
        totals = np.column_stack([c[:, -1] for c in cumulative])
        score = np.zeros(rows)
        for lo, hi, below, level, tied in pairs:
            c = cumulative[lo]
            # W_a(< v) - W_a(> v) = W_a(< v) + W_a(<= v) - W_a
            if tied:
                score += np.einsum("ij,ij->i", parts[hi], c[:, below] + c[:, level])
            else:
                score += 2.0 * np.einsum("ij,ij->i", parts[hi], c[:, below])
            score -= totals[:, lo] * totals[:, hi]
        count = totals.sum(axis=1)
        all_pairs = count * (count - 1.0) / 2.0
        level_ties = (totals * (totals - 1.0) / 2.0).sum(axis=1)
        per_value = by_value.sums(weights)
        value_ties = np.einsum("ij,ij->i", per_value, per_value - 1.0) / 2.0
        den = np.sqrt((all_pairs - level_ties) * (all_pairs - value_ties))
        return {"kendall_tau_b": np.clip(safe_divide(score, den), -1.0, 1.0)}

    return group


def qwk_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Quadratic-weighted Cohen κ over the pooled distinct values as ordered categories.

    As ``sklearn.metrics.cohen_kappa_score(weights="quadratic")``: the weight of a cell is
    the squared difference of category positions, not of the values themselves."""
    _, pooled = dense_groups(np.concatenate([labels, scores]))
    n = labels.shape[0]
    k = int(pooled.max()) + 1
    gx, gy = pooled[:n], pooled[n:]
    cells = indicator(gx * k + gy, k * k)
    positions = np.arange(k, dtype=np.float64)
    weight = (positions[:, None] - positions[None, :]) ** 2

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        table = sum_by(weights, cells).reshape(-1, k, k)
        count = table.sum(axis=(1, 2))
        expected = np.einsum("ri,rj->rij", table.sum(axis=2), table.sum(axis=1))
        observed_d = np.einsum("rij,ij->r", table, weight)
        expected_d = safe_divide(np.einsum("rij,ij->r", expected, weight), count)
        return {"quadratic_weighted_kappa": 1.0 - safe_divide(observed_d, expected_d)}

    return group


def alpha_interval_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Krippendorff's interval α with two coders (human, scorer) and no missing values.

    With two values per unit, observed disagreement is the mean squared difference and
    expected disagreement is the mean squared difference over all pairs of pooled values:
    α = 1 - (N - 1) Σ(a - b)² / (Σ_pooled (v - v̄)² · 2), with N = 2n pooled values."""
    centre = (labels.mean() + scores.mean()) / 2.0
    a, b = labels - centre, scores - centre
    features = np.column_stack([np.ones_like(a), a + b, a * a + b * b, (a - b) ** 2])

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        s = weights @ features
        pooled = 2.0 * s[:, 0]
        observed = s[:, 3] / s[:, 0]
        expected = safe_divide(2.0 * pooled * s[:, 2] - 2.0 * s[:, 1] ** 2, pooled * (pooled - 1.0))
        return {"krippendorff_alpha_interval": 1.0 - safe_divide(observed, expected)}

    return group


def alpha_ordinal_group(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Krippendorff's ordinal α with two coders, from each resample's coincidence matrix.

    The ordinal distance between values c <= k is (Σ_{g=c..k} n_g - (n_c + n_k) / 2)²,
    with n_g the pooled count of value g, so it changes with every resample."""
    _, pooled = dense_groups(np.concatenate([labels, scores]))
    n = labels.shape[0]
    k = int(pooled.max()) + 1
    gx, gy = pooled[:n], pooled[n:]
    cells = indicator(gx * k + gy, k * k)

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        table = sum_by(weights, cells).reshape(-1, k, k)
        coincidence = table + table.transpose(0, 2, 1)
        counts = coincidence.sum(axis=2)
        total = counts.sum(axis=1)
        cum = np.cumsum(counts, axis=1)
        # between[r, c, k] = Σ_{g=c..k} n_g - (n_c + n_k)/2 for c <= k (symmetric when squared)
        between = (
            cum[:, None, :] - cum[:, :, None] + (counts[:, :, None] - counts[:, None, :]) / 2.0
        )
        distance = between**2
        observed = np.einsum("rij,rij->r", coincidence, distance) / total
        expected = safe_divide(
            np.einsum("ri,rj,rij->r", counts, counts, distance), total * (total - 1.0)
        )
        return {"krippendorff_alpha_ordinal": 1.0 - safe_divide(observed, expected)}

    return group

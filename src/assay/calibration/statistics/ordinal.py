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

import numpy as np

from assay.calibration.statistics import compiled as compiled_groups
from assay.calibration.statistics.inversions import MAX_INVERSION_LEVELS, WeightedInversions
from assay.calibration.statistics.ranks import FEW_VALUES, Ranking, sum_of_squares
from assay.calibration.statistics.resample import (
    FloatArray,
    Groups,
    StatGroup,
    dense_groups,
    indicator,
    row_codes,
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


DENSE_LABEL_VALUES = FEW_VALUES
"""Distinct label values up to which Spearman ranks per value (``ranks.FEW_VALUES``)."""


def spearman_group(
    labels: FloatArray, scores: FloatArray, *, compiled: bool | None = None
) -> StatGroup:
    """Spearman ρ: Pearson r of the mid-ranks each resample gives its values.

    Compiled (``compiled.spearman_group``) when numba is installed (``compiled=None``);
    what follows is the numpy path, the same numbers.

    Mid-ranks are never formed cell by cell. A cell's mid-rank R = C - w/2 + 1/2 (C the
    weight drawn up to it in value order, w its own; ``ranks.Ranking`` corrects the few
    tied cells), so with N drawn in all:

    - Σ w (R - mean)² = (N³ - Σ_v c_v³) / 12 (c_v the weight on value v: the usual tie
      correction, each cell drawn w times being a tie of w);
    - few label values: the cross term is Σ_label rx · Σ_{cells of it} w·Ry, one matrix
      product of w·C and w² with the label indicator;
    - many label values: Σ w (Rx - Ry)² = Sxx + Syy - 2 Sxy, and Rx - Ry = Cx - Cy away
      from ties: one cumulative sum per side and one gather of the label side.

    Everything is sums of small integers, exact in float64 below 2**53 (N³ for N up to
    about 200,000 items; beyond, rounding of order 1e-16 relative)."""
    if compiled_groups.enabled(compiled):
        return compiled_groups.spearman_group(labels, scores)
    by_score = Ranking(scores)
    by_label = Ranking(labels)
    n = by_score.n
    few = by_label.codes is not None
    # label value of each score position (few label values), and of the tied cells
    codes = by_label.codes[by_score.order] if by_label.codes is not None else by_score.order
    tied_codes = codes[by_score.tied]
    score_position = np.empty(n, dtype=np.int64)
    score_position[by_score.order] = np.arange(n)
    label_position = np.empty(n, dtype=np.int64)
    label_position[by_label.order] = np.arange(n)
    label_at_score = label_position[by_score.order]  # x position of each score position
    label_tied_at = score_position[by_label.tied_cells]

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        count = weights.sum(axis=1)
        mean = (count + 1.0) / 2.0  # the mean mid-rank is always (N + 1) / 2
        full = count**3
        wy = by_score.laid_out(weights)
        cy = np.cumsum(wy, axis=1)
        cubes = np.einsum("ij,ij,ij->i", wy, wy, wy)
        syy = (full - by_score.cubes(weights, cubes)) / 12.0
        shift_y = by_score.rank_shift(wy, cy) if by_score.tied.shape[0] else None
        if few:
            cx = by_label.per_value(wy, codes)
            rx = _midranks(cx)
            rx -= mean[:, None]
            sxx = np.einsum("ij,ij->i", cx * rx, rx)
            # w·Ry = w·(C - w/2) + w/2 on untied cells
            weighted = np.multiply(wy, -0.5)
            weighted += cy
            weighted *= wy
            per_label = by_label.per_value(weighted, codes)
            per_label += 0.5 * cx
            if shift_y is not None:
                tied_weights = np.take(wy, by_score.tied, axis=1)
                per_label += by_label.per_value(tied_weights * shift_y, tied_codes)
            sxy = np.einsum("ij,ij->i", per_label, rx)
        else:
            sxx = (full - by_label.cubes(weights, cubes)) / 12.0
            wx = by_label.laid_out(weights)
            cx = np.cumsum(wx, axis=1)
            gap = np.take(cx, label_at_score, axis=1)
            gap -= cy  # Rx - Ry in score order, away from ties
            if shift_y is not None:
                gap[:, by_score.tied] -= shift_y
            if by_label.tied.shape[0]:
                gap[:, label_tied_at] += by_label.rank_shift(wx, cx)
            distance = np.einsum("ij,ij->i", np.multiply(wy, gap), gap)
            sxy = (sxx + syy - distance) / 2.0
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


def kendall_group(
    labels: FloatArray, scores: FloatArray, *, compiled: bool | None = None
) -> StatGroup:
    """Kendall τ-b (scipy's, with ties) from contingency tables (few values on both
    sides), else compiled (``compiled.kendall_group``, numba installed), else level pairs
    or weighted inversions, whichever fits the number of distinct values."""
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

    if compiled_groups.enabled(compiled):
        return compiled_groups.kendall_group(labels, scores)
    if min(a, b) <= MAX_LEVELS:
        return _kendall_by_levels(labels, scores) if a <= b else _kendall_by_levels(scores, labels)
    return _kendall_by_inversions(labels, scores)


def _kendall_by_inversions(labels: FloatArray, scores: FloatArray) -> StatGroup:
    """Kendall τ-b for any values, O(n log n)-like work per resample without scipy.

    As scipy's (Knight's algorithm): with the items sorted by (x, y), discordant pairs
    are the inversions of the y order, and τ-b = (all pairs - x ties - y ties + ties on
    both - 2 discordant) / sqrt((all - x ties)(all - y ties)), every count weighted by
    how many times each item was drawn. The sort is done once;
    ``inversions.WeightedInversions`` counts the weighted inversions of all resamples.
    Ties on y are broken by x position, which adds no inversion, so the permutation has
    no ties left. τ is symmetric, so when one side has few distinct values it is y, and
    its values are the inversion counter's levels (a single pass, see there)."""
    by_label, by_score = Ranking(labels), Ranking(scores)
    x, y = labels, scores
    if by_label.n_values < by_score.n_values:
        x, y = scores, labels
    x_order = np.lexsort((y, x)).astype(np.int64)
    xpos = np.empty_like(x_order)
    xpos[x_order] = np.arange(x_order.shape[0])
    y_order = np.lexsort((xpos, y))
    rank = np.empty_like(x_order)
    rank[y_order] = np.arange(x_order.shape[0])
    levels = None
    if min(by_label.n_values, by_score.n_values) <= MAX_INVERSION_LEVELS:
        _, levels = dense_groups(y)
    discordant = WeightedInversions(x_order, rank, levels)
    by_both = Ranking(row_codes(np.column_stack([labels, scores])).astype(np.float64))

    def group(weights: FloatArray) -> dict[str, FloatArray]:
        count = weights.sum(axis=1)
        total = count * (count - 1.0) / 2.0
        squares = sum_of_squares(weights)
        tx = by_label.tied_pairs(weights, squares)
        ty = by_score.tied_pairs(weights, squares)
        difference = total - tx - ty + by_both.tied_pairs(weights, squares)
        difference -= 2.0 * discordant(weights)
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

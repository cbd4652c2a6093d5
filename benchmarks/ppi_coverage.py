"""Coverage and width of the judge-corrected (PPI) mean, classical against PPI++ with the
variance floor, for a strong discrete judge and a weak judge (issue 26).

    PYTHONPATH=src python benchmarks/ppi_coverage.py [SPLITS]

FeedbackQA's 300 human labels (tests/fixtures/calibration) drawn 20,000 times; the strong
judge is the human label with 2% one-sided false positives, the weak one the lexical
question coverage above its median. Prints a Markdown table for benchmarks/RESULTS.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.stats import norm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.calibration.statistics.conftest import coverage, read

from assay.calibration.statistics import ppi_mean


def main(splits: int) -> None:
    rows = read("feedbackqa_test_300.jsonl")
    labels = np.array([1.0 if r["majority"] in ("Excellent", "Acceptable") else 0.0 for r in rows])
    scores = np.array([coverage(str(r["question"]), str(r["answer"])) for r in rows])
    rng = np.random.default_rng(26)
    drawn = rng.choice(labels.shape[0], size=20_000)
    human = labels[drawn]
    strong = np.maximum(human, rng.random(human.shape[0]) < 0.02).astype(np.float64)
    lexical = scores[drawn]
    weak = (lexical >= np.median(lexical)).astype(np.float64)
    z = norm.ppf(0.975)
    print("| judge | labels | PPI | coverage of 95% CI | mean width | labels-only width |")
    print("|---|---|---|---|---|---|")
    for n in (40, 100):
        for name, judge in (("strong", strong), ("weak", weak)):
            for tuning in ("classical", "power"):
                covered, widths, alone = 0, [], []
                for seed in range(splits):
                    pick = np.random.default_rng(seed).choice(human.shape[0], n, replace=False)
                    est = ppi_mean(judge, judge[pick], human[pick], tuning=tuning)  # type: ignore[arg-type]
                    covered += est.ci_low <= human.mean() <= est.ci_high
                    widths.append(est.ci_high - est.ci_low)
                    alone.append(2 * z * human[pick].std(ddof=1) / np.sqrt(n))
                print(
                    f"| {name} | {n} | {tuning} | {covered / splits:.3f} | "
                    f"{np.mean(widths):.4f} | {np.mean(alone):.4f} |"
                )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)

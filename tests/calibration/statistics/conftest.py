"""Real human-labelled samples (``tests/fixtures/calibration``) with simple lexical judges.

The "judges" are deterministic text heuristics, weak on purpose: they give real,
imperfect agreement with the humans, which is what calibration statistics measure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "calibration"
FloatArray = npt.NDArray[np.float64]

_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the of to in on for and or is are was were be been it this that with as by at "
        "from what how do does can i you my your we our they their",
    )
)


def tokens(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP}


def token_f1(a: str, b: str) -> float:
    """Lexical similarity: F1 of the content-word sets (0 when either is empty)."""
    ta, tb = tokens(a), tokens(b)
    common = len(ta & tb)
    if not common:
        return 0.0
    precision, recall = common / len(tb), common / len(ta)
    return 2 * precision * recall / (precision + recall)


def coverage(question: str, answer: str) -> float:
    """Share of the question's content words that the answer repeats."""
    q = tokens(question)
    return len(q & tokens(answer)) / len(q) if q else 0.0


def read(name: str) -> list[dict[str, object]]:
    with (FIXTURES / name).open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@dataclass(frozen=True)
class Labelled:
    labels: FloatArray
    scores: FloatArray


@pytest.fixture(scope="session")
def stsb() -> Labelled:
    """STS-B human similarity 0-5 against 5 x token F1 (numeric, continuous scores)."""
    rows = read("stsb_dev_300.jsonl")
    labels = np.array([float(r["score"]) for r in rows])  # type: ignore[arg-type]
    scores = np.array([5.0 * token_f1(str(r["sentence1"]), str(r["sentence2"])) for r in rows])
    return Labelled(labels, scores)


@pytest.fixture(scope="session")
def stsb_rounded(stsb: Labelled) -> Labelled:
    """STS-B on the integer 0-5 scale, both sides rounded (ordinal)."""
    return Labelled(np.round(stsb.labels), np.round(stsb.scores))


RATING = {"Bad": 1, "Could be Improved": 2, "Acceptable": 3, "Excellent": 4}


@pytest.fixture(scope="session")
def feedbackqa() -> Labelled:
    """FeedbackQA: helpful (majority Excellent/Acceptable) = 1 against question coverage."""
    rows = read("feedbackqa_test_300.jsonl")
    labels = np.array([1.0 if r["majority"] in ("Excellent", "Acceptable") else 0.0 for r in rows])
    scores = np.array([coverage(str(r["question"]), str(r["answer"])) for r in rows])
    return Labelled(labels, scores)


@pytest.fixture(scope="session")
def feedbackqa_ordinal() -> Labelled:
    """FeedbackQA majority rating 1-4 against 1 + round(3 x coverage)."""
    rows = read("feedbackqa_test_300.jsonl")
    labels = np.array([float(RATING[str(r["majority"])]) for r in rows])
    scores = np.array(
        [1.0 + np.round(3.0 * coverage(str(r["question"]), str(r["answer"]))) for r in rows]
    )
    return Labelled(labels, scores)


@dataclass(frozen=True)
class Pairs:
    human: list[str]
    verdicts: list[tuple[str, str]]


def _prefers_first(instruction: str, first: str, second: str) -> str:
    """A position-biased judge: the output sharing more words with the instruction wins,
    and a near tie (within 0.05) goes to whichever output it read first."""
    a, b = coverage(instruction, first), coverage(instruction, second)
    if abs(a - b) < 0.05:
        return "first"
    return "first" if a > b else "second"


@pytest.fixture(scope="session")
def llmbar() -> Pairs:
    """LLMBar/MT-Bench preferences against the biased judge in both orders."""
    rows = read("llmbar_pairwise_200.jsonl")
    human = ["A" if r["label"] == 1 else "B" for r in rows]
    verdicts: list[tuple[str, str]] = []
    for r in rows:
        inst, o1, o2 = str(r["input"]), str(r["output_1"]), str(r["output_2"])
        original = "A" if _prefers_first(inst, o1, o2) == "first" else "B"
        swapped = "B" if _prefers_first(inst, o2, o1) == "first" else "A"  # mapped back
        verdicts.append((original, swapped))
    return Pairs(human, verdicts)

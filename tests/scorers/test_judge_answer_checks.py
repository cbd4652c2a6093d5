"""No silently wrong judge score: typed verdict labels and checked verdict counts.

Every judge scorer's verdict/label field is a ``Literal`` of the labels its prompt asks for,
so the schema sent to the judge carries an ``enum`` and a label outside it fails validation.
Every step that judges items known before it (claims, statements, passages, tool calls, ...)
checks that it got exactly one entry per item. Either failure gets one repair turn that names
the problem; a second failure is ``status="error"``, never a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from assay import ScoreResult, ScriptedModel, create_scorer, get_scorer_type

Reply = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """One scorer run whose checked judge step is scripted as ``bad``, then ``good``."""

    id: str
    scorer: str
    run: dict[str, Any]
    before: list[Reply]
    """Answers of the judge steps before the checked one."""
    bad: Reply
    """An answer that validated before this change and was scored silently."""
    good: Reply
    score: float
    """The score of ``good``."""
    problem: str
    """What the repair message and the final error must say about ``bad``."""
    params: dict[str, Any] = field(default_factory=dict)
    enum: tuple[str, list[str]] | None = None
    """The label field and the labels its schema must list."""


def _run(case: Case, *answers: Reply) -> tuple[ScoreResult, ScriptedModel]:
    model = ScriptedModel(script=[*case.before, *answers])
    params = dict(case.params)
    if "reason" in get_scorer_type(case.scorer).params_schema()["properties"]:
        params.setdefault("reason", "none")  # no reason call: the checked step is the last
    scorer = create_scorer(case.scorer, **params).with_judge_model(model)
    return scorer.run_sync(**case.run), model


def _enum_of(schema: Any, name: str) -> list[Any] | None:
    """The ``enum`` of the property ``name``, wherever it is in a JSON Schema."""
    if isinstance(schema, dict):
        prop = schema.get("properties", {}).get(name)
        if isinstance(prop, dict) and "enum" in prop:
            return list(prop["enum"])
        for value in schema.values():
            if (found := _enum_of(value, name)) is not None:
                return found
    if isinstance(schema, list):
        for value in schema:
            if (found := _enum_of(value, name)) is not None:
                return found
    return None


# ─── answer builders ───


def claims(n: int) -> Reply:
    return {"claims": [f"claim {i}" for i in range(n)]}


def verdicts(*labels: str) -> Reply:
    return {"verdicts": [{"verdict": label, "reason": f"r{i}"} for i, label in enumerate(labels)]}


def stated_verdicts(*labels: str) -> Reply:
    return {
        "verdicts": [
            {"statement": f"claim {i}", "verdict": label, "reason": f"r{i}"}
            for i, label in enumerate(labels)
        ]
    }


def results(*labels: str) -> Reply:
    return {"results": [{"result": label, "reason": f"r{i}"} for i, label in enumerate(labels)]}


def passage_verdicts(*labels: str, indexes: list[int] | None = None) -> Reply:
    order = indexes if indexes is not None else list(range(len(labels)))
    return {
        "verdicts": [
            {"context_index": i, "verdict": label, "reason": f"passage {i}"}
            for i, label in zip(order, labels, strict=True)
        ]
    }


def evaluations(*levels: tuple[str, bool]) -> Reply:
    return {
        "evaluations": [
            {
                "context_index": i,
                "contextPiece": f"passage {i}",
                "relevanceLevel": level,
                "wasUsed": used,
                "reasoning": "r",
            }
            for i, (level, used) in enumerate(levels)
        ],
        "missingContext": [],
        "overallAssessment": "ok",
    }


def matches(*kinds: str) -> Reply:
    return {
        "matches": [
            {
                "groundTruthUnit": f"g{i}",
                "outputUnit": None if kind == "missing" else f"o{i}",
                "matchType": kind,
                "explanation": f"e{i}",
            }
            for i, kind in enumerate(kinds)
        ],
        "extraInOutput": [],
        "contradictions": [],
    }


DIMENSIONS = [
    "content_accuracy",
    "completeness",
    "relevance",
    "consistency",
    "hallucination_resistance",
]


def dimensions(names: list[str], level: str = "none") -> Reply:
    return {
        "dimensions": [
            {"dimension": name, "impactLevel": level, "specificChanges": "c", "noiseInfluence": "n"}
            for name in names
        ],
        "overallAssessment": "ok",
        "majorIssues": [],
        "robustnessScore": 1.0,
    }


def coverage(*answered: bool) -> Reply:
    return {
        "coverage": [
            {"question": f"question {i}?", "answered": a, "reason": "r"}
            for i, a in enumerate(answered)
        ]
    }


def criteria(*flags: bool) -> Reply:
    return {
        "criteria": [
            {"criterion": f"c{i}", "satisfied": f, "required": True, "reasoning": "r"}
            for i, f in enumerate(flags)
        ],
        "overallAssessment": "",
    }


def tool_evaluations(*flags: bool) -> Reply:
    return {
        "evaluations": [
            {"toolCalled": f"t{i}", "wasAppropriate": f, "reasoning": "r"}
            for i, f in enumerate(flags)
        ],
        "missingTools": [],
    }


def step_evaluations(n: int) -> Reply:
    return {
        "stepEvaluations": [
            {"stepName": f"s{i}", "wasNecessary": True, "wasInOrder": True, "reasoning": "r"}
            for i in range(n)
        ],
        "overallAssessment": "ok",
    }


# ─── the runs ───

QA = {"input": "What about the reef?", "output": "The reef is big. It is bleached."}
CONTEXT_QA = {**QA, "context": ["passage 0", "passage 1", "passage 2"]}
RECALL = {**CONTEXT_QA, "ground_truth": "The reef is big. It is old."}
SIMILARITY = {**QA, "ground_truth": "The reef is big and old."}
UNITS = {"outputUnits": ["o0", "o1"], "groundTruthUnits": ["g0", "g1"]}
NOISE_PARAMS = {"baseline_response": "The reef is big.", "noisy_query": "What about it? (cats)"}
SOURCE = {"input": "The park opens in May. It has a lake.", "output": "A park with a lake."}
RUBRIC_PARAMS = {"criteria": "- c0\n- c1\n- c2"}
TOOLS = {"available_tools": [{"id": "weather"}, {"id": "calendar"}]}


def tool_run(*names: str) -> dict[str, Any]:
    calls = [
        {"id": f"x{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in enumerate(names)
    ]
    output: list[dict[str, Any]] = [{"role": "assistant", "content": "Done."}]
    if calls:
        output.insert(0, {"role": "assistant", "content": None, "tool_calls": calls})
    return {"input": [{"role": "user", "content": "Weather and calendar?"}], "output": output}


def trajectory(n: int, nested: int = 0) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"stepType": "tool_call", "name": f"s{i}"} for i in range(n)]
    if nested:
        steps[-1]["children"] = [{"stepType": "tool_call", "name": f"n{i}"} for i in range(nested)]
    return {"input": "Do it.", "output": {"steps": steps}}


LABEL_CASES = [
    Case(
        "faithfulness",
        "faithfulness",
        CONTEXT_QA,
        [claims(2)],
        bad=verdicts("yes", "definitely supported"),
        good=verdicts("yes", "no"),
        score=0.5,
        problem="verdicts.1.verdict",
        enum=("verdict", ["yes", "no", "unsure"]),
    ),
    Case(
        "faithfulness-case-sensitive",
        "faithfulness",
        CONTEXT_QA,
        [claims(2)],
        bad=verdicts("yes", "Yes"),
        good=verdicts("yes", "yes"),
        score=1.0,
        problem="verdicts.1.verdict",
    ),
    Case(
        "hallucination",
        "hallucination",
        CONTEXT_QA,
        [claims(2)],
        bad=stated_verdicts("Yes", "no"),
        good=stated_verdicts("yes", "no"),
        score=0.5,
        problem="verdicts.0.verdict",
        enum=("verdict", ["yes", "no"]),
    ),
    Case(
        "context-recall",
        "context-recall",
        RECALL,
        [claims(2)],
        bad=verdicts("yes", "partially"),
        good=verdicts(" Yes ", "no"),  # trimmed and lower-cased, as before
        score=0.5,
        problem="verdicts.1.verdict",
        enum=("verdict", ["yes", "no"]),
    ),
    Case(
        "answer-relevancy",
        "answer-relevancy",
        QA,
        [{"statements": ["s0", "s1"]}],
        bad=results("yes", "maybe"),
        good=results("YES", "unsure"),
        score=0.65,
        problem="results.1.result",
        enum=("result", ["yes", "unsure", "no"]),
    ),
    Case(
        "bias",
        "bias",
        QA,
        [{"opinions": ["o0", "o1"]}],
        bad=results("yes", "biased"),
        good=results("YES", "no"),
        score=0.5,
        problem="results.1.result",
        enum=("result", ["yes", "no"]),
    ),
    Case(
        "bias-not-trimmed",
        "bias",
        QA,
        [{"opinions": ["o0", "o1"]}],
        bad=results(" yes", "no"),
        good=results("yes", "no"),
        score=0.5,
        problem="results.0.result",
    ),
    Case(
        "toxicity",
        "toxicity",
        QA,
        [],
        bad=verdicts("toxic", "no"),
        good=verdicts(" YES ", "no"),
        score=0.5,
        problem="verdicts.0.verdict",
        enum=("verdict", ["yes", "no"]),
    ),
    Case(
        "context-precision",
        "context-precision",
        CONTEXT_QA,
        [],
        bad=passage_verdicts("yes", "maybe", "yes"),
        good=passage_verdicts("yes", "no", "yes"),
        score=0.83,
        problem="verdicts.1.verdict",
        enum=("verdict", ["yes", "no"]),
    ),
    Case(
        "context-relevance",
        "context-relevance",
        CONTEXT_QA,
        [],
        bad=evaluations(("high", True), ("very high", True), ("low", False)),
        good=evaluations(("high", True), ("medium", True), ("low", False)),
        score=0.67,
        problem="evaluations.1.relevanceLevel",
        enum=("relevanceLevel", ["high", "medium", "low", "none"]),
    ),
    Case(
        "answer-similarity",
        "answer-similarity",
        SIMILARITY,
        [UNITS],
        bad=matches("exact", "close"),
        good=matches("exact", "exact"),
        score=1.0,
        problem="matches.1.matchType",
        enum=("matchType", ["exact", "semantic", "partial", "missing"]),
    ),
    Case(
        "noise-sensitivity-dimension",
        "noise-sensitivity",
        QA,
        [],
        bad=dimensions([*DIMENSIONS[:4], "tone"]),
        good=dimensions(DIMENSIONS),
        score=1.0,
        problem="dimensions.4.dimension",
        params=NOISE_PARAMS,
        enum=("dimension", DIMENSIONS),
    ),
    Case(
        "noise-sensitivity-impact",
        "noise-sensitivity",
        QA,
        [],
        bad=dimensions(DIMENSIONS, level="huge"),
        good=dimensions(DIMENSIONS),
        score=1.0,
        problem="dimensions.0.impactLevel",
        params=NOISE_PARAMS,
        enum=("impactLevel", ["none", "minimal", "moderate", "significant", "severe"]),
    ),
]

COUNT_CASES = [
    Case(
        "faithfulness",
        "faithfulness",
        CONTEXT_QA,
        [claims(3)],
        bad=verdicts("yes"),  # scored 1.0 before
        good=verdicts("yes", "yes", "no"),
        score=0.67,
        problem='expected 3 entries in "verdicts", one per claim, got 1',
    ),
    Case(
        "faithfulness-no-claims",
        "faithfulness",
        CONTEXT_QA,
        [claims(0)],
        bad=verdicts("yes", "no"),  # scored 0.5 with the reason "claim 2" before
        good={"verdicts": []},
        score=0.0,
        problem='expected 0 entries in "verdicts", one per claim, got 2',
    ),
    Case(
        "hallucination",
        "hallucination",
        CONTEXT_QA,
        [claims(3)],
        bad=stated_verdicts("yes"),
        good=stated_verdicts("yes", "no", "no"),
        score=0.33,
        problem='expected 3 entries in "verdicts", one per claim, got 1',
    ),
    Case(
        "context-recall-missing",
        "context-recall",
        RECALL,
        [claims(2)],
        bad=verdicts("yes"),
        good=verdicts("yes", "no"),
        score=0.5,
        problem='expected 2 entries in "verdicts", one per claim, got 1',
    ),
    Case(
        "context-recall-extra",
        "context-recall",
        RECALL,
        [claims(1)],
        bad=verdicts("yes", "yes"),
        good=verdicts("no"),
        score=0.0,
        problem='expected 1 entry in "verdicts", one per claim, got 2',
    ),
    Case(
        "answer-relevancy",
        "answer-relevancy",
        QA,
        [{"statements": ["s0", "s1", "s2"]}],
        bad=results("yes", "unsure"),
        good=results("yes", "unsure", "no"),
        score=0.43,
        problem='expected 3 entries in "results", one per statement, got 2',
    ),
    Case(
        "bias",
        "bias",
        QA,
        [{"opinions": ["o0", "o1"]}],
        bad=results("yes"),
        good=results("yes", "no"),
        score=0.5,
        problem='expected 2 entries in "results", one per numbered item, got 1',
    ),
    Case(
        "bias-whole-response",
        "bias",
        QA,
        [{"opinions": []}],  # the whole response is the one judged item
        bad={"results": []},
        good=results("yes"),
        score=1.0,
        problem='expected 1 entry in "results", one per numbered item, got 0',
    ),
    Case(
        "context-precision",
        "context-precision",
        CONTEXT_QA,
        [],
        bad={"verdicts": []},
        good=passage_verdicts("yes", "no", "yes"),
        score=0.83,
        problem='expected 3 entries in "verdicts", one per passage, got 0',
    ),
    Case(
        "context-precision-index",
        "context-precision",
        CONTEXT_QA,
        [],
        bad=passage_verdicts("yes", "no", "yes", indexes=[0, 0, 2]),
        good=passage_verdicts("no", "yes", "yes"),
        score=0.58,
        problem='"verdicts" needs exactly one entry per passage, identified by "context_index": '
        "none for 1; unexpected or repeated 0",
    ),
    Case(
        "context-relevance",
        "context-relevance",
        CONTEXT_QA,
        [],
        bad=evaluations(("high", True), ("high", True)),
        good=evaluations(("high", True), ("high", True), ("none", False)),
        score=0.67,
        problem='expected 3 entries in "evaluations", one per passage, got 2',
    ),
    Case(
        "answer-similarity",
        "answer-similarity",
        SIMILARITY,
        [UNITS],
        bad=matches("exact"),  # scored 1.0 before
        good=matches("exact", "missing"),
        score=0.44,
        problem='expected 2 entries in "matches", one per ground-truth unit, got 1',
    ),
    Case(
        "noise-sensitivity-count",
        "noise-sensitivity",
        QA,
        [],
        bad=dimensions(DIMENSIONS[:2]),
        good=dimensions(DIMENSIONS),
        score=1.0,
        problem='expected 5 entries in "dimensions", one per dimension, got 2',
        params=NOISE_PARAMS,
    ),
    Case(
        "noise-sensitivity-repeated",
        "noise-sensitivity",
        QA,
        [],
        bad=dimensions([*DIMENSIONS[:3], "relevance", DIMENSIONS[4]]),
        good=dimensions(DIMENSIONS),
        score=1.0,
        problem="none for 'consistency'; unexpected or repeated 'relevance'",
        params=NOISE_PARAMS,
    ),
    Case(
        "summarization",
        "summarization",
        SOURCE,
        [
            {
                "alignment": [{"claim": "c", "supported": True, "reason": "r"}],
                "questions": ["a", "b"],
            }
        ],
        bad=coverage(True),
        good=coverage(True, False),
        score=0.5,
        problem='expected 2 entries in "coverage", one per question, got 1',
    ),
    Case(
        "summarization-question-cap",
        "summarization",
        SOURCE,
        [{"alignment": [{"claim": "c", "supported": True, "reason": "r"}], "questions": ["a"] * 5}],
        bad=coverage(True, True, True, True, True),
        good=coverage(True, False),
        score=0.5,
        problem='expected 2 entries in "coverage", one per question, got 5',
        params={"max_questions": 2},
    ),
    Case(
        "rubric",
        "rubric",
        {"input": "Write a report.", "output": "A report."},
        [],
        bad=criteria(True, True),  # an error in the score step before, without a repair turn
        good=criteria(True, True, True),
        score=1.0,
        problem='expected 3 entries in "criteria", one per rubric criterion, got 2',
        params=RUBRIC_PARAMS,
    ),
    Case(
        "tool-call-accuracy-llm",
        "tool-call-accuracy-llm",
        tool_run("weather", "calendar"),
        [],
        bad=tool_evaluations(True),  # scored 1.0 before
        good=tool_evaluations(True, False),
        score=0.5,
        problem='expected 2 entries in "evaluations", one per tool call, got 1',
        params=TOOLS,
    ),
    Case(
        "tool-call-accuracy-llm-no-call",
        "tool-call-accuracy-llm",
        tool_run(),
        [],
        bad=tool_evaluations(False),
        good=tool_evaluations(),
        score=1.0,
        problem='expected 0 entries in "evaluations", one per tool call, got 1',
        params=TOOLS,
    ),
    Case(
        "trajectory-accuracy-llm",
        "trajectory-accuracy-llm",
        trajectory(2),
        [],
        bad=step_evaluations(1),
        good=step_evaluations(2),
        score=0.9,
        problem='expected 2 entries in "stepEvaluations", one per numbered step of the '
        "trajectory, got 1",
    ),
    Case(
        "trajectory-accuracy-llm-nested",
        "trajectory-accuracy-llm",
        trajectory(3, nested=2),
        [],
        bad=step_evaluations(4),
        good=step_evaluations(5),  # every numbered line, nested ones included
        score=0.9,
        problem='expected 3 (or 5 with nested steps) entries in "stepEvaluations"',
    ),
]

CASES = [
    *(pytest.param(case, id=f"label-{case.id}") for case in LABEL_CASES),
    *(pytest.param(case, id=f"count-{case.id}") for case in COUNT_CASES),
]


@pytest.mark.parametrize("case", CASES)
def test_bad_answer_twice_is_an_error_not_a_score(case: Case) -> None:
    result, model = _run(case, case.bad, case.bad)
    assert result.status == "error" and result.score is None
    assert result.error is not None and "after one repair attempt" in result.error.message
    assert case.problem in result.error.message
    failed = result.judge_calls[-1]
    assert failed.status == "failed" and failed.attempts == 2
    assert result.error.failed_step == failed.step
    repair = model.calls[len(case.before) + 1].messages
    assert [m.role for m in repair][-2:] == ["assistant", "user"]
    assert case.problem in repair[-1].content


@pytest.mark.parametrize("case", CASES)
def test_bad_answer_then_a_good_one_is_scored(case: Case) -> None:
    result, model = _run(case, case.bad, case.good)
    assert result.status == "ready", result.error
    assert result.score == case.score
    assert result.judge_calls[-1].attempts == 2
    assert len(model.calls) == len(case.before) + 2


@pytest.mark.parametrize("case", CASES)
def test_good_answer_is_scored_without_repair(case: Case) -> None:
    result, model = _run(case, case.good)
    assert result.status == "ready", result.error
    assert result.score == case.score
    assert len(model.calls) == len(case.before) + 1


@pytest.mark.parametrize(
    "case", [pytest.param(case, id=case.id) for case in LABEL_CASES if case.enum is not None]
)
def test_schema_sent_to_the_judge_lists_the_labels(case: Case) -> None:
    assert case.enum is not None
    name, labels = case.enum
    _, model = _run(case, case.good)
    schema = model.calls[len(case.before)].schema
    assert _enum_of(schema, name) == labels

"""Every metric case of ``lmeval_cases.json`` (lm-eval's own unit tests) through the public API.

One adapter per case ``name`` feeds the case's input to assay's functions and returns the
result in the shape of ``expected``; the comparison is the one the case names (exact,
approx with its tolerance, subset, range, property, raises). v0.5-API cases go through the
v0.5-shaped path (per-prediction lists, then reductions); where a case records its
``v0.4_equivalent``, the v0.4-shaped path (``process_*``) must give that value too.
"""

from __future__ import annotations

import builtins
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sacrebleu

from assay.tasks.metrics import (
    TASK_AGGREGATIONS,
    LLResults,
    aggregate_group,
    aggregate_metrics,
    aggregation_for,
    bootstrap_replicates,
    bootstrap_stderr,
    default_reductions,
    mean_stderr,
    process_generate_until,
    process_multiple_choice,
    reduce_scores,
    sacreformat,
    score_generation,
    score_loglikelihood,
    softmax,
    stderr_for,
)

CASES_FILE = Path(__file__).parents[2] / "fixtures" / "lmeval" / "lmeval_metric_cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text())

V05_LL_METRICS = {
    "acc",
    "acc_norm",
    "acc_mutual_info",
    "brier_score",
    "bpb",
    "logprob",
    "choice_logprob",
}
CORPUS_METRICS = {"bleu", "chrf", "ter"}


def _agg(name: str) -> Callable[[list[Any]], Any]:
    return TASK_AGGREGATIONS.get(name).fn


def _na(value: Any) -> Any:
    """lm-eval writes "N/A" where assay returns None."""
    return "N/A" if value is None else value


# ------------------------------------------------------------------------------ adapters


def _process_mc(case: dict[str, Any]) -> dict[str, Any]:
    inp = case["input"]
    return process_multiple_choice(
        [tuple(r) for r in inp["results"]],
        choices=inp["choices"],
        gold=inp["gold"],
        metrics=case["args"]["metric_list"],
    )


def _dict_metric_custom_aggregation(case: dict[str, Any]) -> dict[str, Any]:
    inp = case["input"]
    per_doc = inp["per_doc_metric_output"]

    def pass_metric(references: list[Any], predictions: list[Any]) -> dict[str, float]:
        return dict(per_doc)

    def total(items: list[float]) -> float:
        return float(sum(items))

    raw: dict[tuple[str, str], list[Any]] = {}
    sources: dict[str, str] = {}
    for doc in range(inp["n_docs"]):
        values = process_generate_until(
            f"prediction {doc}",
            "gold",
            [("pass_metric", {})],
            choices=None,
            multiple_targets=False,
            functions={"pass_metric": pass_metric},
        )
        sources.update(values.sources)
        for key, value in values.items():
            raw.setdefault((key, inp["filter"]), []).append(value)
    configured = {"pass_metric": total}
    aggregations = {key: aggregation_for(key, sources, configured) for key, _ in raw}
    return aggregate_metrics(raw, aggregations, bootstrap_iters=0)


def _bootstrap_no_mp(case: dict[str, Any]) -> dict[str, Any]:
    items = case["input"]["items"]
    replicates = bootstrap_replicates(_agg("mean"), items, case["args"]["iters"])
    mean_of_items = sum(items) / len(items)
    return {
        "len": len(replicates),
        "abs(mean(replicates)-mean(items))<": abs(
            sum(replicates) / len(replicates) - mean_of_items
        ),
    }


def _bootstrap_stderr_mean(case: dict[str, Any]) -> dict[str, Any]:
    random.seed(42)
    items = [random.random() for _ in range(1000)]
    boot = bootstrap_stderr(_agg("mean"), items, case["args"]["iters"])
    analytic = mean_stderr(items)
    observed = case["observed"]["pypi-0.4.13"]
    # beyond the case's property: the exact numbers lm-eval printed
    assert analytic == pytest.approx(observed["mean_stderr"], abs=1e-15)
    assert boot == pytest.approx(observed["bootstrap_stderr"], abs=1e-15)
    return {"approx_equal_to": boot, "_analytic": analytic}


def _aggregation_task(case: dict[str, Any]) -> dict[str, Any]:
    args = case["args"]
    raw = {tuple(key.split(",", 1)): v for key, v in case["input"]["raw_metrics"].items()}
    if "task_aggregations" in args:
        aggregations = dict(args["task_aggregations"])
    else:  # the task in lm-eval's test aggregates every metric by mean
        aggregations = {metric: "mean" for metric, _ in raw}
    out = aggregate_metrics(raw, aggregations, bootstrap_iters=args["bootstrap_iters"])
    return {k: _na(v) for k, v in out.items()}


def _group(case: dict[str, Any]) -> dict[str, Any]:
    weight = case["args"]["weight_by_size"]
    leaves = {
        task: aggregate_metrics({("acc", "none"): values}, {"acc": "mean"}, bootstrap_iters=0)
        for task, values in case["input"]["subtasks"].items()
    }
    tree = case["args"].get("tree")
    if tree is None:
        group = aggregate_group(leaves, "acc,none", weight_by_size=weight)
        assert group is not None
        return {"acc,none": group.value, "sample_len": group.sample_len}
    assert tree == "parent = [sub=[t1], t2]"
    sub = aggregate_group({"t1": leaves["t1"]}, "acc,none", weight_by_size=weight)
    parent = aggregate_group(leaves, "acc,none", weight_by_size=weight)  # over leaf tasks
    assert sub is not None and parent is not None
    return {"sub": sub.value, "parent": parent.value, "parent.sample_len": parent.sample_len}


def _chrf_v04(case: dict[str, Any]) -> Any:
    items = [tuple(i) for i in case["input"]["items"]]
    value = _agg(case["name"])(list(items))
    expected = case["expected"]
    if not isinstance(expected, dict):
        return value
    refs = [r for r, _ in items]
    preds = [p for _, p in items]
    word_order = 2 if case["name"] == "chrf++" else 0
    direct = sacrebleu.corpus_chrf(preds, [refs], word_order=word_order).score
    observed = next(iter(case["observed"].values()))["value"]
    out = {"equals": value == direct and value == pytest.approx(observed, abs=1e-12)}
    if "differs_from" in expected:
        out["differs_from"] = value != _agg(expected["differs_from"])(list(items))
    return out


def _ll_results(inp: dict[str, Any]) -> LLResults:
    return LLResults.build(
        inp["lls"],
        is_greedy=inp.get("is_greedy", ()),
        choices=inp.get("choices", ()),
        lls_mutual_info=inp.get("lls_mutual_info"),
    )


def _v05_ll_metric(case: dict[str, Any]) -> Any:
    inp = case["input"]
    multiple = case["args"].get("multiple_targets", False)
    scores = score_loglikelihood(
        inp["references"], _ll_results(inp), [(case["name"], {})], multiple_targets=multiple
    )
    reduced = reduce_scores(scores, default_reductions(list(scores)))
    equivalent = case.get("v0.4_equivalent")
    if equivalent is not None:  # the v0.4-shaped path gives the same number
        results = _ll_results(inp)
        v04 = process_multiple_choice(
            list(zip(results.lls, results.is_greedy, strict=True)),
            choices=results.choices,
            gold=inp["references"],
            metrics=[case["name"]],
        )
        assert v04[case["name"]] == equivalent["pypi-0.4.13"]["value"]
    return reduced[case["name"]]


def _v05_exact_match(case: dict[str, Any]) -> dict[str, Any]:
    inp, args = case["input"], dict(case["args"])
    multiple = args.pop("multiple_targets", False)
    scores = score_generation(
        inp["references"],
        inp["predictions"],
        [("exact_match", args)],
        multiple_targets=multiple,
    )
    equivalent = case.get("v0.4_equivalent")
    if equivalent is not None:
        per_doc = [
            process_generate_until(
                pred,
                ref,
                [("exact_match", args)],
                choices=None,
                multiple_targets=False,
            )["exact_match"]
            for ref, pred in zip(inp["references"], inp["predictions"], strict=True)
        ]
        assert _agg("mean")(per_doc) == equivalent["pypi-0.4.13"]["mean"]
    return dict(scores)


def _aggregation_items(case: dict[str, Any]) -> Any:
    name = case["name"].split(":", 1)[1]
    items = case["input"]["items"]
    if name == "mean_stderr":
        value = stderr_for("mean", items)
        assert value == mean_stderr(items)
    else:
        value = _agg(name)(items)
    equivalent = case.get("v0.4_equivalent")
    if equivalent is not None:
        assert value == pytest.approx(equivalent["pypi-0.4.13"]["value"], rel=1e-12)
    return value


def _softmax(case: dict[str, Any]) -> Any:
    values = softmax(case["input"]["x"]).tolist()
    if case["compare"] == "property":
        return {"sum": sum(values)}
    return values


def _v05_perplexity(case: dict[str, Any]) -> dict[str, Any]:
    per_doc = []
    for doc in case["input"]["docs"]:
        scores = score_loglikelihood(doc["references"], _ll_results(doc), [("perplexity", {})])
        per_doc.append(reduce_scores(scores, default_reductions(list(scores)))["perplexity"])
    out: dict[str, Any] = {"per_doc": per_doc}
    if "aggregate" in case["expected"]:
        out["aggregate"] = _agg("perplexity")(per_doc)
    return out


def _sacreformat(case: dict[str, Any]) -> dict[str, Any]:
    refs, preds = sacreformat(case["input"]["refs"], case["input"]["preds"])
    return {"refs": refs, "preds": preds}


def _v05_corpus(case: dict[str, Any]) -> float:
    name = case["name"]
    per_doc = []
    for refs, preds in case["input"]["docs"]:
        scores = score_generation(refs, preds, [(name, {})])
        per_doc.append(
            reduce_scores(scores, default_reductions(list(scores), scores.sources))[name]
        )
    value = _agg(name)(per_doc)
    equivalent = case.get("v0.4_equivalent")
    if equivalent is not None:
        v04_items = []
        for refs, preds in case["input"]["docs"]:
            gold = refs[0] if len(refs) == 1 else refs
            values = process_generate_until(
                preds[0], gold, [(name, {})], choices=None, multiple_targets=len(refs) > 1
            )
            v04_items.append(values[name])
        v04 = _agg(name)(v04_items)
        assert v04 == pytest.approx(equivalent["pypi-0.4.13"]["value"], abs=1e-9)
        assert v04 == value
    return value


def _reduce(case: dict[str, Any]) -> Any:
    kind = case["name"].split(":", 1)[1]
    scores = case["input"]["scores"]
    reductions: dict[str, Any] = {}
    if kind == "custom_mean":
        reductions = {metric: "mean" for metric in scores}
    elif kind == "dict_reduction":
        returned = case["input"]["reduction_returns"]
        reductions = {metric: lambda reference, values: dict(returned) for metric in scores}
    return reduce_scores(scores, reductions)


def _gen_equality(case: dict[str, Any]) -> dict[str, Any]:
    def test_metric(references: Any, predictions: list[Any]) -> dict[str, list[int]]:
        return {"test_metric": [int(references == p) for p in predictions]}

    inp = case["input"]
    scores = score_generation(
        inp["reference"],
        inp["predictions"],
        [("test_metric", {})],
        functions={"test_metric": test_metric},
    )
    return dict(scores)


def _scorer_ll_acc(case: dict[str, Any]) -> dict[str, Any]:
    inp = case["input"]
    results = LLResults.build(inp["lls"], choices=inp["choices"])
    return dict(score_loglikelihood(inp["target"], results, [("acc", {})]))


def adapter_for(case: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
    name: str = case["name"]
    if name == "process_results:multiple_choice":
        return _process_mc
    if name == "aggregation:custom(dict-valued metric)":
        return _dict_metric_custom_aggregation
    if name == "bootstrap(no-mp):mean":
        return _bootstrap_no_mp
    if name == "bootstrap_stderr:mean":
        return _bootstrap_stderr_mean
    if name == "aggregation:mean" and "raw_metrics" in case["input"]:
        return _aggregation_task
    if name.startswith("aggregation:"):
        return _aggregation_items
    if name.startswith("group_aggregate:"):
        return _group
    if name in ("chrf", "chrf++") and case["api"] == "v0.4":
        return _chrf_v04
    if name in V05_LL_METRICS:
        return _v05_ll_metric
    if name == "exact_match":
        return _v05_exact_match
    if name == "softmax(util)":
        return _softmax
    if name == "perplexity":
        return _v05_perplexity
    if name == "_sacreformat(util)":
        return _sacreformat
    if name in CORPUS_METRICS:
        return _v05_corpus
    if name.startswith("scorer.reduce:"):
        return _reduce
    if name == "scorer.gen:equality_metric":
        return _gen_equality
    if name == "scorer.ll:acc":
        return _scorer_ll_acc
    raise AssertionError(f"no adapter for case {name!r}")


# ------------------------------------------------------------------------------ comparing


def _close(actual: Any, expected: Any, tol: dict[str, float]) -> bool:
    if isinstance(expected, dict):
        return all(_close(actual[k], v, tol) for k, v in expected.items())
    if isinstance(expected, list):
        return len(actual) == len(expected) and all(
            _close(a, e, tol) for a, e in zip(actual, expected, strict=True)
        )
    if isinstance(expected, str):
        return bool(actual == expected)
    return bool(actual == pytest.approx(expected, abs=tol.get("abs"), rel=tol.get("rel")))


def check(case: dict[str, Any], run: Callable[[], Any]) -> None:
    compare, expected = case["compare"], case["expected"]
    if compare == "raises":
        with pytest.raises(getattr(builtins, expected)):
            run()
        return
    actual = run()
    if compare == "exact":
        assert actual == expected
        assert type(actual) is not str or type(expected) is str
    elif compare == "approx":
        assert _close(actual, expected, case["tol"]), (actual, expected)
    elif compare == "subset":
        expected = dict(expected)
        for key in expected.pop("__absent__", []):
            assert key not in actual
        for key, value in expected.items():
            assert key in actual, key
            if isinstance(value, float) and not isinstance(actual[key], str):
                assert actual[key] == pytest.approx(value, abs=1e-12), key
            else:
                assert actual[key] == value, key
    elif compare == "range":
        if "gt" in expected:
            assert actual > expected["gt"]
        if "lt" in expected:
            assert actual < expected["lt"]
    elif compare == "property":
        _check_property(case, actual)
    else:
        raise AssertionError(f"unknown compare {compare!r}")


def _check_property(case: dict[str, Any], actual: dict[str, Any]) -> None:
    expected = case["expected"]
    if "approx_equal_to" in expected:  # bootstrap stderr ≈ analytic mean stderr
        assert actual["approx_equal_to"] == pytest.approx(
            actual["_analytic"], abs=case["tol"]["abs"]
        )
        return
    for key, value in expected.items():
        if key == "sum":
            assert actual["sum"] == pytest.approx(value, abs=1e-12)
        elif key.endswith("<"):
            assert actual[key] < value, key
        elif key in ("equals", "differs_from"):
            assert actual[key] is True, key
        else:
            assert actual[key] == value, key


@pytest.mark.parametrize("case", CASES, ids=[c["test"] for c in CASES])
def test_lmeval_metric_case(case: dict[str, Any]) -> None:
    adapter = adapter_for(case)
    check(case, lambda: adapter(case))


def test_all_75_metric_cases_are_loaded() -> None:
    assert len(CASES) == 75
    assert all(c["kind"] == "metric" for c in CASES)

"""The v0.4 built-in result processing, output type by output type."""

from __future__ import annotations

import logging
import math
from typing import Any

import pytest

from assay.tasks.metrics import (
    aggregate_metrics,
    aggregation_for,
    higher_is_better_for,
    process_generate_until,
    process_loglikelihood,
    process_loglikelihood_rolling,
    process_multiple_choice,
    resolve_choice_gold,
)

# ------------------------------------------------------------------------ loglikelihood


def test_loglikelihood_perplexity_and_greedy_acc() -> None:
    assert process_loglikelihood([(-2.5, True)], ["perplexity", "acc"]) == {
        "perplexity": -2.5,
        "acc": 1,
    }
    assert process_loglikelihood([(-0.5, False)], ["acc"]) == {"acc": 0}


def test_loglikelihood_rejects_metrics_it_cannot_compute() -> None:
    with pytest.raises(ValueError, match=r"'acc_norm' is not computed .* loglikelihood"):
        process_loglikelihood([(-1.0, True)], ["acc_norm"])
    with pytest.raises(ValueError, match=r"one .* result, got 2"):
        process_loglikelihood([(-1.0, True), (-2.0, False)], ["acc"])


def test_rolling_counts_words_and_utf8_bytes() -> None:
    text = "Grüße aus  Köln\nheute"
    out = process_loglikelihood_rolling(-12.0, text, ["word_perplexity", "byte_perplexity"])
    assert out == {"word_perplexity": (-12.0, 4), "byte_perplexity": (-12.0, len(text) + 3)}
    # lm-eval splits on whitespace runs, so a leading space adds an empty piece
    assert process_loglikelihood_rolling(-1.0, " a b", ["word_perplexity"]) == {
        "word_perplexity": (-1.0, 3)
    }
    assert process_loglikelihood_rolling(-1.0, "ab", ["bits_per_byte"]) == {
        "bits_per_byte": (-1.0, 2)
    }


# ------------------------------------------------------------------------ multiple choice

MC_METRICS = ["acc", "acc_norm", "acc_bytes", "exact_match", "f1", "mcc", "brier_score"]


def test_multiple_choice_all_metrics() -> None:
    results = [(-4.0, False), (-3.0, True), (-6.0, False)]
    out = process_multiple_choice(
        results, choices=["ab", "cdefgh", "ijklmnopqrstuvw"], gold=2, metrics=MC_METRICS
    )
    # raw argmax 1; per character: -2, -0.5, -0.4 → 2; per byte the same as ASCII
    assert out["acc"] == 0.0
    assert out["acc_norm"] == 1.0
    assert out["acc_bytes"] == 1.0
    assert out["exact_match"] == 0  # the gold is not the greedy decode
    assert out["f1"] == (2, 1)
    assert out["mcc"] == (2, 1)
    gold, probs = out["brier_score"]
    assert gold == 2
    assert sum(probs) == pytest.approx(1.0, abs=1e-15)
    assert probs[1] == pytest.approx(math.exp(-3) / sum(math.exp(x) for x in (-4, -3, -6)))


def test_acc_norm_uses_characters_and_acc_bytes_uses_utf8_bytes() -> None:
    # "éé" is 2 characters but 4 bytes
    results = [(-2.0, False), (-2.2, False)]
    out = process_multiple_choice(
        results, choices=["éé", "abc"], gold=1, metrics=["acc_norm", "acc_bytes"]
    )
    # chars: -1.0 vs -0.733 → 1; bytes: -0.5 vs -0.733 → 0
    assert out == {"acc_norm": 1.0, "acc_bytes": 0.0}


def test_ties_go_to_the_first_choice() -> None:
    out = process_multiple_choice(
        [(-1.0, False), (-1.0, False)], choices=["a", "b"], gold=0, metrics=["acc"]
    )
    assert out["acc"] == 1.0


def test_gold_by_text_and_out_of_range_gold(caplog: pytest.LogCaptureFixture) -> None:
    results = [(-1.0, True), (-2.0, False)]
    assert process_multiple_choice(results, choices=["yes", "no"], gold="yes", metrics=["acc"]) == {
        "acc": 1.0
    }
    with caplog.at_level(logging.WARNING):
        out = process_multiple_choice(
            results, choices=["yes", "no"], gold=5, metrics=["acc", "exact_match"]
        )
    assert out == {"acc": 0.0, "exact_match": 0}
    assert "not within the 2 choices" in caplog.text


def test_resolve_choice_gold() -> None:
    choices = ["A", "B", "C"]
    assert resolve_choice_gold(1, choices) == 1
    assert resolve_choice_gold("C", choices) == 2
    assert resolve_choice_gold([0, "B", 7], choices) == [0, 1, -100]
    assert resolve_choice_gold("Z", choices) == -100
    assert resolve_choice_gold(-1, choices) == -100
    with pytest.raises(ValueError, match="choice index or a choice text"):
        resolve_choice_gold(1.5, choices)


def test_multiple_targets_any_gold_counts() -> None:
    results = [(-3.0, False), (-1.0, True), (-2.0, True)]
    out = process_multiple_choice(
        results, choices=["a", "b", "c"], gold=[0, 1], metrics=["acc", "exact_match"]
    )
    assert out == {"acc": 1.0, "exact_match": 1}
    out = process_multiple_choice(results, choices=["a", "b", "c"], gold=[0, 9], metrics=["acc"])
    assert out == {"acc": 0.0}


def test_mutual_info_with_separate_unconditional_lls() -> None:
    out = process_multiple_choice(
        [(-1.0, True), (-2.0, False)],
        choices=["a", "b"],
        gold=1,
        metrics=["acc", "acc_mutual_info"],
        unconditional=[-0.5, -3.0],
    )
    # MI: -0.5, 1.0 → choice 1
    assert out == {"acc": 0.0, "acc_mutual_info": 1.0}
    with pytest.raises(ValueError, match="unconditional"):
        process_multiple_choice(
            [(-1.0, True), (-2.0, False)], choices=["a", "b"], gold=1, metrics=["acc_mutual_info"]
        )


def test_likelihood_and_v05_metrics_in_multiple_choice() -> None:
    results = [(-2.0, False), (-1.0, True)]
    out = process_multiple_choice(
        results,
        choices=["ab", "c"],
        gold=0,
        metrics=["likelihood", "bpb", "choice_logprob", "exact_match_mc"],
    )
    assert out["likelihood"] == (0, [-2.0, -1.0])
    assert out["bpb"] == pytest.approx(1 / math.log(2), rel=1e-15)
    assert out["choice_logprob"] == pytest.approx(-2.0 - math.log(math.exp(-2) + math.exp(-1)))
    assert out["exact_match_mc"] == 0


def test_multiple_choice_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="choice 1 is empty"):
        process_multiple_choice(
            [(-1.0, False), (-2.0, False)], choices=["a", ""], gold=0, metrics=["acc_norm"]
        )
    with pytest.raises(ValueError, match="3 loglikelihood results for 2 choices"):
        process_multiple_choice([(-1.0, False)] * 3, choices=["a", "b"], gold=0, metrics=["acc"])
    with pytest.raises(ValueError, match="'perplexity' is not computed"):
        process_multiple_choice([(-1.0, False)], choices=["a"], gold=0, metrics=["perplexity"])


# ------------------------------------------------------------------------ generate_until


def _gen(result: Any, gold: Any, metrics: list[tuple[str, dict[str, Any]]], **kw: Any) -> Any:
    kw.setdefault("choices", None)
    kw.setdefault("multiple_targets", False)
    return process_generate_until(result, gold, metrics, **kw)


def test_exact_match_with_gsm8k_style_options() -> None:
    options = {
        "ignore_case": True,
        "ignore_punctuation": False,
        "regexes_to_ignore": [",", "\\$", "(?s).*#### ", "\\.$"],
    }
    out = _gen("1000", "Natalia sold…\n#### 1,000", [("exact_match", options)])
    assert out == {"exact_match": 1.0}
    assert _gen("$1,000.", "1000", [("exact_match", {})]) == {"exact_match": 0.0}


def test_exact_match_options_apply_in_lm_evals_order() -> None:
    # lowercasing happens before punctuation and digit removal, after the regexes
    options = {"regexes_to_ignore": ["A"], "ignore_case": True}
    assert _gen("bc", "Abc", [("exact_match", options)]) == {"exact_match": 1.0}
    assert _gen("abc", "Abc", [("exact_match", options)]) == {"exact_match": 0.0}
    numbers = {"ignore_numbers": True, "ignore_punctuation": True}
    assert _gen("route 66!", "route", [("exact_match", numbers)]) == {"exact_match": 0.0}
    assert _gen("route66!", "route", [("exact_match", numbers)]) == {"exact_match": 1.0}


def test_gold_index_becomes_choice_text_and_gold_is_cast() -> None:
    out = _gen("Paris", 1, [("exact_match", {})], choices=["Rome", "Paris"])
    assert out == {"exact_match": 1.0}
    assert _gen("42", 42, [("exact_match", {})]) == {"exact_match": 1.0}
    with pytest.raises(ValueError, match="not within the 2 choices"):
        _gen("Paris", 2, [("exact_match", {})], choices=["Rome", "Paris"])


def test_multiple_targets_score_one_when_any_gold_matches() -> None:
    options = {"ignore_case": True, "ignore_punctuation": True}
    out = _gen(
        "the Beatles!",
        ["Beatles", "The Beatles"],
        [("exact_match", options)],
        multiple_targets=True,
    )
    assert out == {"exact_match": 1.0}
    out = _gen(
        "Stones", ["Beatles", "The Beatles"], [("exact_match", options)], multiple_targets=True
    )
    assert out == {"exact_match": 0.0}


def test_corpus_metrics_keep_the_reference_prediction_pair() -> None:
    out = _gen("Das Haus.", "Das Haus ist klein.", [("bleu", {}), ("ter", {}), ("bypass", {})])
    assert out["bleu"] == ("Das Haus ist klein.", "Das Haus.")
    assert out["ter"] == ("Das Haus ist klein.", "Das Haus.")
    assert out["bypass"] is None


def test_custom_metric_called_with_keywords_then_positionally() -> None:
    calls: list[str] = []

    def keyword_metric(references: list[str], predictions: list[str], scale: float) -> float:
        calls.append("kw")
        return scale * float(references[0] == predictions[0])

    def positional_metric(items: list[str]) -> float:
        calls.append("pos")
        gold, pred = items
        return float(len(pred)) / len(gold)

    out = _gen(
        "abc",
        "abcd",
        [("keyword_metric", {"scale": 2.0}), ("positional_metric", {})],
        functions={"keyword_metric": keyword_metric, "positional_metric": positional_metric},
    )
    assert out == {"keyword_metric": 0.0, "positional_metric": 0.75}
    assert calls == ["kw", "pos"]


def test_dict_valued_metric_keys_inherit_aggregation_and_direction() -> None:
    def passes(references: list[str], predictions: list[str]) -> dict[str, float]:
        hit = float(references[0] in predictions[0])
        return {"pass@1": hit, "pass@2": min(1.0, hit + 0.5)}

    def total(items: list[float]) -> float:
        return float(sum(items))

    raw: dict[tuple[str, str], list[Any]] = {}
    sources: dict[str, str] = {}
    for pred in ("yes it is 4", "no", "4"):
        values = _gen(pred, "4", [("passes", {})], functions={"passes": passes})
        sources.update(values.sources)
        for key, value in values.items():
            raw.setdefault((key, "none"), []).append(value)
    assert sources == {"pass@1": "passes", "pass@2": "passes"}
    configured = {"passes": total}
    aggregations = {key: aggregation_for(key, sources, configured) for key, _ in raw}
    assert aggregations == {"pass@1": total, "pass@2": total}
    out = aggregate_metrics(raw, aggregations, bootstrap_iters=0)
    assert out["pass@1,none"] == 2.0
    assert out["pass@2,none"] == 2.5
    assert higher_is_better_for("pass@1", sources, {"passes": False}) is False
    # a key that is configured itself keeps its own aggregation
    assert aggregation_for("pass@1", sources, {"pass@1": "median", "passes": total}) == "median"
    # a registered source gives its default
    assert aggregation_for("bleu", {}, {}) == "bleu"
    assert higher_is_better_for("ter", {}, {}) is False


def test_unknown_generation_metric_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown metric 'exact_matc'.*exact_match"):
        _gen("a", "a", [("exact_matc", {})])
    with pytest.raises(ValueError, match="'acc' is not computed"):
        _gen("a", "a", [("acc", {})])


def test_multi_target_custom_metric_uses_any() -> None:
    def contains(references: list[str], predictions: list[str]) -> float:
        return float(references[0] in predictions[0])

    out = _gen(
        "x is 3",
        ["2", "3"],
        [("contains", {})],
        multiple_targets=True,
        functions={"contains": contains},
    )
    assert out == {"contains": 1.0}

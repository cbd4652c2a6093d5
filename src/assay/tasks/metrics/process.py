"""lm-eval v0.4's built-in ``process_results``, one function per output type, with explicit
arguments instead of a task object.

Each returns ``{metric: per-doc value}`` for the metrics asked for; the values are what the
metric's aggregation expects (0/1 for accuracies, ``(gold, pred)`` pairs for F1 and MCC,
``(ll, words)`` pairs for word perplexity, ``(references, prediction)`` pairs for the
sacrebleu metrics, …). A metric the built-in processing cannot compute for the output type
raises (lm-eval would silently leave it out of the results); ``bypass`` gives ``None``
everywhere (its aggregation reports 999).
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from assay.tasks.metrics import loglikelihood as ll
from assay.tasks.metrics.registry import TASK_METRICS, TaskMetric

log = logging.getLogger(__name__)

MetricEntry = tuple[str, Mapping[str, Any]]
"""A ``metric_list`` entry as the processing needs it: the name and the metric kwargs."""


def _unsupported(metric: str, output_type: str, supported: Sequence[str]) -> ValueError:
    return ValueError(
        f"metric {metric!r} is not computed by the built-in {output_type} result processing "
        f"(it computes {', '.join(supported)}); give the task a process_results function"
    )


# ----------------------------------------------------------------------------- loglikelihood

_LL_METRICS = ("perplexity", "acc", "bypass")


def process_loglikelihood(
    results: Sequence[tuple[float, bool]], metrics: Sequence[str]
) -> dict[str, Any]:
    """One continuation: ``perplexity`` → its loglikelihood; ``acc`` → whether it is the
    greedy decode (0/1)."""
    if len(results) != 1:
        raise ValueError(
            f"a loglikelihood doc has one (loglikelihood, is_greedy) result, got {len(results)}"
        )
    loglikelihood, is_greedy = results[0]
    out: dict[str, Any] = {}
    for metric in metrics:
        if metric == "perplexity":
            out[metric] = float(loglikelihood)
        elif metric == "acc":
            out[metric] = int(is_greedy)
        elif metric == "bypass":
            out[metric] = None
        else:
            raise _unsupported(metric, "loglikelihood", _LL_METRICS)
    return out


_ROLLING_METRICS = ("word_perplexity", "byte_perplexity", "bits_per_byte", "bypass")


def count_words(text: str) -> int:
    """lm-eval's word count: the pieces of a split on whitespace runs (a leading or trailing
    run adds an empty piece, as in lm-eval)."""
    return len(re.split(r"\s+", text))


def count_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def process_loglikelihood_rolling(
    loglikelihood: float, text: str, metrics: Sequence[str]
) -> dict[str, Any]:
    """A whole text's loglikelihood → ``(ll, words)`` / ``(ll, bytes)`` pairs for the
    weighted perplexities and bits per byte."""
    out: dict[str, Any] = {}
    for metric in metrics:
        if metric == "word_perplexity":
            out[metric] = (float(loglikelihood), count_words(text))
        elif metric in ("byte_perplexity", "bits_per_byte"):
            out[metric] = (float(loglikelihood), count_bytes(text))
        elif metric == "bypass":
            out[metric] = None
        else:
            raise _unsupported(metric, "loglikelihood_rolling", _ROLLING_METRICS)
    return out


# ----------------------------------------------------------------------------- multiple choice


def _resolve_one(target: Any, choices: Sequence[str]) -> int:
    if isinstance(target, str):
        return choices.index(target) if target in choices else ll.INVALID_GOLD
    if isinstance(target, bool) or not isinstance(target, int | np.integer):
        raise ValueError(f"a gold must be a choice index or a choice text, got {target!r}")
    index = int(target)
    return index if 0 <= index < len(choices) else ll.INVALID_GOLD


def resolve_choice_gold(target: Any, choices: Sequence[str]) -> int | list[int]:
    """The gold index (or indices) for ``target``: an index, a choice's text, or a list of
    either. A gold that is not among the choices becomes -100 (scored wrong) with a
    warning, as in lm-eval; unlike lm-eval a negative index is out of range too."""
    golds: int | list[int]
    if isinstance(target, Sequence) and not isinstance(target, str):
        golds = [_resolve_one(t, choices) for t in target]
        invalid = ll.INVALID_GOLD in golds
    else:
        golds = _resolve_one(target, choices)
        invalid = golds == ll.INVALID_GOLD
    if invalid:
        log.warning(
            "gold %r is not within the %d choices %r; scored as wrong (-100)",
            target,
            len(choices),
            list(choices),
        )
    return golds


_MC_BUILTIN = (
    "acc",
    "acc_norm",
    "acc_bytes",
    "acc_mutual_info",
    "exact_match",
    "f1",
    "mcc",
    "brier_score",
    "likelihood",
    "bypass",
)


def _registered_mc(metric: str) -> TaskMetric | None:
    entry = TASK_METRICS.find(metric)
    if entry is None or "multiple_choice" not in entry.output_types:
        return None
    return entry


def process_multiple_choice(
    results: Sequence[tuple[float, bool]],
    *,
    choices: Sequence[str],
    gold: Any,
    metrics: Sequence[str],
    unconditional: Sequence[float] | None = None,
) -> dict[str, Any]:
    """Score one multiple-choice doc from its per-choice ``(loglikelihood, is_greedy)``.

    ``results`` has one entry per choice, or two per choice (lm-eval's layout when
    ``acc_mutual_info`` is asked for: the conditional then the unconditional ones) when
    ``unconditional`` is not given. ``gold`` is an index, a choice text or a list of them
    (a list means multiple targets: any gold counts). argmax ties go to the first choice;
    ``acc_norm`` divides by the choice's character length (without the target delimiter),
    ``acc_bytes`` by its UTF-8 byte length. Other registered multiple-choice metrics
    (``exact_match_mc``, ``bpb``, ``choice_logprob``, …) are computed by their functions."""
    n = len(choices)
    if n == 0:
        raise ValueError("a multiple-choice doc needs at least one choice")
    lls = [float(r[0]) for r in results]
    greedy = [bool(r[1]) for r in results]
    if len(lls) == 2 * n and unconditional is None:
        unconditional = lls[n:]
        lls, greedy = lls[:n], greedy[:n]
    if len(lls) != n:
        raise ValueError(f"{len(lls)} loglikelihood results for {n} choices")
    if unconditional is not None and len(unconditional) != n:
        raise ValueError(f"{len(unconditional)} unconditional loglikelihoods for {n} choices")

    golds = resolve_choice_gold(gold, choices)
    multiple = isinstance(golds, list)
    results_ll = ll.LLResults.build(
        lls,
        is_greedy=greedy,
        choices=choices,
        lls_mutual_info=None
        if unconditional is None
        else [c - u for c, u in zip(lls, unconditional, strict=True)],
    )
    pred = ll.first_argmax(lls)

    def correct(p: int) -> float:
        return float(ll.is_correct(golds, p, multiple_targets=multiple))

    out: dict[str, Any] = {}
    for metric in metrics:
        if metric == "acc":
            out[metric] = correct(pred)
        elif metric == "acc_norm":
            out[metric] = correct(ll.first_argmax(results_ll.array() / results_ll.char_len()))
        elif metric == "acc_bytes":
            out[metric] = correct(ll.first_argmax(results_ll.array() / results_ll.byte_len()))
        elif metric == "acc_mutual_info":
            if results_ll.lls_mutual_info is None:
                raise ValueError(
                    "acc_mutual_info needs the unconditional loglikelihoods: pass "
                    "`unconditional` or 2 × choices results"
                )
            out[metric] = correct(ll.first_argmax(results_ll.lls_mutual_info))
        elif metric == "exact_match":
            out[metric] = ll.exact_match_mc(golds, results_ll)
        elif metric in ("f1", "mcc"):
            out[metric] = (golds, pred)
        elif metric == "brier_score":
            out[metric] = (golds, ll.softmax(lls).tolist())
        elif metric == "likelihood":
            out[metric] = (golds, list(lls))
        elif metric == "bypass":
            out[metric] = None
        elif (entry := _registered_mc(metric)) is not None:
            out[metric] = entry.fn(golds, results_ll)
        else:
            raise _unsupported(metric, "multiple_choice", _MC_BUILTIN)
    return out


# ----------------------------------------------------------------------------- generation


class MetricValues(dict[str, Any]):
    """A doc's ``{key: value}`` with, in ``sources``, the metric that emitted each key (a
    metric returning a dict emits several keys, which inherit its aggregation and
    direction, lm-eval #3314)."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: dict[str, str] = {}

    def emit(self, key: str, value: Any, source: str) -> None:
        self[key] = value
        self.sources[key] = source


def aggregation_for(
    key: str,
    sources: Mapping[str, str],
    configured: Mapping[str, Any] | None = None,
) -> Any:
    """The aggregation (a name or callable) for an emitted ``key``: the one configured for
    the key itself, else the one configured for the metric that emitted it, else that
    metric's registered default, else ``"mean"`` (lm-eval's fallback)."""
    configured = configured or {}
    if key in configured:
        return configured[key]
    source = sources.get(key, key)
    if source in configured:
        return configured[source]
    entry = TASK_METRICS.find(source)
    return entry.aggregation if entry is not None else "mean"


def higher_is_better_for(
    key: str, sources: Mapping[str, str], configured: Mapping[str, bool] | None = None
) -> bool:
    """The direction of an emitted ``key``, inherited like its aggregation (default:
    higher is better)."""
    configured = configured or {}
    if key in configured:
        return configured[key]
    source = sources.get(key, key)
    if source in configured:
        return configured[source]
    entry = TASK_METRICS.find(source)
    return entry.higher_is_better if entry is not None else True


def _cast_gold(gold: Any, result: Any) -> Any:
    try:
        return type(result)(gold)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"cannot cast the gold {gold!r} to the prediction's type "
            f"{type(result).__name__} ({exc})"
        ) from exc


def _gold_from_choices(gold: Any, choices: Sequence[str]) -> Any:
    def one(g: Any) -> Any:
        if isinstance(g, bool) or not isinstance(g, int | np.integer):
            raise ValueError(f"with doc_to_choice the gold must be a choice index, got {g!r}")
        if not 0 <= int(g) < len(choices):
            raise ValueError(f"gold index {g} is not within the {len(choices)} choices")
        return choices[int(g)]

    if isinstance(gold, Sequence) and not isinstance(gold, str):
        return [one(g) for g in gold]
    return one(gold)


def _call_v04(fn: Callable[..., Any], gold: Any, result: Any, kwargs: Mapping[str, Any]) -> Any:
    """lm-eval's convention for a metric callable: keywords first, then the positional
    ``[gold, result]`` item on TypeError."""
    try:
        return fn(references=[gold], predictions=[result], **kwargs)
    except TypeError:
        return fn([gold, result])


def _first(value: Any, metric: str) -> Any:
    if isinstance(value, Mapping):
        return {k: _first(v, metric) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != 1:
            raise ValueError(f"metric {metric!r} returned {len(value)} values for one prediction")
        return value[0]
    return value


def process_generate_until(
    result: Any,
    gold: Any,
    metrics: Sequence[MetricEntry],
    *,
    choices: Sequence[str] | None,
    multiple_targets: bool,
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> MetricValues:
    """Score one generated (filtered) ``result`` against ``gold``.

    As lm-eval: with ``choices`` the gold index becomes the choice's text; with
    ``multiple_targets`` the gold is a list and a doc scores 1.0 when any gold matches;
    otherwise a gold of another type than the prediction is cast to it (not for
    ``bypass`` or list predictions). ``functions`` holds callables for metrics that are not
    registered (YAML ``!function`` metrics, or overrides); they are called lm-eval's way
    (``references=[gold], predictions=[result], **kwargs``, then ``[gold, result]`` on
    TypeError). Registered metrics are called with the doc's whole gold, so the sacrebleu
    metrics get every reference of a multi-target doc. A metric returning a dict emits one
    key per entry (see ``MetricValues.sources`` and ``aggregation_for``)."""
    functions = functions or {}
    names = [name for name, _ in metrics]
    if choices is not None:
        gold = _gold_from_choices(gold, choices)
    elif multiple_targets:
        gold = list(gold) if isinstance(gold, Sequence) and not isinstance(gold, str) else [gold]
    elif type(gold) is not type(result) and not ("bypass" in names or isinstance(result, list)):
        gold = _cast_gold(gold, result)
    if multiple_targets and not (isinstance(gold, Sequence) and not isinstance(gold, str)):
        gold = [gold]

    out = MetricValues()
    for name, kwargs in metrics:
        custom = functions.get(name)
        entry = None if custom is not None else TASK_METRICS.find(name)
        if custom is None and entry is None:
            close = TASK_METRICS.suggest(name)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ValueError(f"unknown metric {name!r}{hint} (pass its function in `functions`)")
        if entry is not None:
            if "generate_until" not in entry.output_types:
                raise _unsupported(name, "generate_until", ["generate_until metrics"])
            extra = {"multiple_targets": True} if multiple_targets and _takes(entry.fn) else {}
            value = _first(entry.fn(gold, [result], **extra, **kwargs), name)
            if name == "exact_match":  # lm-eval v0.4 reports a float (the mean / any)
                value = {k: 1.0 if v > 0 else 0.0 for k, v in value.items()}
        else:
            assert custom is not None
            value = _custom_value(custom, name, gold, result, kwargs, multiple_targets)
        if isinstance(value, Mapping):
            for key, sub in value.items():
                out.emit(key, sub, name)
        else:
            out.emit(name, value, name)
    return out


@lru_cache(maxsize=256)
def _takes(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` declares a ``multiple_targets`` parameter (cached: it is asked per doc)."""
    try:
        return "multiple_targets" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _custom_value(
    fn: Callable[..., Any],
    name: str,
    gold: Any,
    result: Any,
    kwargs: Mapping[str, Any],
    multiple_targets: bool,
) -> Any:
    if not multiple_targets:
        return _call_v04(fn, gold, result, kwargs)
    scores = []
    for option in gold:
        score = _call_v04(fn, option, result, kwargs)
        if isinstance(score, Mapping):
            if name not in score:
                raise ValueError(
                    f"metric {name!r} returned keys {sorted(score)} for a multi-target doc; "
                    f"lm-eval reads the key {name!r}"
                )
            score = score[name]
        scores.append(score)
    return 1.0 if any(scores) else 0.0

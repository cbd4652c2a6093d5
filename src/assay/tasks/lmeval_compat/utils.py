"""``lm_eval.utils`` and ``lm_eval.api.metrics`` helpers task code imports, with lm-eval
0.4.13's results (``weighted_f1_score`` is scikit-learn's weighted F1, as there).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

eval_logger = logging.getLogger("lm_eval")


def weighted_f1_score(items: Sequence[tuple[Any, Any]]) -> float:
    """F1 over ``(gold, pred)`` pairs, averaged over labels weighted by their support."""
    from sklearn.metrics import f1_score  # type: ignore[import-untyped]

    golds, preds = zip(*items, strict=True)
    return float(f1_score(golds, preds, average="weighted"))


def general_detokenize(string: str) -> str:
    """Undo the spaces of tokenised English (``do n't``, ``( x )``, ``" x "``, `` ,``)."""
    string = string.replace(" n't", "n't").replace(" )", ")").replace("( ", "(")
    string = string.replace('" ', '"').replace(' "', '"')
    return re.sub(r" (['.,])", r"\1", string)


def regex_replace(string: str, pattern: str, repl: str, count: int = 0) -> str:
    """``re.sub`` with the argument order of lm-eval's Jinja filter."""
    return re.sub(pattern, repl, string, count=count)


def hash_string(string: str) -> str:
    """The SHA-256 hex digest of ``string``."""
    return hashlib.sha256(string.encode("utf-8")).hexdigest()


def softmax(x: Any) -> Any:
    """The softmax of a vector, computed stably."""
    e_x = np.exp(np.asarray(x) - np.max(x))
    return e_x / e_x.sum()


def handle_non_serializable(o: Any) -> Any:
    """A JSON-friendly stand-in: numpy integers as ``int``, sets as lists, else ``str``."""
    if isinstance(o, np.int64 | np.int32):
        return int(o)
    if isinstance(o, set):
        return list(o)
    return str(o)


def simple_parse_args_string(args_string: str | None) -> dict[str, Any]:
    """``"a=1,b=x"`` → ``{"a": 1, "b": "x"}`` (numbers and booleans converted)."""
    if not args_string or not args_string.strip():
        return {}
    out: dict[str, Any] = {}
    for pair in args_string.strip().split(","):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        out[key] = _arg_value(value)
    return out


def _arg_value(value: str) -> Any:
    if value.lower() == "true":
        return True
    if value.lower() == "false":
        return False
    if value.lower() in ("none", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def positional_deprecated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A decorator that warns when a function is called with positional arguments."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if args:
            eval_logger.warning("%s: use keyword arguments", fn.__name__)
        return fn(*args, **kwargs)

    return wrapper


def metric_max_over_ground_truths(
    metric_fn: Callable[[Any, Any], Any], prediction: Any, ground_truths: Sequence[Any]
) -> Any:
    """The best score of ``prediction`` against any of the ground truths."""
    return max(metric_fn(prediction, truth) for truth in ground_truths)


def weighted_mean(items: Sequence[tuple[float, float]]) -> float:
    """``sum(a) / sum(b)`` over ``(a, b)`` pairs."""
    a, b = zip(*items, strict=True)
    return float(sum(a) / sum(b))


def pop_stddev(arr: Sequence[float]) -> float:
    """The population standard deviation."""
    mu = sum(arr) / len(arr)
    return float((sum((x - mu) ** 2 for x in arr) / len(arr)) ** 0.5)

"""Prompt pieces of a task, with lm-evaluation-harness 0.4.13's exact rules.

* ``render`` — Jinja2 with ``StrictUndefined`` (a missing field is an error, never an empty
  string), ``keep_trailing_newline`` and a ``regex_replace`` filter, like lm-eval's
  ``apply_template``;
* ``text_of``/``target_of``/``choices_of`` — the four forms of ``doc_to_*``: a field name
  (the value as is), a template (rendered, then literal-evaluated by the rules below), a
  literal list/dict, a callable;
* ``sample_fewshot`` — lm-eval's samplers: ``default`` draws with ``random.Random.sample``
  (``n + 1`` docs then drops the eval doc when the examples come from the eval split), and
  ``first_n`` takes the first ``n`` (without the eval doc);
* ``maybe_delimit``/``requires_delimiter`` — how lm-eval joins a ``gen_prefix``.

Literal-eval rules (lm-eval): a rendered ``doc_to_text``/``doc_to_target`` that is all
digits becomes an int when the task has ``doc_to_choice``; a rendered ``doc_to_target``
that looks like ``[...]`` becomes a list (multiple targets) if it parses; a rendered
``doc_to_choice`` is always literal-evaluated.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jinja2

from assay.tasks.errors import TaskDocsError

Doc = Mapping[str, Any]


def regex_replace(string: str, pattern: str, repl: str, count: int = 0) -> str:
    """Jinja filter: ``re.sub`` (lm-eval's ``regex_replace``)."""
    return re.sub(pattern, repl, string, count=count)


_ENV = jinja2.Environment(
    loader=jinja2.BaseLoader(), undefined=jinja2.StrictUndefined, keep_trailing_newline=True
)
_ENV.filters["regex_replace"] = regex_replace


@functools.lru_cache(maxsize=512)
def _compile(template: str) -> jinja2.Template:
    return _ENV.from_string(template)


def render(template: str, doc: Doc, *, key: str = "template") -> str:
    """``template`` rendered with the doc's fields; errors name ``key`` and what failed."""
    try:
        return _compile(template).render(**doc)
    except jinja2.TemplateSyntaxError as exc:
        raise TaskDocsError(
            f"invalid Jinja template (line {exc.lineno}): {exc.message}", key=key
        ) from None
    except jinja2.UndefinedError as exc:
        fields = ", ".join(sorted(map(str, doc))) or "none"
        raise TaskDocsError(f"{exc.message} (the doc's fields: {fields})", key=key) from None
    except Exception as exc:
        raise TaskDocsError(
            f"rendering the template failed: {type(exc).__name__}: {exc}", key=key
        ) from None


def _call(fn: Callable[..., Any], doc: Doc, key: str) -> Any:
    try:
        return fn(doc)
    except Exception as exc:
        raise TaskDocsError(f"{type(exc).__name__}: {exc}", key=key) from exc


def text_of(
    spec: Any, doc: Doc, *, features: frozenset[str], has_choices: bool, key: str = "doc_to_text"
) -> Any:
    """``doc_to_text``: a string (or an int: the gold index in multiple-input tasks)."""
    return _text_or_target(spec, doc, features, has_choices, key, target=False)


def target_of(
    spec: Any,
    doc: Doc,
    *,
    features: frozenset[str],
    has_choices: bool,
    key: str = "doc_to_target",
) -> Any:
    """``doc_to_target``: a string, an int (a choice index) or a list (multiple targets)."""
    return _text_or_target(spec, doc, features, has_choices, key, target=True)


def _text_or_target(
    spec: Any, doc: Doc, features: frozenset[str], has_choices: bool, key: str, *, target: bool
) -> Any:
    """The rules ``doc_to_text`` and ``doc_to_target`` share (lm-eval applies the same ones
    to both); a ``target`` may also be a list: given as one, or rendered as ``[...]``."""
    if isinstance(spec, bool):
        raise TaskDocsError(f"expected a field name, template or function, got {spec!r}", key=key)
    if isinstance(spec, int):
        return spec
    if isinstance(spec, str):
        if spec in features:
            return _field(doc, spec, key)
        text = render(spec, doc, key=key)
        if text.isdigit() and has_choices:
            return ast.literal_eval(text)
        if target and len(text) >= 2 and text[0] == "[" and text[-1] == "]":
            with contextlib.suppress(SyntaxError, ValueError):
                return ast.literal_eval(text)
        return text
    if target and isinstance(spec, list):
        return spec
    if callable(spec):
        return _call(spec, doc, key)
    forms = "template, list or function" if target else "template or function"
    raise TaskDocsError(f"expected a field name, {forms}, got {type(spec).__name__}", key=key)


def choices_of(
    spec: Any, doc: Doc, *, features: frozenset[str], key: str = "doc_to_choice"
) -> list[Any]:
    """``doc_to_choice``: always a list (a dict gives its values)."""
    if isinstance(spec, str):
        if spec in features:
            value = _field(doc, spec, key)
        else:
            text = render(spec, doc, key=key)
            try:
                value = ast.literal_eval(text)
            except (SyntaxError, ValueError):
                raise TaskDocsError(
                    f"the rendered choices are not a Python literal list: {text!r}", key=key
                ) from None
    elif isinstance(spec, list):
        value = spec
    elif isinstance(spec, dict):
        value = list(spec.values())
    elif callable(spec):
        value = _call(spec, doc, key)
    else:
        raise TaskDocsError(
            f"expected a field name, template, list, dict or function, got {type(spec).__name__}",
            key=key,
        )
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, list):
        raise TaskDocsError(f"the choices must be a list, got {type(value).__name__}", key=key)
    return value


def _field(doc: Doc, name: str, key: str) -> Any:
    try:
        return doc[name]
    except KeyError:
        fields = ", ".join(sorted(map(str, doc))) or "none"
        raise TaskDocsError(f"the doc has no field '{name}' (fields: {fields})", key=key) from None


def resolve_field(doc: Doc, spec: str | None, *, key: str) -> str | None:
    """lm-eval's ``resolve_field``: a doc field's value if ``spec`` names one, else the
    rendered template; empty or ``None`` gives ``None``."""
    if not spec:
        return None
    if spec in doc:
        return str(doc[spec])
    return render(spec, doc, key=key)


def maybe_delimit(prefix: str | None, suffix: str | None, delimiter: str = " ") -> str:
    """``prefix`` + ``suffix``, with ``delimiter`` between them only if neither has
    whitespace at the join."""
    if not prefix:
        return suffix or ""
    if not suffix:
        return prefix
    if prefix[-1].isspace() or suffix[0].isspace():
        return prefix + suffix
    return prefix + delimiter + suffix


def requires_delimiter(prefix: str, suffix: str) -> bool:
    """Whether joining ``prefix`` and ``suffix`` needs a delimiter (no whitespace at the join)."""
    if prefix == "":
        return False
    return not (prefix[-1].isspace() or suffix[0].isspace())


def sample_fewshot(
    pool: Sequence[Doc],
    n: int,
    *,
    sampler: str,
    rng: random.Random,
    eval_doc: Doc | None,
) -> list[Doc]:
    """``n`` few-shot docs from ``pool`` as lm-eval's ``ContextSampler``/``FirstNSampler``.

    ``eval_doc`` is given when the examples come from the split being evaluated: the
    default sampler then draws ``n + 1`` and drops docs equal to it (keeping ``n``), and
    ``first_n`` drops it from the pool before taking the first ``n``.
    """
    if n < 0:
        raise TaskDocsError(f"num_fewshot must be >= 0, got {n}", key="num_fewshot")
    if n == 0:
        return []
    if sampler == "first_n":
        candidates = [d for d in pool if d != eval_doc] if eval_doc is not None else list(pool)
        if n > len(candidates):
            raise TaskDocsError(
                f"{n} few-shot examples requested but only {len(candidates)} are available",
                key="num_fewshot",
            )
        return candidates[:n]
    if sampler != "default":
        raise TaskDocsError(f"unknown sampler '{sampler}'", key="fewshot_config.sampler")
    if not pool:
        raise TaskDocsError("no few-shot docs to sample from", key="num_fewshot")
    exclude = bool(eval_doc)  # lm-eval tests truthiness here (an empty doc excludes nothing)
    draw = n + 1 if exclude else n
    if draw > len(pool):
        raise TaskDocsError(
            f"{n} few-shot examples requested but only {len(pool)} docs are available"
            + (" (one more is drawn to leave out the evaluated doc)" if exclude else ""),
            key="num_fewshot",
        )
    drawn = rng.sample(list(pool), draw)
    chosen = [d for d in drawn if d != eval_doc][:n] if exclude else drawn
    if len(chosen) != n:
        raise TaskDocsError(
            f"could not draw {n} few-shot examples distinct from the evaluated doc",
            key="num_fewshot",
        )
    return chosen

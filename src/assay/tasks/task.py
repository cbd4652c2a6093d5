"""``Task``: a task config bound to its docs, producing what a model is asked.

Everything here is lm-evaluation-harness 0.4.13's ``ConfigurableTask`` for plain-text
(non-chat) models, without the model: the eval and few-shot docs, ``doc_to_text``/
``doc_to_target``/``doc_to_choice``, the multiple-choice gold, the prompt with its few-shot
block, the generation settings and the loglikelihood continuations. The task target and the
task scorers build requests and scores from these.

Few-shot sampling is stateful in lm-eval: one ``random.Random`` (seeded 1234 by default) is
shared by all docs of a task, in doc order, so a doc's examples depend on the docs before
it. ``contexts()`` reproduces that exactly; ``context(doc)`` alone uses a fresh generator
(the examples lm-eval gives the first doc) unless it is handed the shared one.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.tasks.chat import ChatMessages, ChatOptions, Message, render_chat, to_text
from assay.tasks.config import TaskConfig
from assay.tasks.docs import (
    Doc,
    TaskDataset,
    apply_process_docs,
    as_doc_list,
    open_dataset,
)
from assay.tasks.errors import TaskConfigError, TaskDocsError
from assay.tasks.prompts import (
    choices_of,
    maybe_delimit,
    requires_delimiter,
    resolve_field,
    sample_fewshot,
    target_of,
    text_of,
)

log = logging.getLogger(__name__)

DEFAULT_FEWSHOT_SEED = 1234
"""lm-eval's default ``fewshot_random_seed``."""
DEFAULT_MAX_GEN_TOKS = 256
INVALID_GOLD = -100
"""The gold index of a doc whose label is not among its choices (scored as wrong)."""


Prompt = str | list[str] | ChatMessages | list[ChatMessages]
"""A doc's prompt: text, one text per choice (multiple input), or chat messages (with
``apply_chat_template``; one list per choice in multiple-input tasks)."""


@dataclass(frozen=True)
class DocContext:
    """One eval doc with its prompt: a string, or one string per choice (multiple input)."""

    doc_id: int
    doc: Mapping[str, Any]
    context: Prompt


class Task:
    """A task ready to prompt: ``config`` plus its docs.

    ``docs`` replaces the dataset (``--docs`` or a stored dataset): they are the eval docs,
    ``process_docs`` is applied to them as to a dataset split. ``fewshot_docs`` replaces the
    few-shot pool. ``base_dir`` resolves relative data paths (default: the YAML's directory).
    """

    def __init__(
        self,
        config: TaskConfig,
        *,
        docs: Sequence[Mapping[str, Any]] | None = None,
        fewshot_docs: Sequence[Mapping[str, Any]] | None = None,
        base_dir: Path | None = None,
    ) -> None:
        unsupported = config.unsupported_features()
        if unsupported:
            raise TaskConfigError(
                "this task uses features assay does not support: " + "; ".join(unsupported),
                file=config.source_path,
            )
        self.config = config
        self._base_dir = base_dir
        self._docs_override = as_doc_list(docs, where="docs") if docs is not None else None
        self._fewshot_override = (
            as_doc_list(fewshot_docs, where="fewshot_docs") if fewshot_docs is not None else None
        )
        self._dataset: TaskDataset | None = None
        self._eval_docs: list[Doc] | None = None
        self._fewshot_pool: list[Doc] | None = None
        self._features: frozenset[str] | None = None
        self._probed: tuple[int, bool] | None = None

    # ------------------------------------------------------------------ identity
    @property
    def name(self) -> str:
        return self.config.task or "task"

    @property
    def output_type(self) -> str:
        return self.config.output_type

    # ------------------------------------------------------------------ docs
    def dataset(self) -> TaskDataset:
        """The task's data (opened on first use; errors say how to pass docs instead)."""
        if self._dataset is None:
            try:
                self._dataset = open_dataset(self.config, base_dir=self._base_dir)
            except TaskConfigError as exc:
                raise self._located(exc) from None
        return self._dataset

    @property
    def eval_split(self) -> str | None:
        """The split evaluated: ``test_split``, else ``validation_split``."""
        return self.config.test_split or self.config.validation_split

    def eval_docs(self, limit: int | None = None) -> list[Doc]:
        """The docs evaluated, in order; ``limit`` keeps the first ``limit``."""
        if self._eval_docs is None:
            if self._docs_override is not None:
                raw = self._docs_override
            else:
                split = self.eval_split
                if split is None:
                    raise self._error(
                        "the task has neither test_split nor validation_split: no docs to "
                        "evaluate (or pass docs directly)",
                        key="test_split",
                    )
                raw = self._split(split, key="test_split")
            docs = apply_process_docs(self.config.process_docs, raw, key="process_docs")
            if not docs:
                raise self._error("the task has no eval docs", key="test_split")
            self._eval_docs = docs
        if limit is not None:
            if limit < 0:
                raise TaskDocsError(f"limit must be >= 0, got {limit}", key="limit")
            return self._eval_docs[:limit]
        return self._eval_docs

    def fewshot_docs(self) -> list[Doc]:
        """The pool few-shot examples are drawn from, as lm-eval chooses it: the few-shot
        split, else inline ``samples``, else the training, validation or test split.

        ``fewshot_indices`` keeps only those positions of the pool. (lm-eval 0.4.13 accepts
        the key but never passes it to its sampler; assay honours it.)
        """
        if self._fewshot_pool is None:
            fs = self.config.fewshot()
            if self._fewshot_override is not None:
                pool = self._fewshot_override
            elif fs.split is not None:
                raw = self._split(fs.split, key="fewshot_split")
                pool = apply_process_docs(fs.process_docs, raw, key="fewshot_config.process_docs")
            elif self.config.fewshot_config is not None and fs.samples is not None:
                samples: Any = fs.samples
                if callable(samples):
                    try:
                        samples = samples()
                    except Exception as exc:
                        raise self._error(
                            f"samples raised {type(exc).__name__}: {exc}",
                            key="fewshot_config.samples",
                        ) from exc
                pool = as_doc_list(samples, where="fewshot_config.samples")
            else:
                split = (
                    self.config.training_split
                    or self.config.validation_split
                    or self.config.test_split
                )
                if split is None:
                    raise self._error(
                        "few-shot examples need a fewshot_split, fewshot_config.samples or a "
                        "training/validation/test split",
                        key="fewshot_split",
                    )
                raw = self._split(split, key="fewshot_split")
                pool = apply_process_docs(self.config.process_docs, raw, key="process_docs")
            if fs.fewshot_indices is not None:
                bad = [i for i in fs.fewshot_indices if i >= len(pool)]
                if bad:
                    raise self._error(
                        f"indices {bad} are out of range for {len(pool)} few-shot docs",
                        key="fewshot_config.fewshot_indices",
                    )
                pool = [pool[i] for i in fs.fewshot_indices]
            self._fewshot_pool = pool
        return self._fewshot_pool

    def _split(self, name: str, *, key: str) -> list[Doc]:
        if self._docs_override is not None and name == self.eval_split:
            return self._docs_override
        try:
            return self.dataset().split(name, key=key)
        except TaskConfigError as exc:
            if self._docs_override is not None and key != "test_split":
                raise self._error(
                    f"few-shot docs come from split '{name}' of the task's dataset, which "
                    f"cannot be read ({exc}); pass few-shot docs or use num_fewshot 0",
                    key=key,
                ) from None
            raise self._located(exc) from None

    @property
    def features(self) -> frozenset[str]:
        """The eval docs' field names: a ``doc_to_*`` string naming one is a field lookup."""
        if self._features is None:
            names: set[str] = set()
            for doc in self.eval_docs():
                names.update(str(k) for k in doc)
            self._features = frozenset(names)
        return self._features

    # ------------------------------------------------------------------ doc_to_*
    @property
    def has_choices(self) -> bool:
        return self.config.doc_to_choice is not None

    def doc_to_text(self, doc: Mapping[str, Any]) -> Any:
        """The input text (an int gold index in multiple-input tasks)."""
        try:
            return text_of(
                self.config.doc_to_text, doc, features=self.features, has_choices=self.has_choices
            )
        except TaskConfigError as exc:
            raise self._located(exc) from None

    def doc_to_target(self, doc: Mapping[str, Any]) -> Any:
        """The target: a string, a choice index, or a list (multiple targets)."""
        try:
            return target_of(
                self.config.doc_to_target,
                doc,
                features=self.features,
                has_choices=self.has_choices,
            )
        except TaskConfigError as exc:
            raise self._located(exc) from None

    def doc_to_choice(self, doc: Mapping[str, Any]) -> list[Any]:
        """The answer choices (a list)."""
        if self.config.doc_to_choice is None:
            raise self._error("the task has no doc_to_choice", key="doc_to_choice")
        try:
            return choices_of(self.config.doc_to_choice, doc, features=self.features)
        except TaskConfigError as exc:
            raise self._located(exc) from None

    def _probe(self) -> tuple[int, bool]:
        """``(multiple_input, multiple_target)`` decided once from the first eval doc."""
        if self._probed is None:
            first = self.eval_docs()[0]
            text = self.doc_to_text(first)
            multiple_input = 0
            if self.has_choices and isinstance(text, int) and not isinstance(text, bool):
                multiple_input = len(self.doc_to_choice(first))
            multiple_target = isinstance(self.doc_to_target(first), list)
            self._probed = (multiple_input, multiple_target)
        return self._probed

    @property
    def multiple_input(self) -> int:
        """The number of choices if ``doc_to_text`` gives an int (Winogrande style), else 0."""
        return self._probe()[0]

    @property
    def multiple_target(self) -> bool:
        """Whether ``doc_to_target`` gave a list on the first eval doc."""
        return self._probe()[1]

    def gold(self, doc: Mapping[str, Any]) -> int | list[int]:
        """The multiple-choice gold index (or indices): from ``doc_to_target`` (or
        ``doc_to_text`` in multiple-input tasks), given as an index, a choice string or a
        list; one not among the choices is ``-100`` (scored as wrong) with a warning."""
        choices = self.doc_to_choice(doc)
        value = self.doc_to_text(doc) if self.multiple_input else self.doc_to_target(doc)
        invalid = False
        result: int | list[int]
        if isinstance(value, list):
            result = [self._gold_index(v, choices) for v in value]
            invalid = INVALID_GOLD in result
        else:
            result = self._gold_index(value, choices)
            invalid = result == INVALID_GOLD
        if invalid:
            log.warning("%s: the gold label is not among the choices of doc %r", self.name, doc)
        return result

    def _gold_index(self, value: Any, choices: list[Any]) -> int:
        if isinstance(value, bool):
            raise self._error(
                f"the gold label must be an index or a choice, got {value!r}", key="doc_to_target"
            )
        if isinstance(value, int):
            return value if value < len(choices) else INVALID_GOLD
        if isinstance(value, str):
            return choices.index(value) if value in choices else INVALID_GOLD
        raise self._error(
            f"the gold label must be an index, a choice or a list of them, got "
            f"{type(value).__name__} {value!r}",
            key="doc_to_target",
        )

    def generation_reference(self, doc: Mapping[str, Any]) -> Any:
        """The reference a generation metric compares with, as lm-eval passes it: the chosen
        choice when the task has ``doc_to_choice``, the list of targets for a multi-target
        task, else the target."""
        target = self.doc_to_target(doc)
        if self.has_choices:
            choices = self.doc_to_choice(doc)
            try:
                return choices[target]
            except (IndexError, TypeError):
                raise self._error(
                    f"target {target!r} is not an index into the {len(choices)} choices",
                    key="doc_to_target",
                ) from None
        if self.multiple_target:
            return list(target)
        return target

    # ------------------------------------------------------------------ prompts
    def resolve_num_fewshot(self, requested: int | None = None) -> int:
        """lm-eval's precedence: a requested value overrides the YAML's, unless the YAML
        says 0; neither gives 0."""
        if requested is not None and requested < 0:
            raise TaskDocsError(f"num_fewshot must be >= 0, got {requested}", key="num_fewshot")
        if requested is not None:
            return 0 if self.config.num_fewshot == 0 else requested
        return self.config.num_fewshot or 0

    def context(
        self,
        doc: Mapping[str, Any],
        *,
        num_fewshot: int | None = None,
        rng_seed: int | None = DEFAULT_FEWSHOT_SEED,
        rng: random.Random | None = None,
        chat: ChatOptions | None = None,
    ) -> Prompt:
        """The prompt for ``doc``: description, few-shot block, then the doc's text (plus
        ``gen_prefix``); a list with one prompt per choice in multiple-input tasks.

        ``num_fewshot`` goes through ``resolve_num_fewshot``. The default sampler draws from
        ``rng`` if given (and advances it), else from ``random.Random(rng_seed)``. With
        ``chat`` (lm-eval's chat options, ``assay.tasks.chat``) a system instruction is
        put first, and with ``apply_chat_template`` the prompt is the chat messages a chat
        model receives (one list per choice in multiple-input tasks).
        """
        try:
            return self._context(
                doc, num_fewshot, rng if rng is not None else random.Random(rng_seed), chat
            )
        except TaskConfigError as exc:
            raise self._located(exc) from None

    def _context(
        self,
        doc: Mapping[str, Any],
        num_fewshot: int | None,
        generator: random.Random,
        chat: ChatOptions | None,
    ) -> Prompt:
        shots = self.resolve_num_fewshot(num_fewshot)
        config = self.config
        options = chat or ChatOptions()
        description = resolve_field(doc, config.description, key="description") or ""
        system = maybe_delimit(options.system_instruction, description, config.fewshot_delimiter)
        head = [Message("system", system)] if system else []
        if shots > 0:
            head += self._fewshot_messages(doc, shots, generator)
        text = self.doc_to_text(doc)
        gen_prefix = resolve_field(doc, config.gen_prefix, key="gen_prefix")
        if self.multiple_input:
            turns = [
                self._turn(choice, None, None, gen_prefix, "", "", key="doc_to_choice")
                for choice in self.doc_to_choice(doc)
            ]
        else:
            turns = [
                self._turn(
                    text, None, None, gen_prefix, config.target_delimiter, "", key="doc_to_text"
                )
            ]
        if options.apply_chat_template:
            rendered = [render_chat(head + t, multiturn=options.multiturn) for t in turns]
            return rendered if self.multiple_input else rendered[0]
        texts = [to_text(head + t) for t in turns]
        return texts if self.multiple_input else texts[0]

    def contexts(
        self,
        *,
        num_fewshot: int | None = None,
        limit: int | None = None,
        rng_seed: int | None = DEFAULT_FEWSHOT_SEED,
        chat: ChatOptions | None = None,
    ) -> list[DocContext]:
        """The prompts of the eval docs in order, sharing one seeded generator exactly as
        lm-eval's ``build_all_requests`` does."""
        generator = random.Random(rng_seed)
        return [
            DocContext(i, doc, self.context(doc, num_fewshot=num_fewshot, rng=generator, chat=chat))
            for i, doc in enumerate(self.eval_docs(limit))
        ]

    def _fewshot_messages(
        self, doc: Mapping[str, Any], shots: int, rng: random.Random
    ) -> list[Message]:
        fs = self.config.fewshot()
        eval_doc = doc if fs.split == self.config.test_split else None
        examples = sample_fewshot(
            self.fewshot_docs(), shots, sampler=fs.sampler, rng=rng, eval_doc=eval_doc
        )
        messages: list[Message] = []
        for example in examples:
            question = text_of(
                fs.doc_to_text,
                example,
                features=self.features,
                has_choices=self.has_choices,
                key="fewshot_config.doc_to_text",
            )
            choices = (
                choices_of(
                    fs.doc_to_choice,
                    example,
                    features=self.features,
                    key="fewshot_config.doc_to_choice",
                )
                if fs.doc_to_choice
                else None
            )
            answer = target_of(
                fs.doc_to_target,
                example,
                features=self.features,
                has_choices=self.has_choices,
                key="fewshot_config.doc_to_target",
            )
            gen_prefix = resolve_field(example, fs.gen_prefix, key="fewshot_config.gen_prefix")
            if self.multiple_input:
                question = self._choice_at(choices, question)
                choices = None
            messages += self._turn(
                question,
                choices,
                answer,
                gen_prefix,
                fs.target_delimiter if fs.target_delimiter is not None else " ",
                fs.fewshot_delimiter if fs.fewshot_delimiter is not None else "\n\n",
                key="fewshot_config.doc_to_text",
            )
        return messages

    def _choice_at(self, choices: list[Any] | None, index: Any) -> Any:
        if choices is None or not isinstance(index, int) or not 0 <= index < len(choices):
            raise self._error(
                f"multiple-input task: doc_to_text gave {index!r}, not an index into the choices",
                key="doc_to_text",
            )
        return choices[index]

    def _turn(
        self,
        question: Any,
        choices: list[Any] | None,
        answer: Any,
        gen_prefix: str | None,
        target_delimiter: str,
        fewshot_delimiter: str,
        *,
        key: str,
    ) -> list[Message]:
        """One question (and answer) as messages, as lm-eval's ``build_qa_turn`` builds it:
        the user turn (followed by the target delimiter when an answer or a ``gen_prefix``
        needs one), then the assistant's answer (followed by the few-shot delimiter) or the
        ``gen_prefix``."""
        if not isinstance(question, str):
            raise self._error(
                f"the prompt text must be a string, got {type(question).__name__} {question!r}",
                key=key,
            )
        has_answer = answer is not None and answer != ""
        delimited = (has_answer and not gen_prefix) or bool(
            gen_prefix and requires_delimiter(question, gen_prefix)
        )
        turn = [Message("user", question, target_delimiter if delimited else "")]
        if has_answer:
            if choices and isinstance(answer, int) and not isinstance(answer, bool):
                if not -len(choices) <= answer < len(choices):
                    raise self._error(
                        f"few-shot target {answer} is out of range for {len(choices)} choices",
                        key="doc_to_target",
                    )
                text = choices[answer]
            elif isinstance(answer, list):
                text = answer[0] if answer else ""
            else:
                text = answer
            if not isinstance(text, str):
                raise self._error(
                    f"a few-shot answer must be a string, got {type(text).__name__} {text!r}",
                    key="doc_to_target",
                )
            turn.append(
                Message("assistant", maybe_delimit(gen_prefix, text, " "), fewshot_delimiter)
            )
        elif gen_prefix:
            turn.append(Message("assistant", gen_prefix))
        return turn

    # ------------------------------------------------------------------ requests
    def generation_settings(self) -> dict[str, Any]:
        """The generation kwargs for ``generate_until``: the YAML's, with ``until`` defaulting
        to ``[fewshot_delimiter]`` (a string becomes a one-element list), ``temperature`` as a
        float and ``max_gen_toks`` 256 unless given; without a block, greedy decoding."""
        given = self.config.generation_kwargs
        if given is None:
            return {
                "temperature": 0.0,
                "do_sample": False,
                "max_gen_toks": DEFAULT_MAX_GEN_TOKS,
                "until": [self.config.fewshot_delimiter],
            }
        settings = dict(given)
        if "temperature" in settings:
            try:
                settings["temperature"] = float(settings["temperature"])
            except (TypeError, ValueError):
                raise self._error(
                    f"temperature must be a number, got {settings['temperature']!r}",
                    key="generation_kwargs.temperature",
                ) from None
        until = settings.get("until")
        if until is None:
            settings["until"] = [self.config.fewshot_delimiter]
        elif isinstance(until, str):
            settings["until"] = [until]
        elif not isinstance(until, list) or not all(isinstance(u, str) for u in until):
            raise self._error(
                f"until must be a string or a list of strings, got {until!r}",
                key="generation_kwargs.until",
            )
        settings.setdefault("max_gen_toks", DEFAULT_MAX_GEN_TOKS)
        return settings

    def continuations(self, doc: Mapping[str, Any]) -> list[str]:
        """What is scored after the context: for ``multiple_choice`` ``target_delimiter +
        choice`` per choice (the target once per context in multiple-input tasks), for
        ``loglikelihood`` the target itself (lm-eval adds no delimiter there)."""
        delimiter = self.config.target_delimiter
        if self.output_type == "multiple_choice":
            choices = self.doc_to_choice(doc)
            if self.multiple_input:
                return [f"{delimiter}{self.doc_to_target(doc)}"] * len(choices)
            return [f"{delimiter}{choice}" for choice in choices]
        if self.output_type == "loglikelihood":
            target = self.doc_to_target(doc)
            if not isinstance(target, str):
                raise self._error(
                    f"a loglikelihood target must be a string, got {target!r}",
                    key="doc_to_target",
                )
            return [target]
        raise self._error(
            f"continuations apply to multiple_choice and loglikelihood tasks, not "
            f"{self.output_type}",
            key="output_type",
        )

    def unconditional_continuations(self, doc: Mapping[str, Any]) -> list[str]:
        """The choices scored with an empty context, for ``acc_mutual_info``."""
        delimiter = self.config.target_delimiter
        return [f"{delimiter}{choice}" for choice in self.doc_to_choice(doc)]

    def rolling_text(self, doc: Mapping[str, Any]) -> str:
        """The text whose rolling loglikelihood is measured (``doc_to_target``)."""
        target = self.doc_to_target(doc)
        if not isinstance(target, str):
            raise self._error(
                f"a rolling loglikelihood target must be a string, got {target!r}",
                key="doc_to_target",
            )
        return target

    def decontamination_query(self, doc: Mapping[str, Any]) -> Any:
        """``doc_to_decontamination_query`` (else the doc's text) when ``should_decontaminate``."""
        if not self.config.should_decontaminate:
            return None
        spec = self.config.doc_to_decontamination_query
        if spec is None:
            return self.doc_to_text(doc)
        if callable(spec):
            return spec(doc)
        return text_of(
            spec, doc, features=self.features, has_choices=False, key="doc_to_decontamination_query"
        )

    # ------------------------------------------------------------------ errors
    def _error(self, message: str, *, key: str) -> TaskDocsError:
        return TaskDocsError(
            f"task '{self.name}': {message}", key=key, file=self.config.source_path
        )

    def _located(self, exc: TaskConfigError) -> TaskConfigError:
        if exc.file is None and self.config.source_path is not None:
            issues = [
                type(issue)(issue.message, key=issue.key, file=self.config.source_path)
                for issue in exc.issues
            ]
            return type(exc)(issues=issues)
        return exc

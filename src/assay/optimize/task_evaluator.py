"""How a task-prompt candidate is evaluated: the candidate prompts the task model (a
``ModelPromptTarget``, see ``candidate_target``) and the config's scorers score each
output; a row's score is their weighted, normalized mean (``row_scores``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.models.base import Model
from assay.optimize.candidate_target import candidate_target
from assay.optimize.config import OptimizeSettings
from assay.optimize.row_scores import RowScore, score_row, weighted_specs
from assay.optimize.session import Session
from assay.optimize.splits import Example
from assay.runner.scorer_set import scorer_spec
from assay.scoring.scorer import Scorer
from assay.types import Item, ItemResult, ScorerSpec


@dataclass
class TaskEvaluator:
    """The ``session.Evaluator`` of ``assay optimize``."""

    config: OptimizeSettings
    task_model: Model
    scorers: list[Scorer]
    specs: list[ScorerSpec] = field(init=False)

    def __post_init__(self) -> None:
        self.specs = weighted_specs([scorer_spec(s) for s in self.scorers])

    async def run(
        self, session: Session, items: list[Item], candidate: dict[str, str], split: str
    ) -> tuple[str, list[ItemResult], float]:
        config = self.config
        target = candidate_target(
            candidate, config.prompt, self.task_model, settings=config.task_settings
        )
        return await session.run_items(items, target, self.scorers, candidate, split)

    def rows(self, results: Mapping[str, ItemResult], examples: list[Example]) -> list[RowScore]:
        by_id = {item_id: score_row(r, self.specs) for item_id, r in results.items()}
        return [by_id[e.item.id] for e in examples]

"""The lm-eval task YAML fixtures laid out as in lm-eval's ``lm_eval/tasks`` tree.

The fixture files are flat (``gsm8k_gsm8k-cot.yaml``), but their ``include:`` lines name
siblings by their original names (``gsm8k-cot.yaml``), so tests copy them back into the
original directories under a temporary root.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lmeval"
YAMLS = FIXTURES / "task_yamls"

LAYOUT = {
    "arc_arc_easy.yaml": "arc/arc_easy.yaml",
    "glue_cola_default.yaml": "glue/cola/default.yaml",
    "glue_mrpc_default.yaml": "glue/mrpc/default.yaml",
    "gsm8k_gsm8k-cot-self-consistency.yaml": "gsm8k/gsm8k-cot-self-consistency.yaml",
    "gsm8k_gsm8k-cot.yaml": "gsm8k/gsm8k-cot.yaml",
    "gsm8k_gsm8k.yaml": "gsm8k/gsm8k.yaml",
    "lambada_lambada_openai.yaml": "lambada/lambada_openai.yaml",
    "mmlu_flan_n_shot_generative__mmlu_flan_generative_template_yaml": (
        "mmlu/flan_n_shot/generative/_mmlu_flan_generative_template_yaml"
    ),
    "mmlu_flan_n_shot_generative_mmlu_abstract_algebra.yaml": (
        "mmlu/flan_n_shot/generative/mmlu_abstract_algebra.yaml"
    ),
    "polemo2_polemo2_in.yaml": "polemo2/polemo2_in.yaml",
    "sciq_sciq.yaml": "sciq/sciq.yaml",
    "translation_wmt16_en-de.yaml": "translation/wmt16_en-de.yaml",
    "translation_wmt_common_yaml": "translation/wmt_common_yaml",
    "triviaqa_default.yaml": "triviaqa/default.yaml",
    "wikitext_wikitext.yaml": "wikitext/wikitext.yaml",
    "wikitext_preprocess_wikitext.py": "wikitext/preprocess_wikitext.py",
}

TASK_FILES = {
    "arc_easy": "arc/arc_easy.yaml",
    "cola": "glue/cola/default.yaml",
    "mrpc": "glue/mrpc/default.yaml",
    "gsm8k_cot_self_consistency": "gsm8k/gsm8k-cot-self-consistency.yaml",
    "gsm8k_cot": "gsm8k/gsm8k-cot.yaml",
    "gsm8k": "gsm8k/gsm8k.yaml",
    "lambada_openai": "lambada/lambada_openai.yaml",
    "mmlu_flan_n_shot_generative_abstract_algebra": (
        "mmlu/flan_n_shot/generative/mmlu_abstract_algebra.yaml"
    ),
    "polemo2_in": "polemo2/polemo2_in.yaml",
    "sciq": "sciq/sciq.yaml",
    "wmt16-en-de": "translation/wmt16_en-de.yaml",
    "triviaqa": "triviaqa/default.yaml",
    "wikitext": "wikitext/wikitext.yaml",
}
"""Task name → its YAML in the tree (``yaml`` in the compat cases is the task name)."""


def build_tree(root: Path) -> Path:
    """Copy every fixture to its lm-eval path under ``root``; returns ``root``."""
    for name, relative in LAYOUT.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(YAMLS / name, target)
    return root


def compat_cases() -> list[dict[str, Any]]:
    """The 10 configurations of ``lmeval_config_compat.json``."""
    data = json.loads((FIXTURES / "lmeval_config_compat.json").read_text(encoding="utf-8"))
    cases: list[dict[str, Any]] = data["cases"]
    return cases

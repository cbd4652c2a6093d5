"""Task code written for lm-evaluation-harness, run unchanged: ``lm_eval.*`` imports inside a
``!function`` module get assay's equivalents when lm-eval itself cannot be imported.

``lmeval_imports(base_dir)`` is the scope (see ``finder``); ``SUPPORTED`` lists every module
and name provided; ``api``, ``filters`` and ``utils`` hold the equivalents. docs/tasks.md
lists them for users.
"""

from assay.tasks.lmeval_compat.finder import SUPPORTED, lmeval_imports, real_lmeval_usable

__all__ = ["SUPPORTED", "lmeval_imports", "real_lmeval_usable"]

"""With the real lm-eval installed, task code registers into lm-eval's registries; this copies
what task code registered there into assay's, so a YAML naming such a filter (or metric, or
aggregation) validates and runs the same with or without lm-eval.

Only entries assay does not know are copied, and only those defined by task code (not by
lm-eval's own library modules), so lm-eval's built-ins never shadow assay's.
"""

from __future__ import annotations

import sys
from typing import Any

_KINDS = (
    ("filter_registry", "register_filter"),
    ("metric_registry", "register_metric"),
    ("aggregation_registry", "register_aggregation"),
)


def mirror_real_registrations() -> None:
    """Copy task-code registrations from a loaded real ``lm_eval.api.registry``."""
    real = sys.modules.get("lm_eval.api.registry")
    if real is None or getattr(real, "__assay_lmeval_shim__", False):
        return
    from assay.tasks.filters.registry import FILTERS
    from assay.tasks.lmeval_compat import api
    from assay.tasks.metrics.registry import TASK_AGGREGATIONS, TASK_METRICS

    ours: dict[str, Any] = {
        "filter_registry": FILTERS,
        "metric_registry": TASK_METRICS,
        "aggregation_registry": TASK_AGGREGATIONS,
    }
    for attr, register in _KINDS:
        registry = getattr(real, attr, None)
        objs = getattr(registry, "_objs", None)
        if not isinstance(objs, dict):
            continue
        for name, obj in list(objs.items()):
            if isinstance(obj, str) or not _from_task_code(obj):
                continue
            if name in ours[attr] and name not in api.task_code_names(attr.split("_")[0]):
                continue
            if register == "register_metric":
                api.register_metric(metric=name)(obj)
            else:
                getattr(api, register)(name)(obj)


def _from_task_code(obj: object) -> bool:
    module = str(getattr(obj, "__module__", "") or "")
    return not module.startswith("lm_eval.") or module.startswith("lm_eval.tasks.")

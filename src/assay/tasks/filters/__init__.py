"""Filters of benchmark tasks: lm-eval's filter registry with its exact semantics.

A filter turns raw model responses into what a task's metrics compare (``regex`` pulls the
number out of a gsm8k answer, ``take_first`` keeps one repeat, ``majority_vote`` votes).
``FILTERS`` is the registry (entry-point group ``assay.filters``); ``build_filter`` and
``validate_filter_step`` build one ``filter_list`` step or report its bad kwargs;
``apply_filter_pipeline`` runs a whole pipeline. Built-in filters load on first use.
"""

from assay.tasks.filters.base import (
    Filter,
    FilterConfigError,
    FilterError,
    FilterParams,
    UnknownFilterError,
)
from assay.tasks.filters.pipeline import DEFAULT_FILTER_STEPS, FilterStep, apply_filter_pipeline
from assay.tasks.filters.registry import (
    ENTRY_POINT_GROUP,
    FILTERS,
    FilterFactory,
    FilterType,
    build_filter,
    register_filter,
    validate_filter_step,
)

__all__ = [
    "DEFAULT_FILTER_STEPS",
    "ENTRY_POINT_GROUP",
    "FILTERS",
    "Filter",
    "FilterConfigError",
    "FilterError",
    "FilterFactory",
    "FilterParams",
    "FilterStep",
    "FilterType",
    "UnknownFilterError",
    "apply_filter_pipeline",
    "build_filter",
    "register_filter",
    "validate_filter_step",
]

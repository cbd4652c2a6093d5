"""Prompt optimization with GEPA, scored by assay scorers: budgeted, stored, resumable,
checked on held-out data. See ``optimizer`` for the flow and ``adapter`` for the GEPA side.

``assay.optimize(...)`` is the public call, and ``assay.optimize`` is also this package:
once any of its modules is imported, Python binds the package to that attribute of
``assay``, shadowing the lazily loaded function. The package is therefore callable (it
runs ``optimize``), so ``assay.optimize(...)`` works whatever was imported first.
"""

import sys
import types
from typing import Any

from assay.extras import extra_import

# GEPA is the optimize extra: without it, one line naming the extra (CLI exit 2)
with extra_import("optimize", "prompt optimization"):
    from assay.optimize.config import (
        Budget,
        DataRef,
        OptimizeConfig,
        OptimizeConfigError,
        load_optimize_config,
        make_optimize_config,
    )
    from assay.optimize.events import EventHandler, OptimizeEvent
    from assay.optimize.optimizer import (
        OptimizationView,
        OptimizeResumeError,
        optimize,
        optimize_async,
        resume_optimization,
        resume_optimization_async,
        show_optimization,
    )
    from assay.optimize.results import HeldOutCheck, OptimizeResult

__all__ = [
    "Budget",
    "DataRef",
    "EventHandler",
    "HeldOutCheck",
    "OptimizationView",
    "OptimizeConfig",
    "OptimizeConfigError",
    "OptimizeEvent",
    "OptimizeResult",
    "OptimizeResumeError",
    "load_optimize_config",
    "make_optimize_config",
    "optimize",
    "optimize_async",
    "resume_optimization",
    "resume_optimization_async",
    "show_optimization",
]


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> OptimizeResult:
        return optimize(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

"""Built-in scorers, one module per scorer (family).

Importing this package imports every public module in it, and each module registers its
scorer types with ``@register_scorer``; adding a scorer is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil

BUILTIN_MODULES = sorted(
    info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
)

for _name in BUILTIN_MODULES:
    importlib.import_module(f"{__name__}.{_name}")

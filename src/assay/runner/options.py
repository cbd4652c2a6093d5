"""``RunOptions``: how a run runs, one validated object for every run entry point.

``run_evals``, ``run_stored``, ``run_dataset`` and a YAML run config (``RunConfig``) all take
the same options. Pass them as an object (``options=RunOptions(concurrency=4)``, reusable
across runs) or, as a convenience, as keywords (``run_evals(data, target, scorers,
concurrency=4)``); keywords override the object's fields. Either way they are validated once,
here, before anything runs or is stored.

What a run runs on (its data, target and scorers) and where it is kept (a store, a dataset
version) are arguments of the entry points, not options. Adding an option is adding one field
below (plus its use in the engine).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from assay.runner.hooks import Hook, RunHooks
from assay.runner.sink import ResultSink
from assay.types import check_run_threshold, check_tags

Backend = Literal["local", "ray"]
"""The run backends (``RunOptions.backend``)."""


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """The settings of one run (validated on construction; frozen)."""

    concurrency: int = 8
    """Items in flight at once (>= 1)."""
    repeats: int = 1
    """Times each item runs (>= 1); statistics then use per-item means."""
    threshold: float | None = None
    """Pass level 0..1 on each scorer's normalized scale (a scorer's own ``threshold`` is on
    its own scale and wins)."""
    timeout_s: float | None = None
    """Seconds per item for the target call and for each scorer call (see
    ``RunInfo.timeout_s``); ``None``: no limit."""
    name: str | None = None
    """A name for the run (shown in lists and reports)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Free-form data stored with the run."""
    tags: Sequence[str] = ()
    """Labels stored with the run, to find it by (``git.branch=main``; see ``RunInfo.tags``)."""
    hooks: RunHooks | None = None
    """User code called at run start/end and item start/complete."""
    on_item_complete: Hook | None = None
    """Shortcut for ``hooks.on_item_complete`` (wins over it)."""
    progress: bool | None = None
    """Show a progress bar; ``None``: when stderr is a terminal."""
    sink: ResultSink | None = None
    """Also send every result to this sink (besides memory or the store)."""
    backend: Backend = "local"
    """What executes the run: ``local`` (this process) or ``ray`` (Ray workers claiming
    units from the store; needs ``pip install 'assay[ray]'`` and a stored run; see
    docs/scale-out.md)."""
    ray_address: str | None = None
    """The Ray cluster to join (``ray://host:10001``, ``host:6379``, ``auto``); ``None``:
    start a local Ray on this machine. Only with ``backend="ray"``."""
    workers: int | None = None
    """Ray workers (one process each, ``concurrency`` items in flight in each); ``None``:
    the cluster's CPUs, at most 2 on a local Ray. Only with ``backend="ray"``."""
    gc_freeze: bool = False
    """Opt in (``True``) to keep CPython's cyclic garbage collector off the results an
    in-memory run keeps (collect, then ``gc.freeze()`` every 2,000 results; ``gc.unfreeze()``
    when the run ends; see ``assay.runner.gc_policy``): about 12 µs per item less in a long
    run of a fast target. Off by default: the collector belongs to the host process (a
    notebook, a server), and a library must not change it unasked."""

    def __post_init__(self) -> None:
        validate_counts(self.concurrency, self.repeats, self.timeout_s)
        validate_backend(self.backend, self.ray_address, self.workers)
        check_run_threshold(self.threshold)
        object.__setattr__(self, "metadata", dict(self.metadata))
        object.__setattr__(self, "tags", tuple(check_tags(self.tags)))

    @classmethod
    def of(cls, options: RunOptions | None = None, /, **changes: Any) -> RunOptions:
        """``options`` (default: the defaults) with keyword ``changes``; an unknown keyword
        is a ``TypeError`` naming the closest option."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in changes:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise TypeError(f"unknown run option {key!r}{hint} (options: {', '.join(names)})")
        base = options if options is not None else cls()
        return dataclasses.replace(base, **changes) if changes else base

    @property
    def run_hooks(self) -> RunHooks | None:
        """``hooks`` with the ``on_item_complete`` shortcut folded in."""
        if self.on_item_complete is None:
            return self.hooks
        return dataclasses.replace(self.hooks or RunHooks(), on_item_complete=self.on_item_complete)


def validate_counts(concurrency: int, repeats: int, timeout_s: float | None = None) -> None:
    """The rules for concurrency, repeats and the per-item timeout (also used on resume)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1 (got {repeats})")
    if timeout_s is not None and not timeout_s > 0:
        raise ValueError(f"timeout_s must be a positive number of seconds (got {timeout_s})")


def validate_backend(backend: str, ray_address: str | None, workers: int | None) -> None:
    """The rules for ``backend``, ``ray_address`` and ``workers``."""
    if backend not in get_args(Backend):
        raise ValueError(f"backend must be 'local' or 'ray' (got {backend!r})")
    if backend != "ray" and (ray_address is not None or workers is not None):
        raise ValueError("ray_address and workers need backend='ray'")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1 (got {workers})")

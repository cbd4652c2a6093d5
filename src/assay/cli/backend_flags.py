"""``--backend``, ``--ray-address`` and ``--workers`` for the commands that execute stored
runs besides ``assay run`` (``tasks run``, ``calibrate``, ``optimize``, ``optimize-judge``).

Why a module of its own: the flags must read the same, and be checked by the same rules
(``runner.options.validate_backend``), on every command, so a mistake is the same one line
(exit 2) before anything loads or runs, wherever it is made.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from assay.cli.common import CliError

BackendFlag = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="'local' (default) or 'ray': execute the runs on Ray workers over the store "
        "(pip install 'assay[ray]'; docs/scale-out.md).",
    ),
]
RayAddressFlag = Annotated[
    str | None,
    typer.Option("--ray-address", help="Ray cluster to join (default: start a local Ray)."),
]
WorkersFlag = Annotated[
    int | None, typer.Option("--workers", help="Ray workers (default: the cluster's CPUs).")
]


def backend_options(
    backend: str | None, ray_address: str | None, workers: int | None
) -> dict[str, Any]:
    """The flags as ``backend``/``ray_address``/``workers`` keywords (only those given),
    checked: a bad value is a ``CliError`` naming the flag."""
    from assay.runner.options import validate_backend

    chosen = backend or "local"
    if chosen not in ("local", "ray"):
        raise CliError(f"--backend {backend!r}: expected 'local' or 'ray'")
    try:
        validate_backend(chosen, ray_address, workers)
    except ValueError as exc:
        raise CliError(
            "--ray-address and --workers need --backend ray"
            if chosen != "ray"
            else f"--workers: {exc}"
        ) from exc
    values: dict[str, Any] = {}
    if chosen == "ray":
        values["backend"] = "ray"
        if ray_address is not None:
            values["ray_address"] = ray_address
        if workers is not None:
            values["workers"] = workers
    return values

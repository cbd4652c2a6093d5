"""Flags → the values the operations take, checked before anything loads or runs.

Why a module of its own: the command functions (``cli/run_cmd.py``, ``cli/calibrate.py``,
``cli/tasks.py``) stay parse → call → print, and each rule about a flag (what ``--min``
looks like, which ``--gate-on`` values exist, that Ray workers keep the results so
``--no-store`` cannot go with ``--backend ray``) is written in one place. A bad value is a
``CliError`` naming the flag (one line, exit 2). Imports of the rooms behind the flags are
inside the functions, so ``--help`` does not load them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from assay.cli.backend_flags import backend_options
from assay.cli.common import CliError

if TYPE_CHECKING:
    from assay.operations.run_config import RunConfig
    from assay.operations.run_gates import RunGates
    from assay.tasks.chat import ChatOptions

_NOT_RUN_CONFIG = ("config", "progress", "fail_under", "gate_on", "max_errors")
"""``assay run``'s flags that are not fields of the run config; every other flag is named
as the field it sets (``run_config_from``'s keywords)."""


def run_request(flags: Mapping[str, Any]) -> tuple[RunConfig, RunGates]:
    """``assay run``'s flags (by parameter name) → the run config, the file's fields
    overridden by the flags given, and the gates, checked against its scorers."""
    from assay.analysis.gates import GateError
    from assay.operations.inputs import InputError, json_or_text, scorer_value
    from assay.operations.run_config import RunConfigError, run_config_from
    from assay.operations.run_gates import RunGates

    try:
        gates = RunGates.parse(
            flags["fail_under"] or [], on=flags["gate_on"], max_errors=flags["max_errors"]
        )
    except GateError as exc:
        raise CliError(str(exc)) from exc
    fields = {key: value for key, value in flags.items() if key not in _NOT_RUN_CONFIG}
    try:
        fields["target"] = json_or_text(fields["target"], option="--target", strict=True)
        fields["scorers"] = [scorer_value(s) for s in fields["scorers"] or []] or None
        cfg = run_config_from(flags["config"], **fields)
        gates.check_scorers(cfg.scorers)
    except (RunConfigError, InputError, GateError, ValueError, TypeError, KeyError) as exc:
        raise CliError(str(exc)) from exc
    return cfg, gates


def parse_min(values: list[str]) -> dict[str, float]:
    """``--min``: ``["kappa=0.6"]`` → ``{"kappa": 0.6}``; a malformed one raises ``CliError``."""
    gates: dict[str, float] = {}
    for text in values:
        name, sep, raw = text.partition("=")
        try:
            bound = float(raw)
        except ValueError:
            bound = math.nan
        if not sep or not name.strip() or not math.isfinite(bound):
            raise CliError(f"--min {text!r}: expected METRIC=NUMBER, e.g. --min kappa=0.6")
        gates[name.strip()] = bound
    return gates


def calibration_options(
    min_: list[str] | None,
    gate_on: str | None,
    require: list[str] | None,
    backend: str | None,
    ray_address: str | None,
    workers: int | None,
) -> dict[str, Any]:
    """``assay calibrate``'s gate and backend flags as ``calibration.run.calibrate``'s
    keywords (``require`` only when given, so the config's list stands otherwise)."""
    if gate_on is not None and gate_on not in ("ci", "point"):
        raise CliError(f"--gate-on {gate_on!r}: expected 'ci' or 'point'")
    options: dict[str, Any] = {"min": parse_min(min_ or []) or None, "gate_on": gate_on}
    options |= backend_options(backend, ray_address, workers)
    if require:
        options["require"] = list(require)
    return options


def task_run_options(
    *,
    store: bool,
    concurrency: int | None,
    name: str | None,
    backend: str | None,
    ray_address: str | None,
    workers: int | None,
) -> dict[str, Any]:
    """``assay tasks run``'s run flags as ``operations.tasks.run_task_file``'s keywords
    (only those given)."""
    scale_out = backend_options(backend, ray_address, workers)
    if scale_out and not store:
        raise CliError("--backend ray: its workers store the results, so --no-store cannot be used")
    options: dict[str, Any] = {"progress": False, **scale_out}
    options |= {k: v for k, v in (("concurrency", concurrency), ("name", name)) if v is not None}
    return options


def chat_options(
    apply_chat_template: bool, fewshot_as_multiturn: bool | None, system_instruction: str | None
) -> ChatOptions:
    """``--apply-chat-template``, ``--fewshot-as-multiturn`` and ``--system-instruction``,
    checked together (multi-turn few-shot needs a chat template)."""
    from assay.tasks.chat import ChatOptions

    try:
        return ChatOptions(apply_chat_template, fewshot_as_multiturn, system_instruction)
    except ValueError as exc:
        raise CliError(f"--fewshot-as-multiturn: {exc}") from None

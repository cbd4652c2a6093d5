"""What a target is, as a fingerprint: the code of a callable, an agent's or workflow's
code and settings, a model prompt's config (template, model, settings), a scorer target's
own fingerprint.

``runs resume`` compares these parts with the ones stored when the run started and refuses
to mix outputs of two different targets in one run, naming the part that changed.
"""

from __future__ import annotations

from typing import Any

from assay.fingerprint import code_fingerprint, digest, value_identity
from assay.types import TargetSpec


def target_fingerprint_parts(target: Any) -> dict[str, str]:
    """Named hashes of everything that can change what ``target`` produces."""
    spec = target.spec
    parts: dict[str, str] = {"kind": spec.kind}
    scorer = getattr(target, "scorer", None)
    if scorer is not None and hasattr(scorer, "fingerprint"):
        parts["scorer"] = scorer.fingerprint
    elif spec.kind == "model":
        parts["config"] = digest(value_identity(spec.config))
    elif (fn := getattr(target, "fn", None)) is not None:
        parts["code"] = code_fingerprint(fn)
    elif (obj := getattr(target, "obj", None)) is not None:
        method = getattr(obj, "generate", None) or getattr(obj, "run", None) or obj
        parts["code"] = code_fingerprint(method)
    if spec.config and "config" not in parts:
        parts["config"] = digest(value_identity(spec.config))
    return parts


def target_fingerprint(target: Any) -> tuple[str, dict[str, str]]:
    """The target's fingerprint and the parts it hashes."""
    parts = target_fingerprint_parts(target)
    return digest(parts), parts


def fingerprinted_spec(target: Any) -> TargetSpec:
    """The target's spec with its fingerprint filled in (what a run records)."""
    fingerprint, parts = target_fingerprint(target)
    spec: TargetSpec = target.spec
    return spec.model_copy(update={"fingerprint": fingerprint, "fingerprint_parts": parts})

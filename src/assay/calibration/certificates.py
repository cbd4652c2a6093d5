"""Whether a scorer is calibrated: the certificate lookup runs, reports and gates use.

A certificate counts only for the exact scorer it measured: same fingerprint (type,
params, every step's code and prompt text, judge model and instructions). A judge whose
prompt or model changed since is *stale*, not calibrated: its agreement with humans was
measured on a different judge. ``calibration_status`` says which case holds and, for a
stale one, what changed, so the fix (calibrate again) is obvious.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from assay.calibration.measures import describe_estimate, headline
from assay.fingerprint import digest, value_identity
from assay.runner.scorer_set import build_scorers
from assay.scoring.scorer import Scorer
from assay.store import Certificate, Store, using_store
from assay.types import ScorerSpec

CalibrationState = Literal["yes", "no", "stale", "failed", "no gates"]

PARAMS_BY_NAME = "params by name"
"""A certificate's extra ``fingerprint_parts`` entry: each param's own digest, so a stale
reason can name the param that changed. Not part of the scorer's fingerprint."""


class CalibrationRequiredError(ValueError):
    """A run requires calibrated scorers and at least one has no matching certificate."""


class CalibrationStatus(BaseModel):
    """A scorer's calibration: ``yes`` (a matching certificate whose gates passed),
    ``failed`` (a matching certificate whose gates failed), ``no gates`` (a matching
    certificate without any gate: it measured but certified nothing, so a run that requires
    calibration refuses it), ``stale`` (certificates exist only for an earlier
    configuration; ``reason`` says what changed) or ``no``."""

    model_config = ConfigDict(frozen=True)

    scorer_id: str
    state: CalibrationState
    certificate: Certificate | None = None
    reason: str | None = None

    @property
    def calibrated(self) -> bool:
        return self.state == "yes"

    def describe(self) -> str:
        """``calibrated: yes (κ 0.71 [0.64, 0.77], 2026-11-24)`` / ``no`` / ``stale (...)``."""
        cert = self.certificate
        if self.state in ("yes", "failed") and cert is not None:
            day = dt.datetime.fromtimestamp(cert.created_at, tz=dt.UTC).strftime("%Y-%m-%d")
            name = headline(cert.kind, cert.statistics)
            shown = describe_estimate(name, cert.statistics[name]) if name else "no statistics"
            word = "yes" if self.state == "yes" else "no, gates failed"
            return f"calibrated: {word} ({shown}, n={cert.n}, {day})"
        if self.state == "no gates":
            return f"calibrated: no gates ({self.reason})"
        if self.state == "stale":
            return f"calibrated: stale ({self.reason})"
        return "calibrated: no"


def scorer_identity(scorer: Scorer) -> tuple[str, str]:
    """The (type, label) a scorer's certificates are filed under."""
    return scorer.type_id or f"custom:{scorer.id}", scorer.label


def judge_model_of(scorer: Scorer) -> str | None:
    """The scorer's judge model label (``provider/model``), if it has a judge."""
    return scorer.judge.model_label if scorer.judge is not None else None


def params_by_name(scorer: Scorer) -> dict[str, str]:
    """Each param's own digest (what ``PARAMS_BY_NAME`` stores in a certificate)."""
    return {name: digest(value_identity(value)) for name, value in scorer.params.items()}


def certificate_parts(scorer: Scorer) -> dict[str, Any]:
    """The ``fingerprint_parts`` a certificate stores: the scorer's, plus each param's
    digest so a later stale reason can say "params changed: temperature"."""
    return {**scorer.fingerprint_parts(), PARAMS_BY_NAME: params_by_name(scorer)}


def _changed_parts(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    names = (set(old) | set(new)) - {PARAMS_BY_NAME}
    return sorted(name for name in names if old.get(name) != new.get(name))


def what_changed(old: Certificate, scorer: Scorer) -> str:
    """A phrase naming what differs between the certified configuration and ``scorer``:
    the judge model, the prompt (step or judge parts), the params by name ("params changed:
    temperature"), or, when the fingerprint is the same, the labelled data."""
    new_model = judge_model_of(scorer)
    if old.judge_model != new_model:
        return f"judge model changed: {old.judge_model} → {new_model}"
    changed = _changed_parts(old.fingerprint_parts, scorer.fingerprint_parts())
    if "params" in changed and _changed_params(old, scorer) == ["model"] and new_model:
        # checked before the steps: a registry judge's steps are built from its params,
        # so the model param moving changes their digests too, not their prompts
        return _model_source_changed(old, scorer)
    if any(name.endswith((" judge", " step")) for name in changed):
        return f"prompt changed ({', '.join(changed)})"
    if "params" in changed:
        return _params_changed(old, scorer)
    if not changed and old.fingerprint == scorer.fingerprint:
        return f"data changed: certified on {old.data_key}"
    return "configuration changed" + (f" ({', '.join(changed)})" if changed else "")


def _changed_params(old: Certificate, scorer: Scorer) -> list[str] | None:
    """The params whose digests differ, by name (``None`` for a certificate from before
    params were kept by name)."""
    before = old.fingerprint_parts.get(PARAMS_BY_NAME)
    if not isinstance(before, dict):
        return None
    now = params_by_name(scorer)
    return sorted(n for n in set(before) | set(now) if before.get(n) != now.get(n))


def _model_source_changed(old: Certificate, scorer: Scorer) -> str:
    """The same judge model, once as the ``model`` param and once from
    ``ASSAY_JUDGE_MODEL``: a different configuration (the param is part of the
    fingerprint), said as what it is rather than as a changed prompt."""
    unset = digest(value_identity(None))  # a registry scorer keeps model=None when unset

    def source(digests: Any) -> str:
        given = isinstance(digests, dict) and digests.get("model", unset) != unset
        return "as the model param" if given else "by ASSAY_JUDGE_MODEL"

    given_then = source(old.fingerprint_parts.get(PARAMS_BY_NAME))
    given_now = source(params_by_name(scorer))
    return (
        f"judge model source changed: {old.judge_model} given {given_then} when certified, "
        f"{given_now} now; give it the same way or calibrate again"
    )


def _params_changed(old: Certificate, scorer: Scorer) -> str:
    names = _changed_params(old, scorer)
    if names is None:
        return "params changed"  # a certificate from before params were kept by name
    if names == ["model"] and old.judge_model is not None:
        return _model_source_changed(old, scorer)
    return "params changed: " + ", ".join(names)


def certificate_for(
    scorer: Scorer | str | dict[str, Any],
    *,
    store: Store | None = None,
    data_key: str | None = None,
) -> Certificate | None:
    """The newest certificate of exactly this scorer configuration (optionally on exactly
    this labelled data), or ``None``."""
    return calibration_status(scorer, store=store, data_key=data_key).certificate


def calibration_status(
    scorer: Scorer | str | dict[str, Any],
    *,
    store: Store | None = None,
    data_key: str | None = None,
) -> CalibrationStatus:
    """Whether ``scorer`` (a ``Scorer`` or a scorer config) has a matching certificate;
    see ``CalibrationStatus``."""
    [built] = build_scorers([scorer])
    scorer_type, label = scorer_identity(built)
    with using_store(store) as db:
        return _status(
            db,
            built.id,
            built.fingerprint,
            scorer_type,
            label,
            data_key,
            lambda old: what_changed(old, built),
        )


def spec_calibration_status(spec: ScorerSpec, *, store: Store | None = None) -> CalibrationStatus:
    """``calibration_status`` of a scorer as a stored run records it (its ``ScorerSpec``):
    what run summaries and reports show."""

    def changed(old: Certificate) -> str:
        names = _changed_parts(old.fingerprint_parts, spec.fingerprint_parts)
        if not names and old.fingerprint == spec.fingerprint:
            return f"data changed: certified on {old.data_key}"
        if any(n.endswith((" judge", " step")) for n in names):
            return f"prompt or judge model changed ({', '.join(names)})"
        return f"configuration changed ({', '.join(names) or 'fingerprint'})"

    scorer_type = spec.type or f"custom:{spec.id}"
    with using_store(store) as db:
        return _status(db, spec.id, spec.fingerprint, scorer_type, spec.label, None, changed)


def _status(
    db: Store,
    scorer_id: str,
    fingerprint: str,
    scorer_type: str,
    label: str,
    data_key: str | None,
    changed: Callable[[Certificate], str],
) -> CalibrationStatus:
    matching = [
        c
        for c in db.certificates.for_fingerprint(fingerprint)
        if data_key is None or c.data_key == data_key
    ]
    passing = [c for c in matching if c.passed and c.gates]
    if passing:
        return CalibrationStatus(scorer_id=scorer_id, state="yes", certificate=passing[0])
    if matching and not matching[0].gates:
        return CalibrationStatus(
            scorer_id=scorer_id,
            state="no gates",
            certificate=matching[0],
            reason="calibrated without --min or --require gates, so nothing was certified",
        )
    if matching:
        return CalibrationStatus(
            scorer_id=scorer_id,
            state="failed",
            certificate=matching[0],
            reason="its calibration did not pass its gates",
        )
    earlier = db.certificates.for_scorer(scorer_type, label)
    if earlier:
        return CalibrationStatus(scorer_id=scorer_id, state="stale", reason=changed(earlier[0]))
    return CalibrationStatus(scorer_id=scorer_id, state="no")


def is_judge_spec(spec: ScorerSpec) -> bool:
    """Whether a recorded scorer has a judge step (its fingerprint has a judge part)."""
    return any(name.endswith(" judge") for name in spec.fingerprint_parts)


def shown_calibration_statuses(
    specs: Iterable[ScorerSpec], *, store: Store | None = None
) -> list[tuple[ScorerSpec, CalibrationStatus]]:
    """The calibration status of each recorded scorer worth a line in a run's summary or
    report: every judge scorer (its scores need human backing, so "no" is news) and every
    scorer that was ever calibrated; a code scorer never calibrated is left out."""
    with using_store(store) as db:
        statuses = [(spec, spec_calibration_status(spec, store=db)) for spec in specs]
    return [(spec, s) for spec, s in statuses if s.state != "no" or is_judge_spec(spec)]


def calibration_statuses(
    scorers: Iterable[Scorer | str | dict[str, Any]], *, store: Store | None = None
) -> list[CalibrationStatus]:
    """``calibration_status`` of each scorer, in one store session."""
    with using_store(store) as db:
        return [calibration_status(s, store=db) for s in scorers]


def require_calibrated(
    scorers: Sequence[Scorer | str | dict[str, Any]], *, store: Store | None = None
) -> None:
    """Raise ``CalibrationRequiredError`` naming every scorer without a passing matching
    certificate (called before a run's first item)."""
    built = build_scorers(scorers)
    statuses = calibration_statuses(built, store=store)
    missing = [s for s in statuses if not s.calibrated]
    if missing:
        listed = "; ".join(f"{s.scorer_id!r}: {s.describe()}" for s in missing)
        raise CalibrationRequiredError(
            "require_calibrated: these scorers have no passing calibration certificate "
            f"matching their current configuration: {listed}. Run `assay calibrate` on "
            "labelled data for each, or drop require_calibrated"
        )

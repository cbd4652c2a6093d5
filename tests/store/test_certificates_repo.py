"""The certificate repository: stored whole, read back by id, fingerprint and scorer."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.store import Certificate, CertificateNotFoundError, open_store


def _cert(fingerprint: str, created_at: float, **changes: object) -> Certificate:
    fields: dict[str, object] = {
        "fingerprint": fingerprint,
        "fingerprint_parts": {"type": "faithfulness", "params": "p1"},
        "scorer_type": "faithfulness",
        "scorer_label": "Faithfulness",
        "judge_model": "openai/gpt-4o-mini",
        "data_key": "dataset:labelled@3",
        "kind": "binary",
        "n": 120,
        "statistics": {"kappa": {"value": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 120}},
        "gates": [{"statistic": "kappa", "bound": 0.5, "passed": True}],
        "passed": True,
        "created_at": created_at,
    }
    fields.update(changes)
    return Certificate.model_validate(fields)


def test_certificates_round_trip_and_are_found_newest_first(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        old = store.certificates.add(_cert("f1", 100.0))
        new = store.certificates.add(_cert("f1", 200.0, passed=False))
        other = store.certificates.add(_cert("f2", 150.0, scorer_label="Other"))
        assert store.certificates.get(old.id) == old
        assert store.certificates.get(new.id[:10]) == new
        assert store.certificates.for_fingerprint("f1") == [new, old]
        assert store.certificates.for_fingerprint("nope") == []
        assert store.certificates.for_scorer("faithfulness", "Faithfulness") == [new, old]
        assert store.certificates.list() == [new, other, old]
        with pytest.raises(CertificateNotFoundError, match="no calibration certificate"):
            store.certificates.get("zzz")


def test_a_deleted_run_leaves_its_certificate(tmp_path: Path) -> None:
    from assay.operations.stored_runs import run_stored

    with open_store(f"sqlite:///{tmp_path / 's.db'}") as store:
        run = run_stored([{"id": "a", "output": "x"}], None, [], store=store, progress=False)
        cert = store.certificates.add(_cert("f1", 1.0, run_id=run.id))
        assert store.certificates.get(cert.id).run_id == run.id
        store.runs.delete(run.id)
        kept = store.certificates.get(cert.id)
        assert kept.run_id is None and kept.statistics == cert.statistics

"""``assay calibrate`` through the real command line on a real SQLite file: the STS-B
example end to end, gates and exit codes, the JSON file, the disagreement export, and
``assay run --require-calibrated``."""

from __future__ import annotations

import json
from pathlib import Path

from .test_store_commands import ROOT, assay

EXAMPLE = ROOT / "examples" / "calibration" / "stsb.yaml"


def test_the_sts_b_example_runs_end_to_end(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    out = tmp_path / "out.json"
    dis = tmp_path / "dis.jsonl"
    report = tmp_path / "report.html"
    done = assay(
        db,
        "calibrate",
        str(EXAMPLE),
        "--json",
        str(out),
        "--disagreements",
        str(dis),
        "--report",
        str(report),
    )
    assert done.returncode == 0, done.stderr
    assert "calibration of content-similarity (numeric, n=80)" in done.stdout
    assert "spearman" in done.stdout and "pass (≥ 0.3 on ci)" in done.stdout
    data = json.loads(out.read_text())
    spearman = data["statistics"]["spearman"]
    assert set(spearman) == {"value", "ci_low", "ci_high", "n"} and spearman["n"] == 80
    assert spearman["ci_low"] < spearman["value"] < spearman["ci_high"]
    [scorer] = data["scorers"]
    assert scorer["splits"]["test"]["n"] == 24 and scorer["splits"]["dev"]["n"] == 56
    # the certificate stands on the held-out split it certifies
    assert scorer["certificate"]["passed"] and scorer["certificate"]["n"] == 24
    assert data["passed"] is True
    # the calibration is a normal stored run
    listed = assay(db, "runs", "list")
    assert scorer["run_id"] in listed.stdout and "scorer Content Similarity" in listed.stdout
    # the disagreements are a dataset file `assay datasets import` accepts
    rows = [json.loads(line) for line in dis.read_text().splitlines()]
    assert len(rows) == 20 and all("score" in r["metadata"] for r in rows)
    imported = assay(db, "datasets", "import", str(dis), "--name", "to-relabel")
    assert imported.returncode == 0, imported.stderr
    shown = assay(db, "datasets", "show", "to-relabel")
    assert "20" in shown.stdout
    html = report.read_text()
    assert 'id="calibration"' in html and "cal-scatter-0" in html and "Certificate" in html


def test_min_gates_exit_1_on_the_ci_bound_and_point_checks_the_estimate(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    out = tmp_path / "out.json"
    first = assay(db, "calibrate", str(EXAMPLE), "--json", str(out))
    assert first.returncode == 0, first.stderr
    test = json.loads(out.read_text())["scorers"][0]["splits"]["test"]["statistics"]["spearman"]
    between = round((test["ci_low"] + test["value"]) / 2, 4)

    failed = assay(db, "calibrate", str(EXAMPLE), "--min", f"spearman={between}")
    assert failed.returncode == 1, failed.stderr
    assert "gate failed: content-similarity: spearman lower 95% CI bound" in failed.stderr
    on_point = assay(
        db, "calibrate", str(EXAMPLE), "--min", f"spearman={between}", "--gate-on", "point"
    )
    assert on_point.returncode == 0, on_point.stderr


def test_bad_input_exits_2_with_the_key_named(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    bad_gate = assay(db, "calibrate", str(EXAMPLE), "--min", "kappa")
    assert bad_gate.returncode == 2 and "--min 'kappa': expected METRIC=NUMBER" in bad_gate.stderr
    unknown = assay(db, "calibrate", str(EXAMPLE), "--min", "kappa=0.5")
    assert unknown.returncode == 2
    assert "key 'min': no statistic 'kappa' for kind 'numeric'" in unknown.stderr
    config = tmp_path / "c.yaml"
    config.write_text(f"scorer: content-similarity\ndata: {EXAMPLE.parent / 'stsb_sample.jsonl'}\n")
    missing = assay(db, "calibrate", str(config))
    assert missing.returncode == 2 and "missing key 'kind'" in missing.stderr
    gate_on = assay(db, "calibrate", str(EXAMPLE), "--gate-on", "mean")
    assert gate_on.returncode == 2 and "--gate-on 'mean'" in gate_on.stderr


def test_require_names_a_statistic_that_must_have_a_ci(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    fine = assay(db, "calibrate", str(EXAMPLE), "--require", "spearman")
    assert fine.returncode == 0, fine.stderr
    runs_before = assay(db, "runs", "list").stdout
    unknown = assay(db, "calibrate", str(EXAMPLE), "--require", "roc_auc")
    assert unknown.returncode == 2
    assert "key 'require': no statistic 'roc_auc' for kind 'numeric'" in unknown.stderr
    assert assay(db, "runs", "list").stdout == runs_before  # refused before anything ran


def test_without_gates_the_certificate_says_no_gates_and_run_refuses_it(tmp_path: Path) -> None:
    db = tmp_path / "cal.db"
    config = tmp_path / "nogates.yaml"
    text = EXAMPLE.read_text(encoding="utf-8").split("min:")[0]
    config.write_text(text.replace("stsb_sample.jsonl", str(EXAMPLE.parent / "stsb_sample.jsonl")))
    assert assay(db, "calibrate", str(config)).returncode == 0
    scorer = json.dumps({"type": "content-similarity", "params": {"compare_to": "input"}})
    data = EXAMPLE.parent / "stsb_sample.jsonl"
    refused = assay(
        db, "run", "--data", str(data), "--scorer", scorer, "--require-calibrated", "--no-progress"
    )
    assert refused.returncode == 2 and "calibrated: no gates" in refused.stderr


def test_require_of_an_undefined_statistic_exits_1_and_stores_a_failed_certificate(
    tmp_path: Path,
) -> None:
    """Every human gave the same similarity: Spearman is undefined, so ``--require
    spearman`` fails (exit 1), the stored certificate says ``passed: false`` and ``assay
    run --require-calibrated`` refuses the scorer (issue 26)."""
    db = tmp_path / "cal.db"
    out = tmp_path / "out.json"
    rows = [json.loads(line) for line in (EXAMPLE.parent / "stsb_sample.jsonl").open()]
    for row in rows:
        row["metadata"]["similarity"] = 3.0
    data = tmp_path / "flat.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    config = tmp_path / "flat.yaml"
    text = EXAMPLE.read_text(encoding="utf-8").split("min:")[0]
    config.write_text(text.replace("stsb_sample.jsonl", str(data)), encoding="utf-8")
    failed = assay(db, "calibrate", str(config), "--require", "spearman", "--json", str(out))
    assert failed.returncode == 1, failed.stderr
    [scorer] = json.loads(out.read_text())["scorers"]
    assert scorer["certificate"]["passed"] is False
    command = json.dumps({"type": "content-similarity", "params": {"compare_to": "input"}})
    refused = assay(
        db, "run", "--data", str(data), "--scorer", command, "--require-calibrated", "--no-progress"
    )
    assert refused.returncode == 2 and "calibrated: no" in refused.stderr, refused.stderr


def test_run_require_calibrated_stops_an_uncalibrated_run_and_passes_a_calibrated_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "cal.db"
    data = EXAMPLE.parent / "stsb_sample.jsonl"
    scorer = json.dumps({"type": "content-similarity", "params": {"compare_to": "input"}})
    refused = assay(
        db, "run", "--data", str(data), "--scorer", scorer, "--require-calibrated", "--no-progress"
    )
    assert refused.returncode == 2
    assert "require_calibrated" in refused.stderr and "calibrated: no" in refused.stderr
    assert "0 runs" in assay(db, "runs", "list").stdout

    assert assay(db, "calibrate", str(EXAMPLE)).returncode == 0
    allowed = assay(
        db, "run", "--data", str(data), "--scorer", scorer, "--require-calibrated", "--no-progress"
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "content-similarity: calibrated: yes (ρ 0." in allowed.stdout


def test_help_documents_the_gates(tmp_path: Path) -> None:
    shown = assay(tmp_path / "h.db", "calibrate", "--help")
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "--min" in text and "lower 95% CI bound (--gate-on ci" in text and "%%" not in text


def test_ppi_reports_the_judge_corrected_mean_of_a_stored_run(tmp_path: Path) -> None:
    from assay.store import open_store

    db = tmp_path / "cal.db"
    scorer = json.dumps({"type": "content-similarity", "params": {"compare_to": "input"}})
    data = EXAMPLE.parent / "stsb_sample.jsonl"
    ran = assay(db, "run", "--data", str(data), "--scorer", scorer, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    store = open_store(f"sqlite:///{db}")
    [run] = store.runs.list()
    run_id = run.id
    store.close()
    out = tmp_path / "ppi.json"
    done = assay(db, "calibrate", str(EXAMPLE), "--ppi", run_id, "--json", str(out))
    assert done.returncode == 0, done.stderr
    [(scorer_id, corrected)] = json.loads(out.read_text())["judge_corrected"].items()
    assert corrected["n_labelled"] == corrected["n"] == 80
    assert corrected["ci_low"] <= corrected["value"] <= corrected["ci_high"]
    assert 0.0 <= corrected["weight"] <= 1.0
    assert f"judge-corrected {scorer_id}: " in done.stdout
    bad = assay(db, "calibrate", str(EXAMPLE), "--ppi", "nope")
    assert bad.returncode == 2 and "--ppi 'nope'" in bad.stderr


def test_ppi_warns_when_no_labelled_item_disagrees_with_the_judge(tmp_path: Path) -> None:
    """Outputs equal to inputs score 1.0 and every label is 5 (1.0 on the scorer's scale):
    the rectifier shows no variance, so it is floored, and the CLI says so on stderr and
    in the JSON."""
    from assay.store import open_store

    rows = [
        {"id": f"i{k}", "input": f"sentence {k}", "output": f"sentence {k}"}
        | ({"metadata": {"similarity": 5}} if k < 8 else {})
        for k in range(30)
    ]
    data = tmp_path / "same.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "same.db"
    scorer = json.dumps({"type": "content-similarity", "params": {"compare_to": "input"}})
    ran = assay(db, "run", "--data", str(data), "--scorer", scorer, "--no-progress")
    assert ran.returncode == 0, ran.stderr
    store = open_store(f"sqlite:///{db}")
    [run] = store.runs.list()
    store.close()
    out = tmp_path / "ppi.json"
    done = assay(db, "calibrate", str(EXAMPLE), "--ppi", run.id, "--json", str(out))
    assert done.returncode == 0, done.stderr
    [corrected] = json.loads(out.read_text())["judge_corrected"].values()
    assert corrected["n_labelled"] == 8 and corrected["n"] == 30
    assert "floored" in corrected["warning"]
    assert "warning: " in done.stderr and "floored" in done.stderr
    assert corrected["ci_low"] < corrected["value"] < corrected["ci_high"]

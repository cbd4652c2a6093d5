"""Every command that prints a table also prints JSON with ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from .test_gates_cli import _stored_run
from .test_store_commands import assay


def test_dataset_and_comparison_commands_print_json(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    data = tmp_path / "qa.jsonl"
    data.write_text(
        "\n".join(json.dumps({"id": f"i{k}", "input": f"q{k}"}) for k in range(3)) + "\n"
    )
    assert assay(db, "datasets", "import", str(data), "--name", "qa").returncode == 0

    listed = json.loads(assay(db, "datasets", "list", "--json").stdout)
    assert [(d["name"], d["item_count"]) for d in listed] == [("qa", 3)]
    shown = json.loads(assay(db, "datasets", "show", "qa", "--json", "-n", "2").stdout)
    assert shown["total"] == 3 and [i["id"] for i in shown["items"]] == ["i0", "i1"]
    versions = json.loads(assay(db, "datasets", "versions", "qa", "--json").stdout)
    assert [v["version"] for v in versions] == [0, 1]

    a, b = _stored_run(db, right=True), _stored_run(db, right=False)
    compared = json.loads(assay(db, "runs", "compare", a, b, "--json").stdout)
    (scorer,) = compared["scorers"]
    assert scorer["scorer_id"] == "exact-match" and scorer["verdict"] == "regressed"


def test_scorers_show_and_demo_print_json(tmp_path: Path) -> None:
    shown = json.loads(assay(tmp_path / "s.db", "scorers", "show", "tone", "--json").stdout)
    assert shown["type"] == "tone" and "properties" in shown["params_schema"]
    demo = assay(tmp_path / "d.db", "demo", "--no-judge", "--json", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    payload = json.loads(demo.stdout)
    assert payload["run_id"] and payload["items"]
    assert set(payload["means"]) >= {"content-similarity", "tone"}

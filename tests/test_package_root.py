"""``import assay`` is cheap: every public name loads on first use, numpy never at import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import assay

SRC = Path(assay.__file__).resolve().parents[1]


def modules_after(code: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(SRC)},
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_import_assay_imports_no_submodule_and_no_heavy_library() -> None:
    loaded = modules_after("import assay")
    ours = {m for m in loaded if m == "assay" or m.startswith("assay.")}
    assert ours == {"assay"}
    for heavy in ("numpy", "pydantic", "sqlalchemy", "aiohttp", "rich", "jinja2", "yaml"):
        assert heavy not in loaded, heavy


def test_scoring_one_answer_does_not_import_numpy_or_the_store() -> None:
    loaded = modules_after(
        "import assay\n"
        "s = assay.create_scorer('exact-match')\n"
        "assert s.run_sync(output='4', ground_truth='4').score == 1.0"
    )
    for heavy in ("numpy", "sqlalchemy", "alembic", "spacy", "scipy", "pyarrow"):
        assert heavy not in loaded, heavy


def test_the_cli_help_imports_no_heavy_room() -> None:
    loaded = modules_after(
        "import sys\n"
        "from assay.cli.app import app\n"
        "try:\n"
        "    app(['--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass"
    )
    for heavy in ("numpy", "pydantic", "sqlalchemy", "assay.types", "assay.runner"):
        assert heavy not in loaded, heavy


def test_every_public_name_resolves() -> None:
    for name in assay.__all__:
        assert getattr(assay, name) is not None, name
    assert set(assay.__all__) <= set(dir(assay))
    from assay import Item, RunOptions  # the from-import form still works

    assert RunOptions().gc_freeze is False
    assert Item(id="1", input="x").input == "x"

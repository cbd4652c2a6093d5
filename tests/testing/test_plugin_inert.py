"""The plugin costs a suite that does not use it nothing: no assay module, no file.

pytest loads every installed ``pytest11`` plugin into every suite, so this runs a real
pytest in a fresh interpreter (a subprocess: this process has assay loaded already) on a
suite without assay tests, with the plugin loaded the way the entry point loads it, and
the suite itself looks at ``sys.modules`` and the folder.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).parents[2] / "src"

SUITE = """
import os
import sys


def test_nothing_of_assay_is_imported():
    assert "assay_pytest" in sys.modules  # the plugin is there ...
    ours = sorted(m for m in sys.modules if m == "assay" or m.startswith("assay."))
    assert ours == []  # ... and nothing else of assay


def test_no_file_is_written():
    assert sorted(os.listdir(".")) == ["test_plain.py"]
"""


def test_a_suite_without_assay_tests_imports_nothing_of_assay(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text(SUITE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("ASSAY_DATABASE_URL", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "assay_pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "test_plain.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "assay:" not in done.stdout  # no terminal-summary section either
    assert sorted(os.listdir(tmp_path)) == ["test_plain.py"]


def test_the_plugin_module_imports_only_pytest_at_import_time() -> None:
    tree = ast.parse((SRC / "assay_pytest.py").read_text(encoding="utf-8"))
    top_level = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            top_level |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            top_level.add(node.module or "")
    assert top_level == {"__future__", "typing", "pytest"}

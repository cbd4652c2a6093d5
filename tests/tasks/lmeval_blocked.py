"""Run Python with the real lm-eval unimportable (as for a user without lm-eval), in a
subprocess so the test process keeps whatever lm-eval it has.

``run_without_lmeval(code)`` runs ``code`` after installing a meta-path finder that refuses
``lm_eval`` and its library modules (the catalogue's own ``lm_eval.tasks.*`` files stay
reachable through assay's stand-in) and returns the JSON the code prints last.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]

PRELUDE = """
import sys
class _NoLmEval:
    def find_spec(self, name, path=None, target=None):
        if name == "lm_eval" or (
            name.startswith("lm_eval.") and not name.startswith("lm_eval.tasks")
        ):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoLmEval())
"""


def run_without_lmeval(code: str, *, cwd: Path = ROOT) -> Any:
    """The last stdout line of ``code`` (run with lm-eval blocked), parsed as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])

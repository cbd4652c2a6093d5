"""``ImportWarmer``: modules imported in a background thread, once, errors left to the
caller's own import."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import assay
from assay.warm_imports import ImportWarmer


def test_the_warmer_imports_in_its_own_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "warm_probe_module.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe_module", raising=False)
    warmer = ImportWarmer(("warm_probe_module",))
    assert warmer.modules == ("warm_probe_module",) and not warmer.started
    warmer.start()
    warmer.start()  # once
    warmer.wait(30)
    module = sys.modules["warm_probe_module"]
    assert module.THREAD == "assay-warm-imports"
    assert warmer.started
    assert not any(t.name == "assay-warm-imports" for t in threading.enumerate())


def test_nothing_to_import_starts_no_thread() -> None:
    warmer = ImportWarmer(("json", "sys"))
    assert warmer.modules == ()
    warmer.start()
    assert not warmer.started
    warmer.wait()  # returns at once


def test_an_import_that_fails_in_the_thread_is_left_to_the_caller() -> None:
    warmer = ImportWarmer(("assay_no_such_module_anywhere", "json"))
    warmer.start()
    warmer.wait(30)
    assert "assay_no_such_module_anywhere" not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        __import__("assay_no_such_module_anywhere")


FORK_WHILE_IMPORTING = """
import multiprocessing, sys, time
sys.path.insert(0, {path!r})
from assay.warm_imports import ImportWarmer
warmer = ImportWarmer(("slow_probe_module",))
warmer.start()
time.sleep(0.1)  # the thread is inside the module's import (it sleeps 1 s there)
child = multiprocessing.get_context("fork").Process(target=__import__, args=("slow_probe_module",))
child.start()  # forks: waits for the import to finish first
child.join(20)
if child.exitcode is None:
    child.kill()
    child.join(5)
print(child.exitcode)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX")
def test_a_fork_waits_for_a_running_import_so_the_child_can_import_it(tmp_path: Path) -> None:
    """A child forked while the thread held the module's import lock would hang on it."""
    (tmp_path / "slow_probe_module.py").write_text("import time\ntime.sleep(1.0)\n")
    proc = subprocess.run(
        [sys.executable, "-c", FORK_WHILE_IMPORTING.format(path=str(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(assay.__file__).parents[1])},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0"]  # the child imported it and exited (not hung, killed)

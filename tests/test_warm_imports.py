"""``ImportWarmer``: modules imported in a background thread, once, errors left to the
caller's own import."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

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

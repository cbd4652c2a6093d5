"""``assay.tasks.lmeval_compat``: task code importing ``lm_eval`` works without lm-eval, and
what is not provided fails with one line naming it.

Most checks run in a subprocess with the real lm-eval made unimportable (the stand-ins'
case); the registry and include checks also run here, whatever this environment has.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.operations.tasks import load_task, run_task
from assay.tasks.errors import TaskConfigError
from assay.tasks.lmeval_compat import SUPPORTED
from assay.tasks.yaml_loader import load_task_config
from tests.tasks.lmeval_blocked import run_without_lmeval

TASK = "task: {name}\ndataset_path: x\noutput_type: generate_until\ndoc_to_text: '{{{{q}}}}'\n"
TASK += "doc_to_target: '{{{{a}}}}'\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def tree(root: Path) -> dict[str, Path]:
    """Task folders exercising the stand-ins (written fresh for each test)."""
    files = {
        "unsupported": write(
            root / "a" / "unsupported.yaml",
            TASK.format(name="unsupported") + "process_docs: !function u1.f\n",
        ),
        "submodule": write(
            root / "b" / "submodule.yaml",
            TASK.format(name="submodule") + "process_docs: !function u2.f\n",
        ),
        "sibling": write(
            root / "cat" / "sib" / "sibling.yaml",
            TASK.format(name="sibling").replace("'{{q}}'", "!function u3.f"),
        ),
        "registered": write(
            root / "d" / "registered.yaml",
            TASK.format(name="registered")
            + "process_docs: !function u4.f\n"
            + "filter_list:\n  - name: shout\n    filter:\n      - function: shout_i28\n"
            + "      - function: take_first\n",
        ),
    }
    write(root / "a" / "u1.py", "from lm_eval.utils import no_such_helper\ndef f(d): return d\n")
    write(
        root / "b" / "u2.py", "from lm_eval.api.task import ConfigurableTask\ndef f(d): return d\n"
    )
    write(root / "cat" / "shared" / "consts.py", "PREFIX = 'shared:'\n")
    write(
        root / "cat" / "sib" / "u3.py",
        "from lm_eval.tasks.shared.consts import PREFIX\n"
        "from lm_eval.utils import general_detokenize\n"
        "def f(doc):\n    return PREFIX + general_detokenize(doc['q'])\n",
    )
    write(
        root / "d" / "u4.py",
        "from lm_eval.api.registry import register_filter\n"
        "from lm_eval.api.filter import Filter\n"
        "@register_filter('shout_i28')\n"
        "class Shout(Filter):\n"
        "    def apply(self, resps, docs):\n"
        "        return [[r.upper() + '!' for r in rs] for rs in resps]\n"
        "def f(d): return d\n",
    )
    return files


def test_the_stand_ins_without_lmeval(tmp_path: Path) -> None:
    files = tree(tmp_path)
    got = run_without_lmeval(
        f"""
        import json
        from assay.operations.tasks import load_task, run_task
        from assay.tasks.errors import TaskConfigError
        from assay.tasks.yaml_loader import load_task_config
        files = {json.dumps({k: str(v) for k, v in files.items()})}
        out = {{}}
        for name in ("unsupported", "submodule"):
            try:
                load_task_config(files[name])
                out[name] = "loaded"
            except TaskConfigError as exc:
                out[name] = str(exc)
        config = load_task_config(files["sibling"])
        out["sibling"] = config.doc_to_text({{"q": "do n't ( x )"}})
        task = load_task(files["registered"], docs=[{{"q": "q", "a": "A"}}])
        out["registered"] = run_task(task, predictions={{0: "hi"}}, stored=False,
                                     progress=False).report["per_doc"][0]["filtered"]
        print(json.dumps(out))
        """
    )
    assert "\n" not in got["unsupported"]
    assert "cannot import name 'no_such_helper' from 'lm_eval.utils'" in got["unsupported"]
    assert "docs/tasks.md" in got["unsupported"]
    assert "\n" not in got["submodule"]
    assert "lm_eval.api.task is not provided by assay" in got["submodule"]
    assert got["sibling"] == "shared:don't (x)"
    assert got["registered"] == "HI!"


def test_every_supported_name_is_importable_from_its_shim() -> None:
    names = {module: sorted(attrs) for module, attrs in SUPPORTED.items()}
    got = run_without_lmeval(
        f"""
        import importlib, json
        from pathlib import Path
        from assay.tasks.lmeval_compat import lmeval_imports
        names = {json.dumps(names)}
        missing = []
        with lmeval_imports(Path.cwd()):
            for module, attrs in names.items():
                mod = importlib.import_module(module)
                missing += [f"{{module}}.{{a}}" for a in attrs if not hasattr(mod, a)]
        print(json.dumps(missing))
        """
    )
    assert got == []


def test_the_shim_regex_filter_keeps_lmeval_attributes_for_subclasses() -> None:
    got = run_without_lmeval(
        """
        import json, re
        from pathlib import Path
        from assay.tasks.lmeval_compat import lmeval_imports
        with lmeval_imports(Path.cwd()):
            from lm_eval.filters.extraction import RegexFilter
        class Loud(RegexFilter):
            def __init__(self, **kw):
                super().__init__(r"answer is (\\w+)", -1, "none")
                self.regex = re.compile(self.regex_pattern, re.IGNORECASE)
        out = Loud().apply([["ANSWER IS a, answer is B", "nothing"]], [{}])
        print(json.dumps(out))
        """
    )
    assert got == [["B", "none"]]


def test_a_filter_registered_by_task_code_is_usable_by_name(tmp_path: Path) -> None:
    files = tree(tmp_path)
    task = load_task(files["registered"], docs=[{"q": "q", "a": "A"}])
    report = run_task(task, predictions={0: "hi"}, stored=False, progress=False).report
    assert report["per_doc"][0]["filtered"] == "HI!"


def test_an_unknown_filter_name_still_fails_naming_it(tmp_path: Path) -> None:
    path = write(
        tmp_path / "t.yaml",
        TASK.format(name="t") + "filter_list:\n  - name: x\n    filter:\n"
        "      - function: never_registered_i28\n",
    )
    with pytest.raises(TaskConfigError, match="never_registered_i28"):
        load_task_config(path)


def test_function_in_an_included_file_resolves_next_to_that_file(tmp_path: Path) -> None:
    write(
        tmp_path / "base" / "_base_yaml", TASK.format(name="base") + "process_docs: !function u.f\n"
    )
    write(tmp_path / "base" / "u.py", "def f(d):\n    return d\n")
    write(tmp_path / "child" / "u.py", "raise RuntimeError('the wrong utils.py')\n")
    child = write(tmp_path / "child" / "c.yaml", "include: ../base/_base_yaml\ntask: c\n")
    config: Any = load_task_config(child)
    assert config.process_docs.__module__.startswith("assay_task_modules.u_")


def test_a_symlinked_yaml_resolves_includes_and_functions_at_its_target(tmp_path: Path) -> None:
    real = write(
        tmp_path / "real" / "t.yaml",
        "include: _t_yaml\ntask: t\nprocess_docs: !function u.f\n",
    )
    write(tmp_path / "real" / "_t_yaml", TASK.format(name="t"))
    write(tmp_path / "real" / "u.py", "def f(d):\n    return d\n")
    link = tmp_path / "elsewhere" / "t.yaml"
    link.parent.mkdir()
    link.symlink_to(real)
    config: Any = load_task_config(link)  # lm-eval follows the link: siblings of the target
    assert config.task == "t" and callable(config.process_docs)


def test_process_results_runs_once_per_doc_and_pipeline(tmp_path: Path) -> None:
    write(
        tmp_path / "u.py",
        "CALLS = []\n"
        "def process_results(doc, results):\n"
        "    CALLS.append((doc['q'], results[0]))\n"
        "    hit = float(results[0] == doc['a'])\n"
        "    return {'m1': hit, 'm2': 1 - hit, 'm3': 0.5, 'm4': len(results[0])}\n",
    )
    path = write(
        tmp_path / "t.yaml",
        TASK.format(name="t")
        + "process_results: !function u.process_results\n"
        + "metric_list:\n"
        + "".join(f"  - metric: m{i}\n    aggregation: mean\n" for i in range(1, 5))
        + "filter_list:\n"
        + "  - name: raw\n    filter:\n      - function: take_first\n"
        + "  - name: low\n    filter:\n      - function: lowercase\n"
        + "      - function: take_first\n",
    )
    docs = [{"q": "q1", "a": "A"}, {"q": "q2", "a": "b"}, {"q": "q3", "a": "c"}]
    task = load_task(path, docs=docs)
    report = run_task(
        task, predictions={0: "A", 1: "B", 2: "cc"}, stored=False, progress=False
    ).report
    calls = task.config.process_results.__globals__["CALLS"]
    assert sorted(calls) == sorted(
        [("q1", "A"), ("q2", "B"), ("q3", "cc"), ("q1", "a"), ("q2", "b"), ("q3", "cc")]
    )
    assert report["aggregate"]["m1,raw"] == pytest.approx(1 / 3)
    assert report["aggregate"]["m1,low"] == pytest.approx(1 / 3)
    assert report["aggregate"]["m4,raw"] == pytest.approx(4 / 3)

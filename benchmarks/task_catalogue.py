"""Catalogue coverage: the share of lm-eval's task YAMLs that ``assay tasks validate`` accepts.

Walks the ``tasks`` folder of the installed ``lm_eval`` package (or ROOT), validates every
non-multimodal task and group YAML as ``assay tasks validate`` does (includes, every
``!function`` imported, names checked) and prints the share and each failure with its reason.

    python benchmarks/task_catalogue.py [ROOT] [--without-lm-eval] [--without-module NAME]
        [--json OUT] [--docs FILE]

``--without-lm-eval`` makes the real lm-eval unimportable first (a user who copied the
catalogue but did not install lm-eval: task code importing ``lm_eval`` gets assay's
stand-ins); ``--without-module NAME`` blocks another package (the CI figure is measured
without ``evaluate``, an optional extra, so it does not depend on it). ``--docs FILE``
rewrites the failure list between the markers of FILE (docs/task-catalogue.md).
Exit 0 when the share is at least ``--min`` (default 0.97), else 1; 2 when there is no
catalogue.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType


class _Unimportable:
    """A meta-path finder that makes packages unimportable (for ``lm_eval``, the catalogue's
    own ``lm_eval.tasks.*`` modules stay reachable through assay's stand-in
    ``lm_eval.tasks``)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        top = name.partition(".")[0]
        if top in self.names and not (top == "lm_eval" and name.startswith("lm_eval.tasks")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def docs_section(coverage: object) -> str:
    """The failure list as markdown: one line per file, grouped by reason class."""
    from assay.tasks.coverage import CatalogueCoverage, reason_class

    assert isinstance(coverage, CatalogueCoverage)
    groups: dict[str, list[str]] = {}
    for failure in coverage.failures:
        reason = failure.reason.replace("`", "'")
        groups.setdefault(reason_class(failure.reason), []).append(f"- `{failure.path}`: {reason}")
    lines: list[str] = []
    for reason, rows in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines += ["", f"### {reason} ({len(rows)})", "", *rows]
    return "\n".join(lines) + "\n"


START, END = "<!-- failures:start -->", "<!-- failures:end -->"


def write_docs(path: Path, section: str) -> None:
    """Replace the part of ``path`` between the failure markers by ``section``."""
    text = path.read_text() if path.exists() else f"{START}\n{END}\n"
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    path.write_text(f"{head}{START}\n{section}{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", help="a task folder (default: the installed lm_eval)")
    parser.add_argument("--without-lm-eval", action="store_true")
    parser.add_argument(
        "--without-module",
        action="append",
        default=[],
        metavar="NAME",
        help="make a package unimportable too (the CI test: evaluate, an optional extra)",
    )
    parser.add_argument("--json", dest="json_out", help="write the result as JSON")
    parser.add_argument("--docs", dest="docs_out", help="write the failure list as markdown")
    parser.add_argument("--min", type=float, default=0.97)
    args = parser.parse_args(argv)
    from assay.tasks.coverage import installed_lmeval_tasks, measure_catalogue

    root = Path(args.root) if args.root else installed_lmeval_tasks()
    blocked = (["lm_eval"] if args.without_lm_eval else []) + list(args.without_module)
    if blocked:
        sys.meta_path.insert(0, _Unimportable(blocked))
    if root is None or not root.is_dir():
        print("no task catalogue: pip install --no-deps lm_eval==0.4.13, or pass ROOT")
        return 2
    started = time.perf_counter()
    coverage = measure_catalogue(root)
    seconds = time.perf_counter() - started
    for failure in coverage.failures:
        print(f"FAIL {failure.path}: {failure.reason}")
    print()
    for reason, count in coverage.reasons().most_common():
        print(f"{count:5d}  {reason}")
    mode = f"without {', '.join(blocked)} importable" if blocked else "lm-eval as installed"
    print(
        f"\n{coverage.valid}/{coverage.total} task and group YAMLs validate "
        f"({coverage.share:.2%}; {coverage.multimodal} multimodal ones not counted; "
        f"{mode}; {seconds:.1f} s)"
    )
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(
                {
                    "root": str(root),
                    "total": coverage.total,
                    "valid": coverage.valid,
                    "multimodal": coverage.multimodal,
                    "share": coverage.share,
                    "without": blocked,
                    "failures": [{"path": f.path, "reason": f.reason} for f in coverage.failures],
                },
                indent=1,
            )
        )
    if args.docs_out:
        write_docs(Path(args.docs_out), docs_section(coverage))
    return 0 if coverage.share >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())

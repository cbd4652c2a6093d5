"""Check that completeness extracts the same elements as an earlier revision of the code.

Speed work on the completeness scorer must not move a single element: this script loads
``src/assay/scorers/_lib/completeness_terms.py`` as it was at ``--old`` (a git revision) next to
the working tree's version, extracts the elements of every STS-B text (``sentence1`` and
``sentence2``; with ``--all`` the train and dev splits too) and of every completeness acceptance
case, and compares the lists, then the full result (elements, missing, counts, score) of every
pair in both directions. It prints the counts and exits with status 1 if anything differs.

Usage::

    .venv/bin/python benchmarks/completeness_elements_check.py [--old 8b001c3] [--all]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
MODULE = "src/assay/scorers/_lib/completeness_terms.py"
STSB = ROOT.parent / "shared" / "data" / "stsb"
CASES = ROOT / "tests" / "fixtures" / "scorer_cases.json"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _case_texts() -> list[str]:
    texts: list[str] = []
    for case in json.loads(CASES.read_text()):
        if case["scorer"] != "completeness":
            continue
        for side in (case["input"] or {}).get("inputMessages") or [], case["output"] or []:
            texts.extend(m["content"] for m in side if isinstance(m.get("content"), str))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", default="8b001c3", help="git revision to compare against")
    parser.add_argument("--all", action="store_true", help="train and dev splits too")
    args = parser.parse_args()

    old_source = subprocess.run(
        ["git", "show", f"{args.old}:{MODULE}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        old_path = Path(tmp) / "old_completeness_terms.py"
        old_path.write_text(old_source)
        old = _load(old_path, "old_completeness_terms")
    new = _load(ROOT / MODULE, "new_completeness_terms")

    splits = ["test", "train", "dev"] if args.all else ["test"]
    pairs: list[tuple[str, str]] = []
    for split in splits:
        for line in (STSB / f"stsb_{split}.jsonl").read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                pairs.append((row["sentence1"], row["sentence2"]))
    texts = list(dict.fromkeys([t for pair in pairs for t in pair] + _case_texts()))

    old_elements = old.extract_elements_many(texts)
    new_elements = new.extract_elements_many(texts)
    by_text = dict(zip(texts, new_elements, strict=True))
    differing = [t for t, a, b in zip(texts, old_elements, new_elements, strict=True) if a != b]
    single = [t for t in texts[:300] if new.extract_elements(t) != by_text[t]]

    old_by_text = dict(zip(texts, old_elements, strict=True))
    results_differing = 0
    for first, second in pairs:
        for a, b in ((first, second), (second, first)):
            old_result = old.completeness_from_elements(old_by_text[a], old_by_text[b])
            new_result = new.completeness_from_elements(by_text[a], by_text[b])
            results_differing += old_result != new_result

    print(
        f"{len(texts)} distinct texts ({', '.join(splits)} + completeness cases) vs {args.old}: "
        f"{len(differing)} with different element lists; "
        f"{len(single)} of the first 300 differ one at a time vs batched; "
        f"{results_differing} of {2 * len(pairs)} pair results differ"
    )
    for text in differing[:10]:
        print(f"  {text!r}")
    sys.exit(1 if differing or single or results_differing else 0)


if __name__ == "__main__":
    main()

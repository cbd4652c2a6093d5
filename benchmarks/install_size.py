"""What a core install weighs: a fresh venv, ``pip install`` of this tree without extras.

Sums the files each installed distribution records (its ``RECORD``: code, data and the
``.pyc`` files pip compiled) and prints them largest first, the total with and without pip
and setuptools (which every venv starts with), and ``du`` of site-packages for comparison.
``--extras nlp,parquet`` measures an install with extras; ``--keep`` leaves the venv. Needs
PyPI (or the machine's pip index) and a few minutes. Run::

    python benchmarks/install_size.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP = {"pip", "setuptools", "wheel"}
"""What ``python -m venv`` installs by itself; reported apart from assay's closure."""

MEASURE = """
import importlib.metadata as md, json, os, sys, sysconfig
site = sysconfig.get_paths()["purelib"]
rows = []
for dist in md.distributions():
    size = 0
    for file in dist.files or []:
        try:
            size += os.path.getsize(os.path.join(site, str(file)))
        except OSError:
            pass
    rows.append([dist.metadata["Name"], dist.version, size])
json.dump({"site": site, "rows": rows}, sys.stdout)
"""


def measure(venv: Path, target: str) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", target], check=True, timeout=1800)
    found = json.loads(
        subprocess.run(
            [str(python), "-c", MEASURE], capture_output=True, text=True, check=True
        ).stdout
    )
    rows = sorted(found["rows"], key=lambda row: -row[2])
    for name, version, size in rows:
        print(f"{size / 1e6:8.1f} MB  {name} {version}")
    total = sum(size for _, _, size in rows)
    own = [row for row in rows if row[0].lower() not in BOOTSTRAP]
    closure = sum(size for _, _, size in own)
    print(
        f"total {total / 1e6:.1f} MB in {len(rows)} distributions; without pip/setuptools "
        f"{closure / 1e6:.1f} MB in {len(own)}"
    )
    du = subprocess.run(["du", "-sm", found["site"]], capture_output=True, text=True)
    print(f"du of site-packages: {du.stdout.split()[0] if du.stdout else '?'} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extras", default="", help="comma-separated extras, e.g. nlp,tasks")
    parser.add_argument("--keep", action="store_true", help="keep the venv (its path is shown)")
    args = parser.parse_args()
    target = f"{ROOT}[{args.extras}]" if args.extras else str(ROOT)
    folder = Path(tempfile.mkdtemp(prefix="assay-install-size-"))
    print(f"pip install {target} into {folder / 'venv'}   python {sys.version.split()[0]}")
    try:
        measure(folder / "venv", target)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()

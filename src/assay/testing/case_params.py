"""``cases``: a dataset's items as pytest parameters, one test id per item.

    @pytest.mark.parametrize("case", cases("support@3"))
    def test_answer(case):
        assert_score("exact-match", output=bot(case.input),
                     expected_output=case.expected_output, min=1)

Each parameter's id is the item's id, so ``pytest -k refund-window`` reruns one item, and
the test's stored run names its items by the same ids (a rerun pairs with the last one in
``runs compare``). The source is a data file (JSONL, CSV, Parquet ...) or a stored dataset:
``name`` (its current version) or ``name@version``, read from ``store`` (a URL), else from
the session's ``--assay-db``, else the default store. A path that exists wins over a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from assay.types import Item

_STORED = re.compile(r"(?P<name>[^@\s/\\]+)(?:@(?P<version>\d+))?")


def parse_source(source: str | Path) -> tuple[str, int | None] | None:
    """``(name, version)`` when ``source`` names a stored dataset rather than a file."""
    if isinstance(source, Path) or Path(source).exists():
        return None
    match = _STORED.fullmatch(source)
    if match is None or Path(source).suffix.lower() in {".jsonl", ".json", ".csv", ".parquet"}:
        return None
    version = match["version"]
    return match["name"], int(version) if version is not None else None


def load_cases(
    source: str | Path | Iterable[Item | dict[str, Any]],
    *,
    store: str | None = None,
    limit: int | None = None,
) -> list[Item]:
    """The items of ``source`` (a file, ``name[@version]`` of a stored dataset, or rows)."""
    from itertools import islice

    from assay.datasets.load import load_items

    stored = parse_source(source) if isinstance(source, str | Path) else None
    if stored is None:
        items = load_items(source)
        return list(islice(items, limit)) if limit is not None else list(items)
    from assay.store import open_store
    from assay.testing.session import configured_db_url

    name, version = stored
    db = open_store(store or configured_db_url())
    try:
        return list(db.datasets.items(name, version, limit=limit))
    finally:
        db.close()


def cases(
    source: str | Path | Iterable[Item | dict[str, Any]],
    *,
    store: str | None = None,
    limit: int | None = None,
) -> list[Any]:
    """``pytest.param(item, id=item.id)`` for every item of ``source`` (see the module)."""
    import pytest

    items = load_cases(source, store=store, limit=limit)
    if not items:
        raise ValueError(f"no items in {source!r}")
    return [pytest.param(item, id=item.id) for item in items]

"""Field mapping: which source column becomes which Item field.

``--map input=question --map expected_output=answer`` lets a file keep its own column names.
Without a mapping, columns named like Item fields map to themselves and every other column
is kept in ``metadata`` (nothing in the source is silently dropped). Source paths may be
dotted to reach into nested JSON objects (``metadata.topic=meta.topic``); a column whose
name literally contains the dots wins over the nested lookup, so flat CSV headers such as
``meta.topic`` still work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from assay.datasets.errors import MappingError
from assay.types import ITEM_FIELDS

_ITEM_FIELD_SET = frozenset(ITEM_FIELDS)

_MISSING: Any = object()


class MissingColumnError(LookupError):
    """A mapped source column is absent from a row (turned into a located import error)."""

    def __init__(self, field: str, column: str, available: Iterable[str]) -> None:
        self.field = field
        self.column = column
        self.available = sorted(available)
        shown = ", ".join(self.available[:20]) + (" ..." if len(self.available) > 20 else "")
        super().__init__(f"column '{column}' is missing (columns: {shown or 'none'})")


def parse_mapping(specs: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """Parse ``["input=question", ...]`` into ``{item_field: source_column}``.

    A mapping given as a dict is validated the same way, so the CLI and Python callers get
    identical errors. Targets must be Item fields or ``metadata.<key>``; a target given twice
    is an error rather than "last one wins", because that is almost always a typo.
    """
    if specs is None:
        return {}
    pairs: list[tuple[str, str]] = []
    if isinstance(specs, Mapping):
        pairs = [(str(k).strip(), str(v).strip()) for k, v in specs.items()]
    else:
        if isinstance(specs, str):
            specs = [specs]
        for spec in specs:
            target, sep, source = spec.partition("=")
            if not sep:
                raise MappingError(
                    f"bad mapping {spec!r}: expected FIELD=COLUMN, e.g. input=question"
                )
            pairs.append((target.strip(), source.strip()))
    mapping: dict[str, str] = {}
    for target, source in pairs:
        _check_target(target)
        if not source:
            raise MappingError(f"bad mapping for '{target}': the source column is empty")
        if target in mapping:
            raise MappingError(f"field '{target}' is mapped twice")
        mapping[target] = source
    return mapping


def _check_target(target: str) -> None:
    head, _, rest = target.partition(".")
    if head not in ITEM_FIELDS:
        raise MappingError(
            f"cannot map to '{target}': not an Item field (fields: {', '.join(ITEM_FIELDS)};"
            " use metadata.KEY for anything else)"
        )
    if rest and head != "metadata":
        raise MappingError(
            f"cannot map to '{target}': only metadata has sub-keys (e.g. metadata.topic)"
        )
    if rest and any(not part for part in rest.split(".")):
        raise MappingError(f"cannot map to '{target}': empty key in dotted path")


class MappedRow(NamedTuple):
    """One row after mapping, before validation (the caller decodes and assembles)."""

    fields: dict[str, Any]
    """Item field -> value, for the fields the row provides."""
    metadata_keys: list[tuple[tuple[str, ...], Any]]
    """``metadata.a.b=col`` targets: (("a", "b"), value), applied over ``metadata``."""
    extras: dict[str, Any]
    """Columns no field consumed: they go into ``metadata``."""


class RowMapper:
    """Applies a validated mapping to source rows; compiled once, applied to every row."""

    def __init__(self, mapping: Iterable[str] | Mapping[str, str] | None = None) -> None:
        self.mapping = parse_mapping(mapping)
        self._fields = [(t, s) for t, s in self.mapping.items() if "." not in t]
        self._meta_keys = [
            (tuple(t.split(".")[1:]), s) for t, s in self.mapping.items() if "." in t
        ]
        # Fields filled from a same-named column when the mapping does not target them.
        self._identity = [f for f in ITEM_FIELDS if f not in self.mapping]

    def apply(self, row: Mapping[str, Any]) -> MappedRow:
        """Split ``row`` into Item field values, metadata sub-keys and leftover columns.

        Raises ``MissingColumnError`` when a mapped source column is absent. The top-level
        column a mapped value came from is consumed, so it does not also land in metadata.
        """
        if not self.mapping:  # no mapping (inline data, most files): the same split, direct
            return MappedRow(
                {name: row[name] for name in ITEM_FIELDS if name in row},
                [],
                {key: value for key, value in row.items() if key not in _ITEM_FIELD_SET},
            )
        fields: dict[str, Any] = {}
        consumed: set[str] = set()
        for target, source in self._fields:
            fields[target] = _lookup(row, source, target, consumed)
        meta_sets: list[tuple[tuple[str, ...], Any]] = [
            (keys, _lookup(row, source, "metadata." + ".".join(keys), consumed))
            for keys, source in self._meta_keys
        ]
        for name in self._identity:
            if name in row and name not in consumed:
                fields[name] = row[name]
                consumed.add(name)
        extras = {k: v for k, v in row.items() if k not in consumed}
        return MappedRow(fields, meta_sets, extras)


def _lookup(row: Mapping[str, Any], source: str, target: str, consumed: set[str]) -> Any:
    if source in row:
        consumed.add(source)
        return row[source]
    parts = source.split(".")
    value: Any = row
    for part in parts:
        if not isinstance(value, Mapping) or part not in value:
            raise MissingColumnError(target, source, row.keys())
        value = value[part]
    consumed.add(parts[0])
    return value

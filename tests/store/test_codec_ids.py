"""Row ids: ``new_id`` and the writer's batched ``IdSource`` have the same shape and order."""

from __future__ import annotations

import re

from assay.store.codec import IdSource, new_id

HEX32 = re.compile(r"[0-9a-f]{32}")


def test_batched_ids_are_unique_well_formed_and_sort_after_earlier_ones() -> None:
    source = IdSource(size=4)  # a new draw every 4 ids
    earlier = new_id()
    ids = [source() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert all(HEX32.fullmatch(i) for i in ids)
    assert all(i[:16] >= earlier[:16] for i in ids)  # the time prefix never goes back
    prefixes = [i[:16] for i in ids]
    assert prefixes == sorted(prefixes)
    assert len(set(prefixes)) > 1  # each draw reads the clock again
    assert new_id() > ids[-1][:16]

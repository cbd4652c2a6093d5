"""Which observations get scored: a ratio, random or decided by the observation id.

Why the id-based form hashes like Mastra (first 6 bytes of ``sha256(id)`` read big-endian,
divided by 2**48): the same observation is sampled (or not) in every process, on every
retry and by every monitor at the same rate, so a retried request never flips from
"not sampled" to "scored", and two monitors at rates 0.1 and 0.2 score nested sets.
"""

from __future__ import annotations

import hashlib
import random

_SCALE = float(1 << 48)


def id_fraction(observation_id: str) -> float:
    """A number in [0, 1) fixed by the id."""
    digest = hashlib.sha256(observation_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:6], "big") / _SCALE


def is_sampled(
    observation_id: str, rate: float, *, deterministic: bool, rng: random.Random | None = None
) -> bool:
    """Whether this observation is scored at ``rate`` (0 never, 1 always)."""
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    fraction = id_fraction(observation_id) if deterministic else (rng or random).random()
    return fraction < rate

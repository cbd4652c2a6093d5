"""Context recall's answers: the ground truth's claims, and whether the context passages
support each one.

Kept apart from ``context_recall`` so the scorer module is its declaration only.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from assay.scorers._lib.verdicts import TRIMMED_LOWERED


class Claims(BaseModel):
    claims: list[str] = Field(description="Atomic, self-contained claims of the reference answer.")


class AttributionVerdict(BaseModel):
    verdict: Annotated[Literal["yes", "no"], TRIMMED_LOWERED] = Field(
        description='"yes" if the passages support the claim, else "no".'
    )
    reason: str = Field(description="One sentence explaining the verdict.")


class AttributionVerdicts(BaseModel):
    verdicts: list[AttributionVerdict] = Field(description="One verdict per claim, in order.")

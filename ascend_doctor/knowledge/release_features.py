"""What each vllm-ascend release does by itself (the `serve/release-features` table): a check that would demand a
flag asks whether the installed release already does the work."""

from __future__ import annotations

from datetime import date
from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import SpecifierSet, try_parse_version


class ReleaseFeature(Model, extra="forbid"):
    id: str
    vllm_ascend: list[str] = Field(min_length=1, description="release ranges; the feature holds in any of them")
    says: str
    source: list[str] = Field(min_length=1)


class ReleaseFeatures(Model, extra="forbid"):
    schema_version: int
    updated: date
    feature: list[ReleaseFeature] = Field(min_length=1)

    def row(self, feature_id: str) -> ReleaseFeature:
        return next(f for f in self.feature if f.id == feature_id)

    def has(self, feature_id: str, version: str) -> Optional[bool]:
        """Whether vllm-ascend `version` has the feature; None when the version cannot be compared."""
        v = try_parse_version(version)
        if v is None:
            return None
        return any(SpecifierSet(spec).contains(v) for spec in self.row(feature_id).vllm_ascend)

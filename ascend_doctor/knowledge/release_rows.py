"""Tables whose rows each hold the releases they were read from (`releases`: serve/flashcomm-vl,
serve/quant-schemes): their common header and the one lookup of a release's row."""

from __future__ import annotations

from datetime import date
from typing import Any, Optional

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import parse_version


class ReleaseRowsTable(Model):
    """A table of `[[release]]` rows, each with the `releases` it holds in (the subclass types `release`)."""

    schema_version: int
    updated: date

    def row_of(self, version: str) -> Optional[Any]:
        """The row that holds `version` exactly (a release the table has not read has none)."""
        v = parse_version(version)
        return next((r for r in getattr(self, "release") if any(parse_version(x) == v for x in r.releases)), None)

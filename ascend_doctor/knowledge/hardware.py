"""Which vllm-ascend hardware family an NPU is, from the chip name npu-smi prints.

vllm-ascend documents rules per family (A2 = Atlas 800I/800T A2, "910B…"; A3 = Atlas 800I/800T A3, which npu-smi
names "Ascend910"; 310P = Atlas 300I Duo, "310P3"; A5 = Ascend 950). Names seen in the captures under tests/data and
../shared/corpus: 910B1-910B4, 910B2C, Ascend910, 310P3, and 910A. The first-generation Ascend 910 (Atlas 800
training servers: 910A, 910ProA/910ProB, 910PremiumA, as in vllm-ascend#13540) is the family "910": vllm-ascend does
not support it, and the matrix says so as a rule (HW107), so the doctor can name it instead of shrugging. A bare
"910B", with no model digit, is that generation too: torch_npu's SocVersion numbers it 104 (Ascend910PremiumA 100 …
Ascend910B 104; the A2 chips are Ascend910B1-Ascend910B4_1, 220-225), and vllm-ascend accepts 220-225, 250-255,
200-205 and 260 only (vllm_ascend/utils.py, 0.20.2rc1: `Can not support soc_version: {soc_version}`). vllm-ascend#10206
shows npu-smi naming such a 32 GB card "910B", with get_soc_version() 104.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Dict, List, Optional

from ascend_doctor.core.model import Model

_FAMILIES = (
    (re.compile(r"^310P", re.IGNORECASE), "310P"),
    (re.compile(r"^(Ascend)?910B$", re.IGNORECASE), "910"),  # soc 104: the first generation's 910B, not an A2 chip
    (re.compile(r"^910B", re.IGNORECASE), "A2"),
    (re.compile(r"^(Ascend)?910(A|Pro|Premium)", re.IGNORECASE), "910"),
    (re.compile(r"^(Ascend910|910_93|910C)", re.IGNORECASE), "A3"),
    (re.compile(r"^(Ascend)?950", re.IGNORECASE), "A5"),
)


# A chip whose HBM is more than this share in use is held by another job: vLLM's default --gpu-memory-utilization
# 0.9 cannot be met on it (NPU103 fails it; `plan` leaves it out)
BUSY_HBM_FRACTION = 0.5


def family_of_chip(name: str) -> Optional[str]:
    """'A2' for '910B3', 'A3' for 'Ascend910', '310P' for '310P3', 'A5' for '950PR', '910' for '910A',
    '910PremiumA' and a bare '910B' (first generation); None when unknown."""
    n = (name or "").strip().replace(" ", "")
    for pattern, family in _FAMILIES:
        if pattern.match(n):
            return family
    return None


def families(smi: Any) -> Optional[Dict[str, List[str]]]:
    """family -> chip names on this host from the `npu_smi` fact ('?' for chips of no known family); None when
    npu-smi gave no table (the family cannot be told)."""
    if smi is None or not getattr(smi, "usable", False) or smi.info is None or not smi.info.chips:
        return None
    out: Dict[str, List[str]] = {}
    for chip in smi.info.chips:
        out.setdefault(family_of_chip(chip.name) or "?", []).append(chip.name)
    return out


class KernelLayout(Model, extra="forbid"):
    """The `deploy/kernels` table: each family's kernel directory, and the CANN from which a missing one proves
    nothing."""

    schema_version: int
    updated: date
    kernel_dirs: dict[str, str]
    static_kernels_from: str
    source: list[str]


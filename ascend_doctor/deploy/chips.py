"""The chip table (the `deploy/chips` table): memory per vLLM rank, the total torch_npu reports, dtypes.

Why `visible`: --gpu-memory-utilization multiplies what torch_npu reports as the device total, which is the HBM less
what the driver and firmware keep (a 64 GB 910B shows 60.94–60.97 GiB in OOM messages). Where no source printed
that figure for a chip, it is npu-smi's total less the HBM npu-smi shows in use on an idle chip — an estimate, and
the plan says so.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T

# Where neither the visible total nor the idle use is known (310P): the largest idle reserve seen on any chip.
DEFAULT_RESERVE_MIB = 4175


class Chip(Model, extra="forbid"):
    id: str
    family: str = Field(description="A2, A3 or 310P (vllm-ascend's platform families)")
    aliases: list[str] = Field(default_factory=list)
    memory_mib: int = Field(gt=0, description="per vLLM rank (per die on A3), as npu-smi prints it")
    idle_used_mib: Optional[int] = Field(None, ge=0, description="HBM npu-smi shows in use with no process")
    visible_mib: Optional[int] = Field(None, gt=0, description="the device total torch_npu reports, where sourced")
    bf16: bool = True
    box_ranks: Optional[int] = Field(None, gt=0, description="ranks in one server of the usual box (Atlas 800 A2: 8)")
    kv_halved_from: Optional[str] = Field(None, description="the first vllm-ascend release that gives the KV cache "
                                                            "only half of the memory left on this chip")
    kv_halved_where: str = Field("", description="where that release does it")
    sources: list[str] = Field(min_length=1)

    def kv_halved_by(self, vllm_ascend: Optional[str]) -> str:
        """Where that vllm-ascend release halves the KV budget on this chip, or "" (no such release, or none)."""
        from ascend_doctor.text.versions import parse_version, try_parse_version

        v = try_parse_version(vllm_ascend)
        if not self.kv_halved_from or v is None:
            return ""
        return self.kv_halved_where if v >= parse_version(self.kv_halved_from) else ""

    def with_total(self, total_mib: Optional[int]) -> "Chip":
        """This chip as npu-smi shows it on a host, when its memory differs from the table's: Atlas 300I Duo cards
        come with 44,280 and 47,304 MB dies (vllm-ascend#3316 logs `total memory: 49602220032` on one), and a die
        keeps the table's reserve (memory less what torch_npu reports)."""
        if not total_mib or total_mib == self.memory_mib:
            return self
        visible = total_mib - (self.memory_mib - self.visible_mib) if self.visible_mib else None
        return self.model_copy(update={"memory_mib": total_mib, "visible_mib": visible if visible and visible > 0
                                       else None, "sources": self.sources + [f"npu-smi on this host: {total_mib} MB"]})

    def visible(self) -> tuple[int, str, bool]:
        """(bytes --gpu-memory-utilization multiplies, how that figure was obtained, whether it is an estimate)."""
        if self.visible_mib:
            return (self.visible_mib * 2**20, T("{mib} MiB as torch_npu reports it (sources: chips.toml)",
                                                mib=self.visible_mib), False)
        if self.idle_used_mib is not None:
            how = T("{total} MiB less the {reserve} MiB npu-smi shows in use on an idle chip; no source prints this "
                    "chip's total", total=self.memory_mib, reserve=self.idle_used_mib)
        else:
            how = T("{total} MiB less {reserve} MiB, the largest idle reserve seen on any chip; no source prints this "
                    "chip's total", total=self.memory_mib, reserve=DEFAULT_RESERVE_MIB)
        reserve = self.idle_used_mib if self.idle_used_mib is not None else DEFAULT_RESERVE_MIB
        return (self.memory_mib - reserve) * 2**20, how, True


class ChipTable(Model, extra="forbid"):
    updated: str
    chip: list[Chip]


def find_chip(name: str, chips: list[Chip]) -> Optional[Chip]:
    """The chip named `name` (its id or an alias as npu-smi prints it), case-insensitive."""
    want = name.strip().lower()
    for c in chips:
        if want == c.id.lower() or want in (a.lower() for a in c.aliases):
            return c
    return None

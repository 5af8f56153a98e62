"""Which chips the installed operator kernels cover: the SoC directories under
`$ASCEND_OPP_PATH/built-in/op_impl/ai_core/tbe/kernel/config/`.

Every aclnn call first reads `<that directory>/<soc>/binary_info_config.json` (from CANN 8.5 one level deeper, per
ops package); when the chip's directory is not there the first operator fails with `EZ1001 … Get path and read
binary_info_config.json failed, please check if the opp_kernel package is installed!` (CANN's opbase,
indv_collecter.cpp NnopbaseCollecterGetDynamicKernelPathAndReadConfig; vllm-ascend#237, #1440). Which directory
each chip family needs is data: the `deploy/kernels` table. The toolkit alone does not bring the
kernels: they are the chip's own package (Ascend-cann-kernels-910b…), so a host can have a healthy-looking CANN and
no kernels for its NPU.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.probes import probe
from ascend_doctor.seam.host import NOT_FOUND, REPLAY_MISS_NOTE

KERNEL_CONFIG = "built-in/op_impl/ai_core/tbe/kernel/config"


class OppKernelsFact(Model):
    opp_path: str = Field(description="$ASCEND_OPP_PATH, else <active CANN>/opp")
    config_dir: str
    socs: Optional[list[str]] = Field(None, description="SoC directories present (None: could not be listed)")
    missing: bool = Field(False, description="The config directory itself does not exist")
    error: str = Field("", description="Why the directory could not be listed (permission, not recorded, ...)")


@probe("opp_kernels", reads=("cann",))
def opp_kernels_probe(host, ctx) -> OppKernelsFact:
    """The SoC kernel directories the active CANN ships for each chip family."""
    cann = ctx.fact("cann")
    if not cann.found or cann.active is None:
        raise FactUnavailable("opp_kernels", T("no CANN install was found, so there is no operator directory to read"))
    opp = (host.env().get("ASCEND_OPP_PATH") or f"{cann.active.root}/opp").rstrip("/")
    fact = OppKernelsFact(opp_path=opp, config_dir=f"{opp}/{KERNEL_CONFIG}")
    res = host.list_dir(fact.config_dir)
    if res.ok:
        fact.socs = sorted(res.entries or [])
    elif res.error == NOT_FOUND and REPLAY_MISS_NOTE not in (res.error_message or ""):
        fact.socs, fact.missing = [], True
    else:
        fact.error = res.error_message or str(res.error)
    return fact

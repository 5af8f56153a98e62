"""What the checks that judge the NPU driver against CANN share (CANN106, DRV104): the driver version as the `stack`
fact decided it (driver version.info, else npu-smi), with its evidence. A family helper: the registry loads it
first, so a check imports it with `from ._driver import …`."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.plugin import ev


def driver_version_of(ctx) -> tuple:
    """(driver version, evidence) as the `stack` fact decided it (driver version.info, else npu-smi); (None,
    evidence) when neither."""
    st = ctx.fact("stack")
    if st.stack.driver:
        return st.stack.driver, ev(st.driver_source or "driver", st.driver_excerpt or st.stack.driver)
    return None, ev("driver", T("version.info: not found\nnpu-smi: no version"))

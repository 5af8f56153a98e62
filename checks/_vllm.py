"""What the VLLM checks (checks/vllm.py) share: a matrix row as evidence, how to install a vLLM release for
vllm-ascend, and the parts of VLLM102's fix (the pip spec of a pin, the cause of a replaced torch). A family helper:
the registry loads it first, so a check imports it with `from ._vllm import …`."""

from __future__ import annotations

from ascend_doctor.i18n import T
from ascend_doctor.knowledge.matrix import STACK_FIELDS
from ascend_doctor.plugin import ev, if_shown
from ascend_doctor.text.versions import try_parse_version

# The distributions a vllm-ascend release row pins a build of, and the row field that lists them.
ROW_FIELD = {dist: field for dist, field in STACK_FIELDS if dist in ("torch", "torch-npu", "triton-ascend")}


def install_vllm(v: str):
    """How to install vLLM release `v` for vllm-ascend: from source with no device, as its installation guide does."""
    return T("`git clone --depth 1 --branch v{v} https://github.com/vllm-project/vllm && cd vllm && "
             "VLLM_TARGET_DEVICE=empty pip install -v .` (vLLM without CUDA, as vllm-ascend's installation guide "
             "does), then reinstall vllm-ascend's pins and run `python -m pip check`", v=v)


def row_sources(row) -> str:
    return "; ".join(row.source)


def release_evidence(row) -> object:
    """One evidence line with what the matrix row of a vllm-ascend release says, and its source."""
    parts = [f"vLLM {' | '.join(row.vllm)}", f"Python {row.python}", f"CANN {' | '.join(row.cann)}"]
    for label, field in (("torch", "torch"), ("torch_npu", "torch_npu"), ("triton-ascend", "triton_ascend")):
        vals = getattr(row, field)
        if vals:
            parts.append(f"{label} {' | '.join(vals)}")
    if row.transformers:
        parts.append(f"transformers {row.transformers}")
    text = "; ".join(parts) + f" [source: {row_sources(row)}]"
    for field, why in row.conflict.items():
        text += f"\nCONFLICT {field}: {why}"
    return ev(f"matrix: vllm-ascend {row.version} row", text)


def torch_clobbered(m, py, items) -> str:
    """The cause of a torch mismatch when the installed torch is exactly what the installed vLLM pins: installing
    (or upgrading) vLLM after vllm-ascend replaced vllm-ascend's torch. "" when that is not what the facts show."""
    torch = next((i for i in items if i.component == "torch" and i.status == "mismatch"), None)
    vllm = py.vllm_dist()
    if torch is None or vllm is None or not torch.installed:
        return ""
    pin = m.vllm_torch_pin(vllm.version)
    tv, pv = try_parse_version(torch.installed), try_parse_version(pin) if pin else None
    if tv is None or pv is None or tv.main_key != pv.main_key:
        return ""
    return (T("cause: vLLM {version}'s own package pins torch=={pin} (its PyPI Requires-Dist), so installing vLLM "
              "after vllm-ascend replaced the torch=={expected} vllm-ascend needs; install vLLM built with "
              "VLLM_TARGET_DEVICE=empty (or with --no-deps), then reinstall vllm-ascend's pins",
              version=vllm.version, pin=pin, expected=torch.expected[0]))


def pip_spec(item) -> str:
    exp = item.expected[0]
    return f"'{item.component}{exp}'" if item.component == "transformers" else f"{item.component}=={exp}"


# The distributions VLLM103's evidence shows, beside the ones its advisories name.
JUDGED_DISTS = ("vllm-ascend", "vllm", "torch", "torch-npu", "triton-ascend", "transformers")


def stack_versions(ctx, wanted=()) -> tuple[dict, list]:
    """(name -> version, parts not seen) of the installed stack, as advisories and known issues are matched: the
    distributions in `wanted` and JUDGED_DISTS (their first listing: a paste may list 20,000), Python, the CPU
    architecture (`machine`), CANN, the NPU driver and firmware (ascend_doctor.facts.stack decides the driver), and
    NNAL when `wanted` names it."""
    py = ctx.fact("python")
    versions: dict = {}
    for name in sorted((set(wanted) | set(JUDGED_DISTS)) - {"cann", "nnal", "driver", "firmware", "python", "machine"}):
        d = py.listed(name)
        if d is not None:
            versions[name] = d.version
    unseen = [T("packages the list does not name")] if py.listed_only else []
    python = if_shown(lambda: py.version)
    if python:
        versions["python"] = python
    else:
        unseen.append("python")
    machine = if_shown(lambda: py.machine)  # unknown on a paste without collect_env: machine-scoped rows then
    if machine:                             # match no machine, as on a host whose arch could not be read
        versions["machine"] = machine
    else:
        unseen.append("machine")
    c = ctx.try_fact("cann")
    if c is not None and c.found and c.version:
        versions["cann"] = c.version
    if "nnal" in wanted:  # the NNAL (ATB) beside the toolkit: a row about a torch_npu build needs the ATB it links
        nnal = if_shown(lambda: c.nnal.version if c is not None and c.nnal.found else None)
        if nnal:
            versions["nnal"] = nnal
        else:
            unseen.append("NNAL")
    st = ctx.fact("stack").stack
    if st.driver:
        versions["driver"] = st.driver
    if st.firmware:
        versions["firmware"] = st.firmware
    return versions, unseen


def installed_release(ctx) -> tuple:
    """(python, the vllm-ascend distribution, its matrix row, None), or (.., .., None, skip) when vllm-ascend is not
    installed or its release is not in the matrix (VLLM101 says which): the start of the checks that judge the
    installed release's row (VLLM102, DRV104)."""
    py = ctx.fact("python")
    va = py.dist("vllm-ascend")
    if va is None:
        return py, None, None, ctx.skip(T("vllm-ascend is not installed"))
    row = ctx.matrix.vllm_ascend_release(va.version)
    if row is None:
        return py, va, None, ctx.skip(T("vllm-ascend {version} is not in the matrix (see VLLM101)",
                                        version=va.version))
    return py, va, row, None

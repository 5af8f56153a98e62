"""The `serve/images` table: what each official vllm-ascend image holds, read from the recipe that builds it — the
release's own Dockerfiles (`Dockerfile`, `Dockerfile.a3`, `Dockerfile.310p`, `.openEuler` …) and the requirements
its `pip install -e /vllm-workspace/vllm-ascend/` step installs. `ascend_doctor.sync.images` reads them from each
sdist; `matrix sync --vllm-ascend SDIST` proposes the rows.

Why: an issue that names only the image (`quay.io/ascend/vllm-ascend:v0.10.2rc1`) says nothing of its packages, so
every rule about a package — Qwen3-Next needs triton-ascend (REL-B11-001), a 300I Duo must not carry triton
(HW-310P-009) — could only say "not known". The recipe is the release's own statement of what the image holds.

What a row claims, and what it does not:
- `cann` and `python` of the base image the recipe starts FROM, and the vLLM tag it clones;
- `installs`: name -> requirement of every package the recipe installs by name (its own `pip install` lines, a
  wheel by its file name, and the release's requirements.txt through the editable install) — a `==` pin is a
  version, any other requirement only says the package is there;
- `removes` / `removes_x86_64`: packages it uninstalls after their last install (on every machine / only on x86_64);
- `opaque`: the recipe runs a script the table does not read (`bash install_daily_deps.sh`), which may install more:
  then no package is claimed absent.
A package the recipe never installs is claimed absent only for the Ascend-only packages (`ASCEND_ONLY`): nothing but
the recipe or vllm-ascend's own requirements installs them (no other distribution requires them, and the CANN base
image is CANN, not Python packages). Everything else the recipe did not name stays not known.
"""

from __future__ import annotations

from datetime import date
from typing import Dict, List, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.versions import parse_version, try_parse_version

# Distributions only the recipe or vllm-ascend's requirements put in an image: absent when the recipe names none.
ASCEND_ONLY = ("torch-npu", "triton-ascend", "mindie-turbo", "mooncake-transfer-engine",
               "mooncake-transfer-engine-npu")
# Dockerfile name suffix -> the image tag suffix and the chip family it is built for (HW105, the quick start)
VARIANTS = {"": ("", "A2"), "a3": ("-a3", "A3"), "310p": ("-310p", "310P"), "a5": ("-a5", "A5")}


class ImageRecipe(Model, extra="forbid"):
    id: str = Field(description="the image tag: v0.10.2rc1, v0.18.0-310p, v0.13.0-a3-openeuler")
    release: str
    dockerfile: str = Field(description="the recipe's file in the release")
    family: str = Field(description="the chip family the image is built for: A2, A3, 310P, A5")
    os: str = Field("ubuntu", description="ubuntu or openeuler")
    cann: Optional[str] = Field(None, description="the CANN of the base image (FROM quay.io/ascend/cann:X-…)")
    python: Optional[str] = Field(None, description="the base image's Python (py3.11)")
    vllm: Optional[str] = Field(None, description="the vLLM tag the recipe clones (VLLM_TAG)")
    installs: Dict[str, str] = Field(default_factory=dict, description="normalised name -> requirement ('' none, "
                                                                        "'wheel' a wheel file)")
    removes: List[str] = Field(default_factory=list, description="uninstalled after their last install, everywhere")
    removes_x86_64: List[str] = Field(default_factory=list, description="the same, on x86_64 only")
    opaque: bool = False
    source: str = ""

    def pinned(self, machine: Optional[str]) -> Dict[str, str]:
        """name -> version of the packages the recipe pins with `==` and keeps on `machine`."""
        gone = set(self.absent(machine))
        out = {}
        for name, req in self.installs.items():
            if name not in gone and req.startswith("==") and "*" not in req and "," not in req \
                    and try_parse_version(req[2:]) is not None:
                out[name] = req[2:]
        return out

    def absent(self, machine: Optional[str]) -> List[str]:
        """The packages the image does not hold on `machine` (None: not known), as far as the recipe says (see the
        module docstring): those it removes last, and the Ascend-only ones it never installs."""
        gone = set(self.removes) | (set(self.removes_x86_64) if machine == "x86_64" else set())
        if not self.opaque:
            gone |= {n for n in ASCEND_ONLY if n not in self.installs}
        return sorted(gone)


class ImageTable(Model, extra="forbid"):
    schema_version: int
    updated: date
    image: List[ImageRecipe] = Field(default_factory=list)

    def find(self, release: str, family: Optional[str], os: str = "ubuntu") -> Optional[ImageRecipe]:
        """The recipe of release `release`'s image for `family` (the untagged A2 build when None) and `os`."""
        v = try_parse_version(release)
        fam = family or "A2"
        for r in self.image:
            if v is not None and parse_version(r.release) == v and r.family == fam and r.os == os:
                return r
        return None


def image_id(release: str, variant: str, os: str) -> str:
    suffix = VARIANTS[variant][0]
    return f"v{release}{suffix}" + ("-openeuler" if os == "openeuler" else "")

"""The `pip install` commands a paste shows, and what it says of the host's CPU architecture (TRIAGE107).

Every vllm-ascend installation guide (0.7.1rc1's to 0.30.0rc2's, docs/source/installation.md, later
docs/source/getting_started/installation/install_vllm_ascend.inc.md) installs on x86 with the PyTorch CPU index,
because PyPI's x86_64 torch is the CUDA build: `pip install vllm-ascend==X` without it pulls CUDA torch and its
nvidia-* wheels instead of the CPU build torch-npu is built against (vllm-project/vllm-ascend#1411, where the
maintainer's answer to a failed x86 install was that index).

Only the names are read, never run or echoed: the check reports the distributions from its own list below.
"""

from __future__ import annotations

import re
from typing import Optional

from packaging.utils import canonicalize_name

# The distributions whose install resolves torch (vLLM and vllm-ascend require it), by their canonical name.
TORCH_PULLERS = ("vllm", "vllm-ascend", "torch", "torch-npu")
_PIP = re.compile(r"(?:^|[\s;&|(`])(?:uv\s+)?(?:python3?(?:\.\d+)?\s+-m\s+)?pip3?(?:\.\d+)?\s+install\s(.{1,2000})")
_REQUIREMENT = re.compile(r"^([A-Za-z][A-Za-z0-9._-]{0,40})(?:\[[^\]]{0,80}\])?(?:[=<>~!]=?[^\s;]{0,80})?$")
# the PyTorch CPU wheels: its own index, or a mirror of it (`mirrors.aliyun.com/pytorch-wheels/cpu`)
CPU_INDEX = re.compile(r"download\.pytorch\.org/whl/cpu|pytorch-wheels/cpu|/whl/cpu\b")
_X86 = re.compile(r"\b(x86_64|x86-64|amd64|x86)\b", re.I)
_ARM = re.compile(r"\b(aarch64|arm64|kunpeng)\b|鲲鹏", re.I)


def pip_installs(lines: list[tuple[int, str]]) -> list[tuple[int, list[str], bool]]:
    """(line number, the TORCH_PULLERS it installs, whether the line names a CPU index) for each `pip install`
    line that installs one of them; `-r file`, `-e .` and other paths name nothing this reads."""
    out = []
    for no, line in lines:
        m = _PIP.search(line) if "install" in line else None
        if m is None:
            continue
        names = []
        for word in m.group(1).split():
            word = word.strip("\"'`")
            if word.startswith("-") or "/" in word:
                continue
            r = _REQUIREMENT.match(word)
            if r and canonicalize_name(r.group(1)) in TORCH_PULLERS and "+cpu" not in word:
                names.append(canonicalize_name(r.group(1)))
        if names:
            out.append((no, sorted(set(names), key=TORCH_PULLERS.index), bool(CPU_INDEX.search(line))))
    return out


def stated_arch(lines: list[tuple[int, str]], machine: Optional[str]) -> tuple[Optional[str], Optional[int]]:
    """("x86_64" | "aarch64" | "both" | None, the line that says so): collect_env's OS line first, else the words
    the paste uses for the host (`x86_64 host`, `鲲鹏`); words for both leave it open ("both")."""
    if machine:
        return ("x86_64" if machine == "x86_64" else "aarch64"), None
    x86 = next((no for no, t in lines if _X86.search(t)), None)
    arm = next((no for no, t in lines if _ARM.search(t)), None)
    if x86 is not None and arm is not None:
        return "both", x86
    if x86 is not None:
        return "x86_64", x86
    return ("aarch64", arm) if arm is not None else (None, None)

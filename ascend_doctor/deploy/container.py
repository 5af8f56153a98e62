"""The container an Ascend vLLM server runs in: the device nodes and driver mounts of vllm-ascend's installation guide
(docs/source/installation.md, ../shared/facts/matrix-facts.md §6.3). One place for them: the container checks (CTR1xx)
name the missing ones with these flags, and `plan` writes the whole `docker run`."""

from __future__ import annotations

import re
import shlex
from typing import Optional

CORE_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")
DEVICE_FLAGS = {n: f"--device /dev/{n}" for n in CORE_NODES + ("ascend_manager", "user_config")}
DAVINCI_FLAG = ("--device /dev/davinci0 (one per NPU: /dev/davinci0 ... /dev/davinci7 for all cards of an "
                "Atlas 800 A2, ... /dev/davinci15 on an A3)")
MOUNTS = {
    "dcmi": "/usr/local/dcmi",
    "npu_smi": "/usr/local/bin/npu-smi",
    "driver_lib64": "/usr/local/Ascend/driver/lib64/",
    "driver_version_info": "/usr/local/Ascend/driver/version.info",
    "ascend_install_info": "/etc/ascend_install.info",
}
MOUNT_FLAGS = {k: f"-v {p}:{p}" for k, p in MOUNTS.items()}
HCCN_TOOL = "/usr/local/Ascend/driver/tools/hccn_tool"
HCCN_FLAG = f"-v {HCCN_TOOL}:{HCCN_TOOL}"
SHM_SIZE = "16g"  # HOST104: workers exchange tensors through /dev/shm; the guide's 1g is its floor
# Atlas 350 (950, family A5): HCCL reads topology files from the driver directory and the root info file, so the
# whole driver directory is mounted (vllm-ascend#11052 maintainer; vllm-project/recipes PR #907). CTR105 checks it.
DRIVER_DIR = "/usr/local/Ascend/driver"
HCCL_ROOTINFO = "/etc/hccl_rootinfo.json"
WHOLE_DRIVER_FLAGS = (f"-v {DRIVER_DIR}:{DRIVER_DIR}", f"-v {HCCL_ROOTINFO}:{HCCL_ROOTINFO}")


def docker_run(image: str, devices, env: dict[str, str], model_path: Optional[str], network: bool,
               whole_driver: bool = False) -> list[str]:
    """`docker run` for `devices` NPUs (a count: /dev/davinci0..N-1; or the device ids to mount, the free ones of a
    host), the driver mounted from the host, the model directory mounted where `vllm serve` is told to read it;
    `network`: host networking and hccn_tool (HCCL across NPUs); `whole_driver`: the whole driver directory and HCCL's
    root info (Atlas 350 with HCCL, see WHOLE_DRIVER_FLAGS)."""
    argv = ["docker", "run", "--rm", "--name", "vllm-ascend", f"--shm-size={SHM_SIZE}"]
    for i in (range(devices) if isinstance(devices, int) else devices):
        argv += ["--device", f"/dev/davinci{i}"]
    for node in CORE_NODES:
        argv += ["--device", f"/dev/{node}"]
    for path in MOUNTS.values():
        if whole_driver and path.startswith(DRIVER_DIR + "/"):
            continue  # inside the whole directory mounted below
        argv += ["-v", f"{path}:{path}"]
    if whole_driver:
        for flag in WHOLE_DRIVER_FLAGS:
            argv += flag.split(" ", 1)
    if network:
        argv += ["--net=host"] + ([] if whole_driver else ["-v", f"{HCCN_TOOL}:{HCCN_TOOL}"])
    else:
        argv += ["-p", "8000:8000"]
    argv += ["-v", "/root/.cache:/root/.cache"]
    if model_path and model_path.startswith("/"):
        argv += ["-v", f"{model_path}:{model_path}:ro"]
    for k, v in env.items():
        argv += ["-e", f"{k}={v}"]
    return argv + [image]


def quote(word: str) -> str:
    """A shell word: quoted, except a `$VAR` (or `$VAR:port`, `K=$VAR`) the user exports on each node of a
    multi-node plan, which must expand; nothing else the doctor prints expands."""
    if re.fullmatch(r"([A-Z_]{1,32}=)?\$[A-Z_]{1,32}(:[0-9]{1,5})?", word):
        return f'"{word}"'
    return shlex.quote(word)


def shell(argv: list[str]) -> str:
    return " ".join(quote(w) for w in argv)

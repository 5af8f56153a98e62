"""Builds the example host snapshots in examples/ from readable pieces.

    python examples/build_examples.py          # rewrite examples/*.snapshot.json
    python examples/build_examples.py --check  # exit 1 if a committed snapshot differs from what this script builds

The snapshots are hand-made, not recorded: every value below was written for the example it belongs to, in the
formats real Atlas machines print (98-column `npu-smi info`, driver/CANN version files, hccn_tool answers). Each
example's `description` names the situation and the exact non-passing findings it must produce; tests/test_examples.py
replays every example and asserts exactly those. See examples/README.md.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Optional

from ascend_doctor.probes.opp import KERNEL_CONFIG

HERE = Path(__file__).resolve().parent
GIB = 1024 ** 3
ASCEND = "/usr/local/Ascend"
PY = "/opt/vllm/bin/python3"
COLLECTED = "2026-11-20T09:30:00Z"


# ------------------------------------------------------------------------------------------------ npu-smi rendering
def _row(cells: list[str], widths=(27, 15, 52)) -> str:
    return "|" + "|".join(f" {c:<{w - 1}}" for c, w in zip(cells, widths)) + "|"


def npu_smi_info(version: str, chips: list[dict], procs: list[dict], a3: bool = False) -> str:
    """`npu-smi info` in the 98-column layout of driver 23.x-25.x (A2: `Chip`, A3: `Chip  Phy-ID`)."""
    bar = "+" + "-" * 96 + "+"
    sep = "+" + "=" * 27 + "+" + "=" * 15 + "+" + "=" * 52 + "+"
    thin = "+" + "-" * 27 + "+" + "-" * 15 + "+" + "-" * 52 + "+"
    out = [bar, f"| {'npu-smi ' + version:<32} {'Version: ' + version:<62}|", thin,
           _row(["NPU   Name", "Health", "Power(W)    Temp(C)           Hugepages-Usage(page)"]),
           _row(["Chip  Phy-ID" if a3 else "Chip", "Bus-Id", "AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)"]), sep]
    for i, c in enumerate(chips):
        second_of_pair = a3 and c["chip"] == 1
        power = "-" if second_of_pair else f"{c['power']:.1f}"
        out.append(_row([f"{c['npu']:<6}{c['name']}", c.get("health", "OK"),
                         f"{power:<12}{c['temp']:<18}0    / 0"]))
        chip_col = f"{c['chip']:<6}{c['phy']}" if a3 else f"{c['chip']}"
        hbm = f"{c['hbm_used']} / {c['hbm_total']}"
        out.append(_row([chip_col, c["bus"], f"{c.get('aicore', 0):<12}0    / 0          {hbm}"]))
        last_chip_of_npu = not a3 or c["chip"] == 1 or i == len(chips) - 1
        out.append(sep if last_chip_of_npu else bar)
    out.append(thin)
    out.append("| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |")
    out.append(sep)
    npus = sorted({(c["npu"], c["chip"]) for c in chips})
    for npu, chip in npus:
        mine = [p for p in procs if p["npu"] == npu and p.get("chip", 0) == chip]
        if not mine:
            if chip == 0:
                out.append(f"| {'No running processes found in NPU ' + str(npu):<95}|")
                out.append(sep)
            continue
        for p in mine:
            out.append(f"| {npu:<8}{chip:<18}| {p['pid']:<14}| {p['name']:<25}| {p['mem']:<24}|")
            out.append(sep)
    return "\n".join(out) + "\n"


def health(status: str = "OK", code: str = "NA", info: str = "NA") -> str:
    return (f"\tHealth Status                  : {status}\n\tError Code                     : {code}\n"
            f"\tError Information              : {info}\n")


# ------------------------------------------------------------------------------------------------ version files
def driver_version_info(version: str, inner: str, fw_range: str) -> str:
    return (f"Version={version}\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\nlog_version=1.0\n"
            f"prof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\nInnerversion={inner}\n"
            f"compatible_version=[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23],[V100R001C25]\n"
            f"compatible_version_fw={fw_range}\npackage_version={version}\n")


def firmware_version_info(version: str, driver: str) -> str:
    return (f"Version={version}\nfirmware_version=1.0\npackage_version={driver}\n"
            f"compatible_version_drv=[24.1,24.1.],[25.0,25.0.],[25.2,25.2.],[25.5,25.5.]\n")


ASCEND_INSTALL_INFO = ("UserName=HwHiAiUser\nUserGroup=HwHiAiUser\nFirmware_Install_Type=full\n"
                       "Firmware_Install_Path_Param=/usr/local/Ascend\nDriver_Install_Type=full\n"
                       "Driver_Install_Path_Param=/usr/local/Ascend\nDriver_Install_For_All=no\n")


def version_cfg(internal: str, cann: str) -> str:
    lines = ["# version: 1.0"]
    for comp in ("runtime", "compiler", "hccl", "opp", "toolkit", "aoe", "ncs", "opp_kernel"):
        lines.append(f"{comp}_running_version=[{internal}:{cann}]")
        lines.append(f"{comp}_upgrade_version=[{internal}:{cann}]")
        lines.append(f"{comp}_installed_version=[{internal}:{cann}]")
    return "\n".join(lines) + "\n"


def toolkit_install_info(cann: str, inner: str, path: str, arch: str = "aarch64") -> str:
    return (f"package_name=Ascend-cann-toolkit\nversion={cann}\ninnerversion={inner}\n"
            f"compatible_version=[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23],[V100R001C25]\n"
            f"arch={arch}\nos=linux\npath={path}\n")


def atb_version_info(version: str, arch: str = "aarch64") -> str:
    return (f"    Ascend-cann-atb : {version}\n    Ascend-cann-atb Version : {version}.B080\n"
            f"    Platform : {arch}\n    branch : br_release_cann_{version}_20251230\n"
            f"    commit id : 7f3a9c01d2e4b5a6978c0d1e2f3a4b5c6d7e8f90\n")


# ------------------------------------------------------------------------------------------------ the host
def dist(name: str, version: str, *requires: str) -> dict:
    return {"name": name, "version": version, "requires": list(requires),
            "location": "/opt/vllm/lib/python3.11/site-packages"}


def python_env(dists: list[dict], version: str = "3.11.10") -> dict:
    short = "".join(version.split(".")[:2])
    return {"executable": PY, "version": version, "implementation": "CPython",
            "soabi": f"cpython-{short}-aarch64-linux-gnu", "abiflags": "", "pointer_bits": 64, "machine": "aarch64",
            "libc": "glibc", "libc_version": "2.35", "purelib": "/opt/vllm/lib/python3.11/site-packages",
            "platlib": "/opt/vllm/lib/python3.11/site-packages", "error": None, "error_message": "",
            "distributions": dists}


STACK_0_13 = [  # vllm-ascend v0.13.0 as its own files pin it (matrix: vllm-ascend.toml, v0.13.0)
    dist("vllm", "0.13.0+empty", "transformers>=4.56.0"),
    dist("vllm-ascend", "0.13.0", "torch==2.8.0", "torch-npu==2.8.0.post2", "triton-ascend==3.2.0",
         "transformers<5,>=4.57.4"),
    dist("torch", "2.8.0+cpu"),
    dist("torch-npu", "2.8.0.post2", "torch==2.8.0"),
    dist("triton-ascend", "3.2.0"),
    dist("transformers", "4.57.6"),
    dist("numpy", "1.26.4"),
    dist("pip", "24.3.1"),
]


def import_ok(count: int, torch: str, torch_npu: str) -> str:
    return ("ASCEND_DOCTOR_STAGE torch\nASCEND_DOCTOR_STAGE torch_npu\nASCEND_DOCTOR_STAGE device\n"
            "ASCEND_DOCTOR_STAGE done\nASCEND_DOCTOR_IMPORT " + json.dumps(
                {"stage": "done", "torch": torch, "torch_npu": torch_npu, "npu_available": True,
                 "device_count": count, "seconds": 6.214}) + "\n")


ASCEND_PLUGIN = {"name": "ascend", "value": "vllm_ascend:register", "dist": "vllm-ascend",
                 "returned": "vllm_ascend.platform.NPUPlatform"}


def platform_answer(**over) -> str:
    """What the platform probe prints when vLLM resolves vllm-ascend's NPUPlatform (keys of PlatformFact)."""
    out = {"plugins": [ASCEND_PLUGIN], "vllm_plugins_env": None, "vllm_target_device_env": None, "stage": "done",
           "platform_class": "vllm_ascend.platform.NPUPlatform", "device_type": "npu", "device_name": "npu",
           "worker_module": "vllm_ascend.worker.worker", "custom_ops_loaded": True, "seconds": 11.482}
    out.update(over)
    stages = ["entry_points", "platform", "worker", "custom_ops", "done"]
    if stages.index(out["stage"]) < stages.index("custom_ops"):
        out.pop("custom_ops_loaded")  # the probe stopped before it tried the compiled operators
    shown = stages[:stages.index(out["stage"]) + 1]
    return "".join(f"ASCEND_DOCTOR_STAGE {st}\n" for st in shown) + "ASCEND_DOCTOR_PLATFORM " + json.dumps(out) + "\n"


def a2_chips(n: int = 8, name: str = "910B3", health_of: Optional[dict] = None, hbm_used: int = 3386) -> list[dict]:
    buses = ["0000:C1:00.0", "0000:C2:00.0", "0000:81:00.0", "0000:82:00.0",
             "0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:42:00.0"]
    return [{"npu": i, "chip": 0, "phy": i, "name": name, "health": (health_of or {}).get(i, "OK"),
             "power": 96.4 + i, "temp": 38 + i, "bus": buses[i], "hbm_used": hbm_used, "hbm_total": 65536}
            for i in range(n)]


def cmd(argv: list[str], stdout: str = "", returncode: int = 0, stderr: str = "", error=None) -> dict:
    return {"argv": argv, "stdout": stdout, "stderr": stderr, "returncode": returncode, "error": error,
            "error_message": "", "truncated": False, "duration_s": 0.05}


def file(content: str) -> dict:
    return {"content": content, "error": None, "error_message": "", "truncated": False}


def hccn_answers(dev: int, ip: str, link: str = "UP", net_health: str = "Success") -> list[dict]:
    tool = f"{ASCEND}/driver/tools/hccn_tool"
    return [cmd([tool, "-i", str(dev), "-link", "-g"], f"link status: {link}\n"),
            cmd([tool, "-i", str(dev), "-ip", "-g"], f"ipaddr:{ip}\nnetmask:255.255.255.0\n"),
            cmd([tool, "-i", str(dev), "-net_health", "-g"], f"net health status: {net_health}\n")]


def hccn_conf(ips: dict[int, str]) -> str:
    out = []
    for dev, ip in ips.items():
        gw = ip.rsplit(".", 1)[0] + ".1"
        out += [f"address_{dev}={ip}", f"netmask_{dev}=255.255.255.0", f"netdetect_{dev}={gw}", f"gateway_{dev}={gw}"]
    return "\n".join(out) + "\nsend_arp_status=1\n"


def pcie(slots: list[str], width=16, max_width=16, speed="32.0 GT/s PCIe", max_speed="32.0 GT/s PCIe") -> dict:
    files = {}
    for s in slots:
        slot = s.lower()
        base = f"/sys/bus/pci/devices/{slot}"
        files.update({f"{base}/vendor": file("0x19e5\n"), f"{base}/device": file("0xd802\n"),
                      f"{base}/class": file("0x120000\n"), f"{base}/current_link_width": file(f"{width}\n"),
                      f"{base}/max_link_width": file(f"{max_width}\n"),
                      f"{base}/current_link_speed": file(f"{speed}\n"),
                      f"{base}/max_link_speed": file(f"{max_speed}\n")})
    return files


PROC_NET_TCP = (
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 21123 1 "
    "0000000000000000 100 0 0 10 0\n"
    "   1: 00000000:238C 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 30411 1 "
    "0000000000000000 100 0 0 10 0\n")


def healthy_a2() -> dict:
    """Atlas 800I A2, 8x 910B3 (64 GB HBM), bare metal, vllm-ascend 0.13.0 on vLLM 0.13.0, CANN 8.5.0, HDK 25.5.0."""
    chips = a2_chips()
    ips = {i: f"192.168.{100 + i}.11" for i in range(8)}
    cann_root = f"{ASCEND}/cann-8.5.0"
    lib_path = ":".join([f"{ASCEND}/cann/lib64", f"{ASCEND}/cann/lib64/plugin/opskernel",
                         f"{ASCEND}/cann/aarch64-linux/devlib", f"{ASCEND}/driver/lib64/driver",
                         f"{ASCEND}/driver/lib64/common", f"{ASCEND}/nnal/atb/latest/atb/cxx_abi_0/lib"])
    env = {
        "HOME": "/root", "PATH": "/opt/vllm/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LD_LIBRARY_PATH": lib_path,
        "ASCEND_HOME_PATH": f"{ASCEND}/cann", "ASCEND_TOOLKIT_HOME": f"{ASCEND}/cann",
        "ASCEND_OPP_PATH": f"{ASCEND}/cann/opp",
        "ATB_HOME_PATH": f"{ASCEND}/nnal/atb/latest/atb/cxx_abi_0",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
        "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",
        "HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "3600",
        "HF_HOME": "/data/hf", "HF_TOKEN": "<redacted>",
    }
    files = {
        "/proc/self/limits": file("Limit                     Soft Limit           Hard Limit           Units     \n"
                                  "Max open files            1048576              1048576              files     \n"),
        "/proc/meminfo": file("MemTotal:       1583989660 kB\nMemFree:        1198203312 kB\n"
                              "MemAvailable:   1502233100 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n"),
        "/proc/mounts": file("tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=134217728k 0 0\n"),
        "/etc/selinux/config": file("SELINUX=disabled\nSELINUXTYPE=targeted\n"),
        # sshd on 22 and node-exporter on 9100: nothing on HCCL's ports (HCCL106)
        "/proc/net/tcp": file(PROC_NET_TCP),
        "/etc/ascend_install.info": file(ASCEND_INSTALL_INFO),
        f"{ASCEND}/driver/version.info": file(driver_version_info("25.5.0", "V100R001C25SPC001B230",
                                                                  "[7.0.0,7.8.99]")),
        f"{ASCEND}/firmware/version.info": file(firmware_version_info("7.8.0.2.212", "25.5.0")),
        f"{cann_root}/version.cfg": file(version_cfg("7.8.0.1.212", "8.5.0")),
        f"{cann_root}/aarch64-linux/ascend_toolkit_install.info": file(
            toolkit_install_info("8.5.0", "V100R001C25SPC001B212", f"{cann_root}/aarch64-linux")),
        f"{ASCEND}/nnal/atb/latest/version.info": file(atb_version_info("8.5.0")),
        "/etc/hccn.conf": file(hccn_conf(ips)),
        "/usr/local/bin/npu-smi": file(""),
        f"{ASCEND}/driver/tools/hccn_tool": file(""),
        **pcie([c["bus"] for c in chips]),
    }
    dirs = {
        "/dev": {"entries": sorted([f"davinci{i}" for i in range(8)] + ["davinci_manager", "devmm_svm", "hisi_hdc",
                                                                        "null", "shm", "zero"])},
        ASCEND: {"entries": ["ascend-toolkit", "cann", "cann-8.5.0", "driver", "firmware", "nnal"]},
        f"{ASCEND}/ascend-toolkit": {"entries": ["latest", "set_env.sh"]},
        cann_root: {"entries": ["aarch64-linux", "bin", "lib64", "opp", "runtime", "set_env.sh", "version.cfg"]},
        # the kernels package of the chip (Ascend-cann-kernels-910b): the SoC directory every aclnn call reads
        f"{ASCEND}/cann/opp/{KERNEL_CONFIG}": {"entries": ["ascend910b"]},
        f"{ASCEND}/driver/lib64": {"entries": ["common", "driver"]},
        "/usr/local/dcmi": {"entries": ["dcmi_interface_api.h", "libdcmi.so"]},
        "/sys/bus/pci/devices": {"entries": sorted(["0000:00:00.0"] + [c["bus"].lower() for c in chips])},
    }
    links = {
        f"{ASCEND}/cann": {"target": "cann-8.5.0", "resolved": cann_root, "error": None},
        f"{ASCEND}/ascend-toolkit/latest": {"target": f"{ASCEND}/cann", "resolved": cann_root, "error": None},
        cann_root: {"target": None, "resolved": cann_root, "error": None},
    }
    commands = [cmd(["npu-smi", "info"], npu_smi_info("25.5.0", chips, []))]
    commands += [cmd(["npu-smi", "info", "-t", "health", "-i", str(i)], health()) for i in range(8)]
    for dev, ip in ips.items():
        commands += hccn_answers(dev, ip)
    commands += [
        cmd(["chronyc", "tracking"], "Reference ID    : 0A000001 (ntp1.corp.example)\nStratum         : 3\n"
                                     "System time     : 0.000012 seconds fast of NTP time\nLeap status     : Normal\n"),
        cmd(["getenforce"], "Disabled\n"),
        cmd(["gcc", "--version"], "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0\nCopyright (C) 2021 Free Software "
                                  "Foundation, Inc.\n"),
        cmd([PY, "-c", "<script:import-probe>"], import_ok(8, "2.8.0+cpu", "2.8.0.post2")),
        cmd([PY, "-c", "<script:platform-probe>"], platform_answer()),
    ]
    return {
        "format": "ascend-doctor-snapshot", "version": 1, "tool_version": "0.1.0", "collected_at": COLLECTED,
        "description": "",
        "system": {"hostname": "a2-node-03", "os": "Ubuntu 22.04.5 LTS", "kernel": "5.15.0-125-generic",
                   "machine": "aarch64", "cpu_count": 192},
        "env": env, "commands": commands, "files": files, "dirs": dirs, "links": links,
        "disk": {"/dev/shm": {"total_bytes": 128 * GIB, "free_bytes": 128 * GIB, "error": None, "error_message": ""},
                 "/data": {"total_bytes": 7000 * GIB, "free_bytes": 5200 * GIB, "error": None, "error_message": ""},
                 "/root": {"total_bytes": 800 * GIB, "free_bytes": 610 * GIB, "error": None, "error_message": ""}},
        "python_envs": {"default": python_env(STACK_0_13)},
    }


# ------------------------------------------------------------------------------------------------ variants
def set_cmd(snap: dict, argv: list[str], **kw) -> None:
    snap["commands"] = [c for c in snap["commands"] if c["argv"] != argv] + [cmd(argv, **kw)]


def broken_host() -> dict:
    """The healthy A2 stack on a badly prepared host: SELinux enforcing, ulimit 1024, docker-default /dev/shm,
    a card trained at x8, no time sync."""
    s = healthy_a2()
    s["system"]["hostname"] = "a2-node-11"
    s["files"]["/sys/fs/selinux/enforce"] = file("1\n")
    s["files"]["/etc/selinux/config"] = file("SELINUX=enforcing\nSELINUXTYPE=targeted\n")
    set_cmd(s, ["getenforce"], stdout="Enforcing\n")
    s["files"]["/proc/self/limits"] = file("Max open files            1024                 1024                 "
                                           "files\n")
    s["disk"]["/dev/shm"] = {"total_bytes": 64 * 1024 * 1024, "free_bytes": 64 * 1024 * 1024, "error": None,
                             "error_message": ""}
    s["files"]["/proc/mounts"] = file("shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n")
    s["files"]["/sys/bus/pci/devices/0000:81:00.0/current_link_width"] = file("8\n")
    set_cmd(s, ["chronyc", "tracking"], stdout="Reference ID    : 00000000 ()\nStratum         : 0\n"
                                               "Leap status     : Not synchronised\n")
    return s


def warning_chip() -> dict:
    """Healthy A2 host except NPU 5, which npu-smi reports as Warning with an HBM ECC error code."""
    s = healthy_a2()
    s["system"]["hostname"] = "a2-node-07"
    chips = a2_chips(health_of={5: "Warning"})
    set_cmd(s, ["npu-smi", "info"], stdout=npu_smi_info("25.5.0", chips, []))
    set_cmd(s, ["npu-smi", "info", "-t", "health", "-i", "5"],
            stdout=health("Warning", "80E18008", "node type=HBM, sensor type=Memory, event state=single bit ECC "
                                                 "error count exceeds threshold"))
    return s


def vllm_ascend_014_on_vllm_013() -> dict:
    """vllm-ascend 0.14.0rc1 upgraded with pip into an image whose vLLM stayed at 0.13.0 (CANN 8.5.0, torch 2.9.0)."""
    s = healthy_a2()
    s["system"]["hostname"] = "a2-node-21"
    dists = [d for d in STACK_0_13 if d["name"] not in ("vllm-ascend", "torch", "torch-npu")]
    dists += [dist("vllm-ascend", "0.14.0rc1", "torch==2.9.0", "torch-npu==2.9.0", "triton-ascend==3.2.0",
                   "transformers>=4.57.3"),
              dist("torch", "2.9.0+cpu"), dist("torch-npu", "2.9.0", "torch==2.9.0")]
    s["python_envs"]["default"] = python_env(dists)
    set_cmd(s, [PY, "-c", "<script:import-probe>"], stdout=import_ok(8, "2.9.0+cpu", "2.9.0"))
    # The platform resolves; the engine core's worker import is where vLLM 0.13's missing module shows first.
    set_cmd(s, [PY, "-c", "<script:platform-probe>"], stdout=platform_answer(
        worker_error="ModuleNotFoundError: No module named 'vllm.v1.attention.backend'",
        worker_traceback="Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
                         "  File \"/opt/vllm/lib/python3.11/site-packages/vllm_ascend/worker/worker.py\", line 42, "
                         "in <module>\n    from vllm.v1.attention.backend import AttentionBackend\n"
                         "ModuleNotFoundError: No module named 'vllm.v1.attention.backend'\n"))
    return s


def cann85_not_sourced() -> dict:
    """CANN 8.5.0 in the new /usr/local/Ascend/cann-8.5.0 layout, but set_env.sh was never sourced and NNAL (ATB) is
    not installed: `import torch_npu` fails with libatb.so missing."""
    s = healthy_a2()
    s["system"]["hostname"] = "a2-node-30"
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "ATB_HOME_PATH"):
        s["env"].pop(var)
    s["env"]["LD_LIBRARY_PATH"] = f"{ASCEND}/driver/lib64/driver:{ASCEND}/driver/lib64/common"
    s["files"].pop(f"{ASCEND}/nnal/atb/latest/version.info")
    s["dirs"][ASCEND]["entries"].remove("nnal")
    # without ASCEND_OPP_PATH the kernels are looked for under the active install itself
    s["dirs"][f"{ASCEND}/cann-8.5.0/opp/{KERNEL_CONFIG}"] = s["dirs"].pop(f"{ASCEND}/cann/opp/{KERNEL_CONFIG}")
    err = {"stage": "torch_npu", "torch": "2.8.0+cpu", "error_type": "ImportError",
           "error": "libatb.so: cannot open shared object file: No such file or directory", "seconds": 2.101}
    set_cmd(s, [PY, "-c", "<script:import-probe>"],
            stdout="ASCEND_DOCTOR_STAGE torch\nASCEND_DOCTOR_STAGE torch_npu\nASCEND_DOCTOR_IMPORT "
                   + json.dumps(err) + "\n")
    # vLLM's platform import pulls in torch_npu through vllm_ascend.platform: the same missing library.
    set_cmd(s, [PY, "-c", "<script:platform-probe>"], stdout=platform_answer(
        stage="platform", platform_class=None, device_type=None, device_name=None, worker_module=None,
        error_type="ImportError", error="libatb.so: cannot open shared object file: No such file or directory"))
    return s


def container_missing_devices() -> dict:
    """A docker container started with only `--device /dev/davinci0`: no davinci_manager/devmm_svm/hisi_hdc, no
    driver mounts, no npu-smi. The vllm-ascend 0.13.0 Python stack inside is fine."""
    s = healthy_a2()
    s["system"]["hostname"] = "3f9c2a1b7d4e"
    s["files"]["/.dockerenv"] = file("")
    s["files"]["/proc/1/cgroup"] = file("0::/system.slice/docker-3f9c2a1b7d4e.scope\n")
    # `docker run --memory 256g`: /proc/meminfo still shows the host's 1.5 TiB; the cgroup says what the server gets.
    s["files"]["/sys/fs/cgroup/memory.max"] = file(f"{256 * 1024 ** 3}\n")
    s["files"]["/sys/fs/cgroup/memory.current"] = file(f"{12 * 1024 ** 3}\n")
    for path in (f"{ASCEND}/driver/version.info", f"{ASCEND}/firmware/version.info", "/etc/ascend_install.info",
                 "/usr/local/bin/npu-smi", f"{ASCEND}/driver/tools/hccn_tool", "/etc/hccn.conf"):
        s["files"].pop(path)
    for path in (f"{ASCEND}/driver/lib64", "/usr/local/dcmi"):
        s["dirs"].pop(path)
    s["dirs"]["/dev"] = {"entries": ["console", "davinci0", "fd", "full", "null", "pts", "shm", "zero"]}
    s["dirs"][ASCEND]["entries"] = ["ascend-toolkit", "cann", "cann-8.5.0", "nnal"]
    s["files"] = {k: v for k, v in s["files"].items() if not k.startswith("/sys/bus/pci")}
    s["dirs"].pop("/sys/bus/pci/devices")
    s["commands"] = [c for c in s["commands"] if c["argv"][0] not in ("npu-smi", f"{ASCEND}/driver/tools/hccn_tool",
                                                                      "chronyc")]
    s["env"]["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    err = {"stage": "device", "torch": "2.8.0+cpu", "torch_npu": "2.8.0.post2", "error_type": "RuntimeError",
           "error": "Initialize:torch_npu/csrc/core/npu/sys_ctrl/npu_sys_ctrl.cpp:220 NPU function error: "
                    "aclInit(nullptr), error code is 507033", "seconds": 3.842}
    set_cmd(s, [PY, "-c", "<script:import-probe>"],
            stdout="ASCEND_DOCTOR_STAGE torch\nASCEND_DOCTOR_STAGE torch_npu\nASCEND_DOCTOR_STAGE device\n"
                   "ASCEND_DOCTOR_IMPORT " + json.dumps(err) + "\n")
    return s


def a3_busy() -> dict:
    """Atlas 800I A3: 8 NPUs x 2 chips (16 x 64 GB). Another team's processes still hold HBM on chips 0-3."""
    s = healthy_a2()
    s["system"]["hostname"] = "a3-node-02"
    buses = [f"0000:{b:02X}:00.0" for b in (0x9D, 0x9F, 0x99, 0x9B, 0x95, 0x97, 0x91, 0x93,
                                             0x2D, 0x2F, 0x29, 0x2B, 0x25, 0x27, 0x21, 0x23)]
    chips = [{"npu": i // 2, "chip": i % 2, "phy": i, "name": "Ascend910", "health": "OK", "power": 176.0 + i,
              "temp": 36 + i % 4, "bus": buses[i], "hbm_used": 61250 if i < 4 else 3190, "hbm_total": 65536}
             for i in range(16)]
    procs = [{"npu": i // 2, "chip": i % 2, "pid": 2811907 + (i // 2), "name": "python3.10", "mem": 57856}
             for i in range(4)]
    set_cmd(s, ["npu-smi", "info"], stdout=npu_smi_info("25.5.0", chips, procs, a3=True))
    s["dirs"][f"{ASCEND}/cann/opp/{KERNEL_CONFIG}"] = {"entries": ["ascend910_93"]}
    s["commands"] = [c for c in s["commands"] if not (c["argv"][:4] == ["npu-smi", "info", "-t", "health"])]
    s["commands"] += [cmd(["npu-smi", "info", "-t", "health", "-i", str(n)], health()) for n in range(8)]
    ips = {i: f"192.168.{100 + i}.21" for i in range(16)}
    s["commands"] = [c for c in s["commands"] if c["argv"][0] != f"{ASCEND}/driver/tools/hccn_tool"]
    for dev, ip in ips.items():
        s["commands"] += hccn_answers(dev, ip)
    s["files"]["/etc/hccn.conf"] = file(hccn_conf(ips))
    s["files"] = {k: v for k, v in s["files"].items() if not k.startswith("/sys/bus/pci")}
    s["files"].update(pcie([c["bus"] for c in chips]))
    s["dirs"]["/sys/bus/pci/devices"] = {"entries": sorted(["0000:00:00.0"] + [b.lower() for b in buses])}
    s["dirs"]["/dev"] = {"entries": sorted([f"davinci{i}" for i in range(16)] + ["davinci_manager", "devmm_svm",
                                                                                 "hisi_hdc", "null", "shm"])}
    s["env"]["ASCEND_RT_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(16))
    set_cmd(s, [PY, "-c", "<script:import-probe>"], stdout=import_ok(16, "2.8.0+cpu", "2.8.0.post2"))
    return s


EXAMPLES = {
    "healthy-a2": (healthy_a2, "Healthy Atlas 800I A2 (8x 910B3), bare metal: vllm-ascend 0.13.0 / vLLM 0.13.0 / "
                               "torch 2.8.0 / torch_npu 2.8.0.post2 / CANN 8.5.0 (cann-8.5.0 layout) / HDK 25.5.0."),
    "broken-host": (broken_host, "The healthy A2 stack on a badly prepared host: SELinux enforcing, ulimit -n 1024, "
                                 "docker-default 64 MiB /dev/shm, NPU at 0000:81:00.0 trained at x8, clock not "
                                 "synchronised."),
    "warning-chip": (warning_chip, "Healthy A2 host except NPU 5: npu-smi says Warning, error code 80E18008 (HBM "
                                   "single-bit ECC errors over threshold)."),
    "vllm-ascend-0.14-on-vllm-0.13": (vllm_ascend_014_on_vllm_013,
                                      "vllm-ascend 0.14.0rc1 pip-upgraded into a vLLM 0.13.0 image: the "
                                      "set_random_seed ImportError waiting to happen."),
    "cann85-not-sourced": (cann85_not_sourced, "CANN 8.5.0 in the cann-8.5.0 layout, set_env.sh not sourced and "
                                               "NNAL/ATB missing: import torch_npu fails on libatb.so."),
    "container-missing-devices": (container_missing_devices,
                                  "Docker container started with only --device /dev/davinci0: no davinci_manager, "
                                  "devmm_svm, hisi_hdc, no driver mounts, no npu-smi; aclInit fails with 507033."),
    "a3-busy": (a3_busy, "Atlas 800I A3 (8 NPUs x 2 chips): processes of another job still hold ~57 GB HBM on "
                         "chips 0-3."),
}


def expected_path() -> Path:
    return HERE / "expected.json"


def build(name: str) -> dict:
    func, summary = EXAMPLES[name]
    snap = func()
    expected = json.loads(expected_path().read_text()).get(name, {}) if expected_path().exists() else {}
    lines = [summary, "", "Expected findings (every other check passes or is skipped):"]
    lines += [f"  {code}: {status}" for code, status in sorted(expected.items())] or ["  (none)"]
    snap["description"] = "\n".join(lines)
    return copy.deepcopy(snap)


def render(name: str) -> str:
    return json.dumps(build(name), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name in EXAMPLES:
        path = HERE / f"{name}.snapshot.json"
        text = render(name)
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(path.name)
        else:
            path.write_text(text)
    if stale:
        print("stale examples (run python examples/build_examples.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

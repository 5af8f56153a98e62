"""Node variants for fleet tests, made from examples/build_examples.py: a healthy A2 node with its own hostname and
its own RoCE IPs, and the ways one node of a fleet goes odd (another CANN, a cloned hccn.conf, ...)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _examples():
    name = "ascend_doctor_build_examples"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "examples" / "build_examples.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def node(hostname: str, octet: int, ips_from: int = None) -> dict:
    """The healthy A2 example as `hostname`, its 8 RoCE ports at 192.168.(100+i).<octet> (hccn_tool and hccn.conf)."""
    ex = _examples()
    s = ex.healthy_a2()
    s["system"]["hostname"] = hostname
    octet = ips_from if ips_from is not None else octet
    ips = {i: f"192.168.{100 + i}.{octet}" for i in range(8)}
    tool = f"{ex.ASCEND}/driver/tools/hccn_tool"
    s["commands"] = [c for c in s["commands"] if c["argv"][0] != tool]
    for dev, ip in ips.items():
        s["commands"] += ex.hccn_answers(dev, ip)
    s["files"]["/etc/hccn.conf"] = ex.file(ex.hccn_conf(ips))
    s["description"] = f"fleet test node {hostname}"
    return s


def other_cann(s: dict, version: str = "8.3.RC1") -> dict:
    """The node's CANN files say `version` (an upgrade that missed this node)."""
    ex = _examples()
    root = f"{ex.ASCEND}/cann-8.5.0"
    s["files"][f"{root}/version.cfg"] = ex.file(ex.version_cfg("7.8.0.1.212", version))
    s["files"][f"{root}/aarch64-linux/ascend_toolkit_install.info"] = ex.file(
        ex.toolkit_install_info(version, "V100R001C25SPC001B212", f"{root}/aarch64-linux"))
    return s


def set_env(s: dict, **env: str) -> dict:
    s["env"].update(env)
    return s


def write(s: dict, path: Path) -> Path:
    path.write_text(json.dumps(s, indent=1), encoding="utf-8")
    return path

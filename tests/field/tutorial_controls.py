"""Every `vllm serve` command a vllm-ascend release's tutorials run, linted on a healthy host of the tutorial's
hardware with that release's own stack: the doctor's false-failure rate on commands the maintainers publish.

    python -m tests.field.tutorial_controls SDIST [--json OUT] [--only PATTERN]   (or bench/tutorial_controls.py)

SDIST is the release's sdist from PyPI (vllm_ascend-X.tar.gz) or a checkout. For each command
(ascend_doctor.sync.tutorials) a host is built from examples/build_examples.py's healthy Atlas 800I A2 — 8 × 910B3,
or 16 A3 dies, or 310P3 dies for an Atlas 300I Duo page — with the release's vLLM, vllm-ascend, torch, torch_npu,
triton-ascend and transformers as matrices/vllm-ascend.toml records them, and the page's exports in the command's
environment; `ascend-doctor exec --replay HOST -- COMMAND` then runs, and the findings of the serve-stage checks are
counted (the host-stage ones judge the built host, not the command). The model directory is not on the built host,
so the checks that need config.json say unknown: this measures what the command itself makes the doctor say.

A command with an unresolved placeholder (`$local_ip`, `your_model_path`) gets a stand-in value and is reported
apart; a multi-node part is linted as that node's command; a page that names two boxes for one command is linted on
each and judged on the one where the doctor says least. Printed: one line per non-passing serve finding, then the
counts by status and by check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "examples"))

import build_examples as B  # noqa: E402

from ascend_doctor.cli import cli  # noqa: E402
from ascend_doctor.core.registry import load_registry  # noqa: E402
from ascend_doctor.knowledge.tomlread import read_toml  # noqa: E402
from ascend_doctor.sync.archive import open_tree  # noqa: E402
from ascend_doctor.sync.tutorials import read_tutorials  # noqa: E402

STAND_IN = {"local_ip": "192.168.100.11", "node0_ip": "192.168.100.11", "nic_name": "eth0", "ip": "192.168.100.11"}


def release_row(version: str) -> dict:
    rows = read_toml(REPO / "matrices" / "vllm-ascend.toml", "matrix")["vllm_ascend_release"]
    return next(r for r in rows if r["version"] == version)


def host(chip: str, row: dict) -> dict:
    """A healthy host of the chip family with the release's stack."""
    s = B.a3_busy() if chip == "A3" else B.healthy_a2()
    if chip == "A3":  # the A3 example with nothing else running on it
        out = B.npu_smi_info("25.5.0", [dict(c, hbm_used=3190) for c in _a3_chips()], [], a3=True)
        B.set_cmd(s, ["npu-smi", "info"], stdout=out)
    if chip == "310P":
        for c in s["commands"]:
            if c["argv"] == ["npu-smi", "info"]:
                c["stdout"] = c["stdout"].replace("910B3", "310P3")
        s["dirs"][f"{B.ASCEND}/cann/opp/{B.KERNEL_CONFIG}"] = {"entries": ["ascend310p"]}
    torch, npu = row["torch"][0], row["torch_npu"][0]
    hw = (row.get("triton_ascend_per_hardware") or {}).get(chip)
    triton = (row.get("triton_ascend") or [None])[0] if hw is None else (hw[0] if hw else None)
    tf = re.sub(r"^[=<>!~]+", "", row.get("transformers", "4.57.6").split(",")[0])
    dists = [B.dist("vllm", row["vllm"][0] + "+empty"),
             B.dist("vllm-ascend", row["version"], f"torch=={torch}", f"torch-npu=={npu}"),
             B.dist("torch", torch + "+cpu"), B.dist("torch-npu", npu, f"torch=={torch}"),
             B.dist("transformers", tf), B.dist("numpy", "1.26.4"), B.dist("pip", "24.3.1"),
             B.dist("modelscope", "1.29.0")]  # the release images install it (Dockerfile: "for fast download")
    if triton:
        dists.append(B.dist("triton-ascend", triton))
    s["python_envs"]["default"] = B.python_env(dists)
    n = 16 if chip == "A3" else 8
    B.set_cmd(s, [B.PY, "-c", "<script:import-probe>"], stdout=B.import_ok(n, torch + "+cpu", npu))
    return s


def _a3_chips() -> list:
    buses = [f"0000:{b:02X}:00.0" for b in (0x9D, 0x9F, 0x99, 0x9B, 0x95, 0x97, 0x91, 0x93,
                                             0x2D, 0x2F, 0x29, 0x2B, 0x25, 0x27, 0x21, 0x23)]
    return [{"npu": i // 2, "chip": i % 2, "phy": i, "name": "Ascend910", "health": "OK", "power": 176.0 + i,
             "temp": 36 + i % 4, "bus": buses[i], "hbm_total": 65536} for i in range(16)]


def stand_in(argv: list, env: dict) -> tuple[list, dict]:
    def sub(text: str) -> str:
        return re.sub(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: STAND_IN.get(m.group(1).lower(), "x"), text)
    return [sub(a) for a in argv], {k: sub(v) for k, v in env.items()}


SCRIPT_ARGS = re.compile(r"\$\d|\$\{?\w+\[@\]\}?|^\.\.\.$|\$@|\$\*")
NOT_COUNTED = {"SERVE207"}  # the model folders are not on the built host


def lint(sdist: str, only: str = "") -> tuple[str, list, int]:
    """(release, one record per linted command, commands not linted: scripts fed by their caller, 950-only pages)."""
    tree = open_tree(sdist)
    version = re.search(r"vllm_ascend-([^/]+?)(?:\.tar\.gz)?$", sdist.rstrip("/")).group(1)
    row = release_row(version)
    serve = {c.code for c in load_registry(entry_points=False).all() if c.stage == "serve"} - NOT_COUNTED
    cmds = [c for c in read_tutorials(tree.read, tree.listdir) if only in c.path]
    select = ",".join(sorted(serve))  # the host-stage checks judge the built host: not run
    runner = CliRunner()
    records, skipped = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        snaps = {}
        for c in cmds:
            options = [ch for ch in (c.chips or ["A2", "A3"]) if ch != "A5"]
            if not options or any(SCRIPT_ARGS.search(w) for w in c.argv) or any(
                    SCRIPT_ARGS.search(v) for v in c.env.values()):
                skipped += 1
                continue
            best = None
            for chip in options:
                if chip not in snaps:
                    p = Path(tmp) / f"{chip}.json"
                    p.write_text(json.dumps(host(chip, row)))
                    snaps[chip] = p
                argv, env = stand_in(c.argv, c.env)
                pre = ["env"] + [f"{k}={v}" for k, v in env.items()] if env else []
                out = Path(tmp) / "r.json"
                res = runner.invoke(cli, ["exec", "-q", "--replay", str(snaps[chip]), "--select", select, "--format",
                                          "json", "-o", str(out), "--", *pre, *argv], catch_exceptions=True)
                if not out.exists():
                    raise RuntimeError(f"{c.path}:{c.line} [{chip}]: no report: {res.output[-300:]} "
                                       f"{res.exception!r}")
                rep = json.loads(out.read_text())
                out.unlink()
                bad = [f for f in rep["findings"] if f["code"] in serve and f["status"] in ("fail", "warn", "error")]
                score = (sum(f["status"] in ("fail", "error") for f in bad), len(bad))
                if best is None or score < best[0]:
                    best = (score, chip, argv, bad)
            _, chip, argv, bad = best
            records.append({"path": c.path, "line": c.line, "chip": chip, "said": c.chips,
                            "placeholders": c.unresolved, "multi_node": c.multi_node, "argv": argv,
                            "findings": [{"code": f["code"], "status": f["status"], "message": f["message"]}
                                         for f in bad]})
    return version, records, skipped


def fails(records: list) -> set:
    """{"page:line CODE"} of every failing serve finding."""
    return {f"{r['path'].removeprefix('docs/source/tutorials/')}:{r['line']} {f['code']}" for r in records
            for f in r["findings"] if f["status"] in ("fail", "error")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sdist")
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    version, records, skipped = lint(args.sdist, args.only)
    statuses: Counter = Counter()
    by_check: Counter = Counter()
    for r in records:
        bad = r["findings"]
        worst = "fail" if any(f["status"] in ("fail", "error") for f in bad) else "warn" if bad else "pass"
        statuses[worst] += 1
        for f in bad:
            by_check[(f["code"], f["status"])] += 1
            print(f"{r['path']}:{r['line']} [{r['chip']}{'?' if not r['said'] else ''}"
                  f"{' placeholders' if r['placeholders'] else ''}] {f['code']} {f['status']}: {f['message'][:260]}")
    print(f"\nvllm-ascend {version}: {len(records)} tutorial commands linted ({skipped} not: scripts fed by their "
          "caller, Ascend 950 pages): " + ", ".join(f"{k} {v}" for k, v in statuses.most_common()))
    for (code, st), n in sorted(by_check.items()):
        print(f"  {code} {st}: {n}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

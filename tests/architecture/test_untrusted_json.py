"""Every JSON the doctor reads goes through ascend_doctor.text.jsonread.loads, which turns nesting deeper than the
recursion limit, oversized numbers and undecodable bytes into one ValueError. A bare `json.loads` let a
tokenizer_config.json nested 100,000 deep end `plan` with exit 3 (RecursionError, #40 item 9)."""

from __future__ import annotations

import ast

from tests.helpers import REPO

# Scripts that run inside the serving interpreter on their own launcher's arguments, and a test-only environment
# variable: not input from a host, a paste or a server.
ALLOWED = {"ascend_doctor/compute/launcher.py", "ascend_doctor/compute/rank.py", "ascend_doctor/fleet/ray_runner.py"}


def test_no_bare_json_loads_outside_the_one_reader():
    found = []
    for path in sorted((REPO / "ascend_doctor").rglob("*.py")) + sorted((REPO / "checks").glob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel in ALLOWED or rel == "ascend_doctor/text/jsonread.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "loads" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "json":
                found.append(f"{rel}:{node.lineno}")
    assert found == []


def test_a_deeply_nested_tokenizer_config_does_not_end_plan_with_exit_3(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from tests.deploy import configs as C

    (tmp_path / "config.json").write_text(json.dumps(C.QWEN3_32B))
    (tmp_path / "tokenizer_config.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "plan", "--model", str(tmp_path), "--chip", "910B3",
                        "--npus", "8"], capture_output=True, text=True, cwd=REPO, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode in (0, 1), r.stderr
    assert "internal error" not in r.stderr

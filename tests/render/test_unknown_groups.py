"""#40 item 16: `exec --replay` with a model the snapshot did not record printed twelve near-identical unknowns. The
checks that need the model name one shared cause (checks/_serve.py `unreadable`), and the console shows them once,
with their codes, in the run's language."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO


@pytest.mark.parametrize("lang, head", [("en", "checks could not run: model /models/absent-model not readable"),
                                        ("zh", "项检查无法运行：模型 /models/absent-model 在本机不可读")])
def test_a_model_the_snapshot_lacks_is_one_group(lang, head):
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "ASCEND_DOCTOR_LANG": lang}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "exec", "--replay",
                        str(REPO / "examples" / "healthy-a2.snapshot.json"), "--", "vllm", "serve",
                        "/models/absent-model", "--tensor-parallel-size", "2"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr  # exec reports on stderr: stdout belongs to the server it starts
    assert out.count(head) == 1, out
    group = out[out.index(head):].split("\n", 2)[1]
    codes = {c.strip() for c in group.split(",")}
    assert {"HW101", "HW103", "SERVE201", "SERVE202", "SERVE203", "SERVE204"} <= codes
    assert out.count("/models/absent-model: No such file or directory") <= 3  # the group, SERVE207's own evidence

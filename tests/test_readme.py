"""The README's first screen is real: its console sample is what the doctor prints for that example today."""

import os
import re
import subprocess
import sys

from tests.helpers import REPO

COMMAND = "$ ascend-doctor check --replay examples/broken-host.snapshot.json"


def _normalise(text: str) -> str:
    return re.sub(r" in \d+\.\d\ds ", " in N.NNs ", text).rstrip()


def test_the_console_sample_is_real_output():
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index(COMMAND) + len(COMMAND):]
    sample = block[:block.index("```")].strip("\n")
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                        "examples/broken-host.snapshot.json"], cwd=REPO, capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "PYTHONPATH": str(REPO)}, timeout=120)
    assert _normalise(r.stdout) == _normalise(sample), "README sample is stale: regenerate it with COLUMNS=100"


def test_the_first_screen_installs_the_tool_and_runs_check_before_the_tests():
    readme = (REPO / "README.md").read_text()
    assert readme.index("pip install .\nascend-doctor check") < readme.index("pip install '.[test]'\npython -m pytest")

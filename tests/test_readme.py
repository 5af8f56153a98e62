"""The README's first screen is real: its console sample is what the doctor prints for that example today."""

import os
import re
import subprocess
import sys

from tests.helpers import REPO

COMMAND = "$ ascend-doctor check --replay examples/broken-host.snapshot.json"


def _normalise(text: str) -> str:
    return re.sub(r" in \d+\.\d\ds ", " in N.NNs ", text).rstrip()


def _sample() -> tuple[str, int, int]:
    """(the README's sample, where it starts, where it ends)."""
    readme = (REPO / "README.md").read_text()
    start = readme.index(COMMAND) + len(COMMAND) + 1
    end = readme.index("```", start)
    return readme[start:end], start, end


def _real() -> str:
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                        "examples/broken-host.snapshot.json"], cwd=REPO, capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "PYTHONPATH": str(REPO)}, timeout=120)
    return r.stdout


def test_the_console_sample_is_real_output():
    assert _normalise(_real()) == _normalise(_sample()[0].strip("\n")), \
        "README sample is stale: regenerate it with `python -m tests.test_readme`"


if __name__ == "__main__":  # python -m tests.test_readme: write today's output into the README
    readme = (REPO / "README.md").read_text()
    _, start, end = _sample()
    (REPO / "README.md").write_text(readme[:start] + _real().rstrip("\n") + "\n" + readme[end:])


def test_the_first_screen_installs_the_tool_and_runs_check_before_the_tests():
    readme = (REPO / "README.md").read_text()
    assert readme.index("pip install .\nascend-doctor check") < readme.index("pip install '.[test]'\npython -m pytest")

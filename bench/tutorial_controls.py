"""The release tutorials' `vllm serve` commands linted as controls: see tests/field/tutorial_controls.py.

    python bench/tutorial_controls.py SDIST [--json OUT] [--only PATTERN]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.field.tutorial_controls import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

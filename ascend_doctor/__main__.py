"""`python -m ascend_doctor` is the same as the `ascend-doctor` console script.

`python -m` puts the working directory first on sys.path; it is taken off before anything else is imported, so a
module or a `*.dist-info` someone left in the directory the doctor runs in is never loaded as code (#23 item 9).
"""

import os
import sys

try:
    if sys.path and sys.path[0] and os.path.abspath(sys.path[0]) == os.getcwd():
        del sys.path[0]
except OSError:  # the working directory was removed: nothing to take off
    pass

from ascend_doctor.cli import main  # noqa: E402  (after the path is cleaned)

if __name__ == "__main__":
    main()

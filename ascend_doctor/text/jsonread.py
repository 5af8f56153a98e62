"""JSON from untrusted text (snapshots, reports, model config files, command-line values, child output).

`json.loads` can fail three ways besides a syntax error: a number of more than 4,300 digits (ValueError), nesting
deeper than the interpreter's recursion limit (RecursionError, not a ValueError) and undecodable bytes. `loads`
turns all of them into one ValueError with a readable message, so every reader handles bad input with one except.
"""

from __future__ import annotations

import json
from typing import Any, Union


def loads(text: Union[str, bytes]) -> Any:
    """`json.loads(text)`; every way the text can be bad is a ValueError (JSONDecodeError for syntax errors)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None

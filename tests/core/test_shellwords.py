"""#40 item 8: a pasted `vllm serve` line is split in linear time, with shlex.split's answers."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_doctor.text.shellwords import split
from tests.helpers import REPO


def _either(f, text):
    try:
        return f(text)
    except ValueError:
        return "error"


@settings(max_examples=1500, deadline=None)
@given(st.text(st.sampled_from(list("ab -'\"\\\n\t=$x/")), max_size=40))
def test_split_answers_as_shlex(text):
    assert _either(split, text) == _either(shlex.split, text)


def test_one_huge_word_is_linear(tmp_path):
    t0 = time.monotonic()
    assert split("vllm serve /m --x " + "a" * 2_000_000)[-1] == "a" * 2_000_000
    assert time.monotonic() - t0 < 2
    paste = tmp_path / "paste.txt"
    paste.write_text("$ vllm serve /models/x --tool-call-parser " + "a" * 1_000_000 + "\n"
                     "non-default args: " + "{" * 100_000 + "\n")
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", "triage", str(paste)], capture_output=True, text=True,
                       timeout=120, cwd=REPO)
    assert r.returncode in (0, 1), r.stderr[-1000:]  # not 3
    assert time.monotonic() - t0 < 10  # was 8.6 s on the shlex split alone, 12.6-127.8 s for 1-2 MB


def test_open_quote_is_the_state_split_would_fail_on():
    from ascend_doctor.text.shellwords import open_quote

    assert open_quote("--kv-transfer-config '{") == "'"
    assert open_quote('  "kv_role": "kv_both"', "'") == "'"  # inside '…' double quotes are literal
    assert open_quote("    }'", "'") == ""
    assert open_quote('a "b\\" c') == '"' and open_quote('a "b\\\\" c') == ""
    assert open_quote("it\\'s") == ""  # an escaped quote outside quotes opens nothing
    for text in ("a 'b' c", 'x "y z"', "--json '{\"k\": 1}'"):
        assert open_quote(text) == ""
        split(text)  # split agrees: no open quote, no error


def test_a_substitution_is_one_word_blanks_and_all():
    # what bash does: `$((…))` and `$(…)` stay one word; a `$(` that never closes is two plain characters
    assert split("--max-num-seqs $((N * 16)) --x") == ["--max-num-seqs", "$((N * 16))", "--x"]
    assert split("--host $(hostname -i)x y") == ["--host", "$(hostname -i)x", "y"]
    assert split("a $( b") == ["a", "$(", "b"] and split("p$HOME") == ["p$HOME"]

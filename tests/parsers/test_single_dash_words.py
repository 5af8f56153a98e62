"""A single-dash word that starts with a short option, read as vLLM's argparse reads it (vllm-ascend#3494:
`-quantization ascend` is `-q uantization` plus a stray `ascend`, not `--quantization ascend`)."""

from __future__ import annotations

import argparse

from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check


def test_argparse_itself_reads_it_so():
    p = argparse.ArgumentParser()
    p.add_argument("--quantization", "-q")
    ns, rest = p.parse_known_args(["-quantization", "ascend"])
    assert ns.quantization == "uantization" and rest == ["ascend"]


def test_the_command_parser_agrees_and_serve105_says_why():
    fx = facts(f"vllm serve {QWEN} -quantization ascend")
    cmd = fx["serve_cmd"]
    assert cmd.options["quantization"] == "uantization" and cmd.unknown_args == ["ascend"]
    f = run_check("SERVE105", fx)
    assert f.status == Status.FAIL and "unexpected positional argument(s) ascend" in f.message
    assert "'-quantization' read as -q 'uantization'" in f.message


def test_the_documented_spellings_are_unchanged():
    for spelling in ("--quantization ascend", "-q ascend", "--quantization=ascend"):
        cmd = facts(f"vllm serve {QWEN} {spelling}")["serve_cmd"]
        assert cmd.options["quantization"] == "ascend" and cmd.unknown_args == [], spelling
    assert facts(f"vllm serve {QWEN} -tp 2")["serve_cmd"].options["tensor_parallel_size"] == "2"

"""An offline launch in a paste: a script's `LLM(...)` call read as the `vllm serve` options it stands for
(ascend_doctor.triage.offline). Reports of the 0.7-0.9 era start the engine from a script more often than with
`vllm serve` (vllm-ascend#1615: DeepSeek-R1-W8A8 with torchair graph mode, TP 4 and PP 4 from an offline script;
#1534: the ACLGraph offline example). The scripts here are written after those shapes."""

from __future__ import annotations

import time

from ascend_doctor.core.registry import load_registry
from ascend_doctor.report import Status
from ascend_doctor.triage.offline import read_offline_launch
from ascend_doctor.triage.paste import CUT_VALUE, read_paste
from ascend_doctor.triage.run import triage_text

SCRIPT = '''import os
os.environ["VLLM_USE_V1"] = "1"
os.environ.setdefault("HCCL_BUFFSIZE", "1024")
from vllm import LLM, SamplingParams

model_path = "/data/DeepSeek-R1-W8A8"
llm = LLM(model=model_path,
          tensor_parallel_size=4,   # four cards per stage
          pipeline_parallel_size=4,
          enforce_eager=False, enable_prefix_caching=False,
          additional_config={"torchair_graph_config": {"enabled": True}},
          quantization="ascend", trust_remote_code=True, gpu_memory_utilization=util())
outputs = llm.generate(prompts, SamplingParams(max_tokens=32))
'''


def lines(text: str) -> list[tuple[int, str]]:
    return [(no, t) for no, t in enumerate(text.splitlines(), 1)]


def test_the_keywords_become_options_and_names_take_the_literal_the_script_gives_them():
    launch = read_offline_launch(lines(SCRIPT))
    assert launch.argv == [
        "vllm", "serve", "/data/DeepSeek-R1-W8A8", "--tensor-parallel-size", "4", "--pipeline-parallel-size", "4",
        "--no-enable-prefix-caching", "--additional-config", '{"torchair_graph_config": {"enabled": true}}',
        "--quantization", "ascend", "--trust-remote-code", "--gpu-memory-utilization", CUT_VALUE]
    assert (launch.first, launch.last) == (7, 12) and launch.unshown == ["gpu_memory_utilization"]
    assert launch.env == {"VLLM_USE_V1": ("1", 2), "HCCL_BUFFSIZE": ("1024", 3)}


def test_what_is_not_a_launch_it_can_read():
    assert read_offline_launch(lines("HLLM(model='x')\nmyLLM(model='x')\n")) is None
    assert read_offline_launch(lines("llm = LLM(model='x',\n  tensor_parallel_size=2\n")) is None  # never closes
    spread = read_offline_launch(lines("llm = LLM(model=name(), **engine_args)\n"))
    assert spread.argv == ["vllm", "serve", "--model", CUT_VALUE] and spread.unshown == ["model", "**engine_args"]
    positional = read_offline_launch(lines('llm = LLM("Qwen/Qwen3-8B", max_model_len=4096); print(llm)\n'))
    assert positional.argv == ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "4096"]


def test_the_paste_takes_the_call_as_its_launch_open_and_said_so():
    f = read_paste("vllm-ascend 0.9.1rc1\n\n```python\n" + SCRIPT + "```\n")
    assert f.serve_argv[:3] == ["vllm", "serve", "/data/DeepSeek-R1-W8A8"] and f.serve_lines == "10-15"
    assert f.serve_open and f.serve_offline and f.serve_cut == ["--gpu-memory-utilization"]
    assert f.exports["VLLM_USE_V1"].value == "1" and f.exports["VLLM_USE_V1"].source == "the script's os.environ"
    # a serve command in the same paste is the launch; the script is not read over it
    both = read_paste("vllm serve /models/Qwen3-8B --max-model-len 4096\n" + SCRIPT)
    assert both.serve_argv[2] == "/models/Qwen3-8B" and not both.serve_offline


def test_a_release_rule_judges_the_offline_launch_and_absences_are_not_claimed():
    """REL-B15-003 on the options an offline script gives (full graphs with an MTP draft on 0.13.0rc1)."""
    text = ("vllm 0.13.0\nvllm-ascend 0.13.0rc1\n\n```python\nfrom vllm import LLM\n"
            "llm = LLM(model='Qwen/Qwen2.5-7B-Instruct', tensor_parallel_size=1,\n"
            "          compilation_config={'cudagraph_mode': 'FULL_DECODE_ONLY'},\n"
            "          speculative_config={'method': 'mtp', 'num_speculative_tokens': 1})\n```\n")
    report = triage_text(text, "paste.md", load_registry())
    by_code = {f.code: f for f in report.findings}
    # a warning, not a failure: the model's config is the catalogue's published one, not the reporter's files
    assert by_code["SERVE311"].status == Status.WARN and "REL-B15-003" in by_code["SERVE311"].message
    assert by_code["SERVE101"].status == Status.UNKNOWN
    assert "offline LLM(...) call" in by_code["SERVE101"].message


def test_hostile_scripts_are_read_in_bounded_time():
    cases = ["llm = LLM(" + "(" * 5000 + "\n", "llm = LLM(model='x', a=" + "[" * 3000 + "]" * 3000 + ")\n",
             "llm = LLM(\n" + "  x=1,\n" * 50_000, "llm = LLM(model='" + "a" * 100_000 + "')\n",
             "llm = LLM(" + ")" * 20_000 + "\n"]
    for text in cases:
        t0 = time.monotonic()
        read_paste(text)
        assert time.monotonic() - t0 < 2.0, text[:40]


def test_a_model_the_script_does_not_show_is_not_judged_as_a_path():
    """An h38i judge, generically: the placeholder of a model keyword whose value is no literal was judged by SERVE206
    as the model path."""
    report = triage_text("vllm-ascend 0.9.1\n\nllm = LLM(model=args.model_path, tensor_parallel_size=2)\n",
                         "paste.md", load_registry())
    f = {x.code: x for x in report.findings}["SERVE206"]
    assert f.status == Status.UNKNOWN and "not shown" in f.message, f.message


def test_a_call_quoted_in_comments_is_read_and_many_of_them_cost_little():
    text = "# the engine line as shown:\n#   llm = LLM(model=\"models/Qwen2-0.5B\",tensor_parallel_size=1,\n" \
           "#             trust_remote_code=True)\npython xzl.py\n"
    launch = read_offline_launch(lines(text))
    assert launch.argv == ["vllm", "serve", "models/Qwen2-0.5B", "--tensor-parallel-size", "1", "--trust-remote-code"]
    assert (launch.first, launch.last) == (2, 3)
    t0 = time.monotonic()
    read_paste("# llm = LLM(\n" * 20_000)
    assert time.monotonic() - t0 < 5.0


def test_an_lm_eval_run_on_vllm_is_an_offline_launch():
    """An h38j NEW judge, generically: the full engine arguments of an evaluation-harness launch were not read as a
    launch. lm_eval's `--model vllm --model_args k=v,…` are vllm.LLM's keywords."""
    text = ("vllm-ascend 0.11.0rc1\nlm_eval --model vllm \\\n"
            "  --model_args pretrained=/models/Qwen3-8B,tensor_parallel_size=2,max_model_len=4096,enforce_eager=True "
            "\\\n  --tasks gsm8k --batch_size auto\n")
    f = read_paste(text)
    assert f.serve_argv == ["vllm", "serve", "/models/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len",
                            "4096", "--enforce-eager"]
    assert f.serve_lines == "2-4" and f.serve_offline and f.serve_open
    assert read_paste("lm_eval --model hf --model_args pretrained=/m\n").serve_argv is None  # not on vLLM
    assert read_paste("lm_eval --model vllm --tasks gsm8k\n").serve_argv is None  # no model arguments
    spaced = read_paste("python -m lm_eval --model=vllm --model-args=pretrained=/m,max_model_len=2048\n")
    assert spaced.serve_argv == ["vllm", "serve", "/m", "--max-model-len", "2048"]

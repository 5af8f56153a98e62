"""SERVE312: the ACL graphs a command captures against the stream budget of an HDK driver before 25.5.1, and the
graph model behind it (ascend_doctor/deploy/graphs.py)."""

from __future__ import annotations

import json

from ascend_doctor.deploy.graphs import Layout, budget_sizes, capture_list, sample
from ascend_doctor.facts.stack import StackFact
from ascend_doctor.report import Stack, Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts, run_check
from tests.helpers import shipped

G = shipped().graph_budget


def judge(extra: str = "", ascend: str = "0.21.0rc1", driver: str = "25.2.0", env=None, model=True):
    out = facts(f"vllm serve {QWEN} {extra}".strip(), env=env, model=model)
    if model:  # the fixture's config.json is trimmed; Qwen3-8B has 36 layers (its published config.json)
        out["serve_model"].config = {**out["serve_model"].config, "num_hidden_layers": 36}
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm-ascend", version=ascend),
                                             Distribution(name="vllm", version="0.21.0")])
    out["stack"] = StackFact(stack=Stack(driver=driver))
    out.setdefault("env", env or {})
    return run_check("SERVE312", out)


def test_the_default_capture_list_below_70_gib():
    """vLLM doubles its default ceiling (256 sequences x 2 -> 512: 51 sizes); vllm-ascend sets its own without the
    x 2 from 0.18.0rc1 (vllm-ascend#7572): 256 -> 35 sizes, which is what SERVE312's releases capture."""
    caps = capture_list({}, None, None, 0, G.defaults, "0.17.0rc1")
    assert len(caps.sizes) == 51 and caps.sizes[:4] == [1, 2, 4, 8] and caps.sizes[-1] == 512
    caps = capture_list({}, None, None, 0, G.defaults, "0.21.0rc1")
    assert len(caps.sizes) == 35 and caps.sizes[-1] == 256 and "vllm-ascend's default list" in caps.how


def test_the_capture_list_follows_vllm_and_the_release():
    assert capture_list({}, 16, None, 0, G.defaults, "0.17.0rc1").sizes == [1, 2, 4, 8, 16, 24, 32]
    assert capture_list({}, 16, None, 0, G.defaults, "0.18.0rc1").sizes == [1, 2, 4, 8, 16]
    assert capture_list({}, 16, None, 1, G.defaults, "0.21.0rc1").sizes[-1] == 32  # one speculative token
    # an off-grid ceiling: 12 is not captured until 0.30.0rc1 adds it (vllm-ascend#16049)
    assert capture_list({}, 12, None, 0, G.defaults, "0.29.0rc1").sizes == [1, 2, 4, 8]
    assert capture_list({}, 12, None, 0, G.defaults, "0.30.0rc1").sizes == [1, 2, 4, 8, 12]
    assert capture_list({}, 256, 300, 0, G.defaults, "0.17.0rc1").sizes[-1] == 300  # batched tokens cap and are captured
    given = capture_list({"cudagraph_capture_sizes": [8, 1, 8, 4096]}, None, None, 0, G.defaults, "0.21.0rc1")
    assert given.sizes == [1, 8] and "3 given" not in given.how  # duplicates and sizes above 2048 tokens dropped


def test_the_old_budget_is_the_plugin_formula():
    # vllm-ascend's own comment: 48 layers, TP 4 -> floor((1920 - 40) / 49 / 3) = 12 with its earlier 1920; 1800 now
    assert budget_sizes(G.budget, Layout(layers=48, tp=4))[0] == 11
    assert budget_sizes(G.budget, Layout(layers=36))[0] == 48  # TP 1: floor(1800 / 37)
    assert budget_sizes(G.budget, Layout(layers=36, tp=2, dp=2))[0] == 9  # floor((1800 - 80) / 37 / 5)
    n, text = budget_sizes(G.budget, Layout(layers=36, tp=2, aiv=True))  # dense under AIV: the allreduce streams
    assert n == floor_aiv(36, 2) and "AIV" in text
    assert budget_sizes(G.budget, Layout(layers=61, draft_layers=1, tp=16))[0] == 9  # floor(1760 / 64 / 3)


def floor_aiv(layers: int, factor: int) -> int:
    per = layers + 1
    return (1800 - factor * per) // per // factor


def test_sample_keeps_the_ends_like_the_plugin():
    sizes = capture_list({}, None, None, 0, G.defaults, "0.21.0rc1").sizes
    kept = sample(sizes, 15)
    assert len(kept) == 15 and kept[0] == 1 and kept[-1] == 256 and kept == sorted(kept)
    assert sample([1, 2], 5) == [1, 2] and sample([1, 2, 3], 1) == [1]


def test_a_default_command_on_an_old_driver_fails_with_the_sizes_that_fit():
    f = judge("--tensor-parallel-size 2")
    assert f.status == Status.FAIL and "captures 35 sizes" in f.message and "streams for 15 with 36 layers, TP 2" \
        in f.message and "207008" in f.message
    keep = json.loads(f.remediation.split("'")[1])["cudagraph_capture_sizes"]
    assert len(keep) == 15 and "25.5.1" in f.remediation
    # the finding's own fix passes
    fixed = judge("--tensor-parallel-size 2 --compilation-config " + json.dumps({"cudagraph_capture_sizes": keep})
                  .replace(" ", ""))
    assert fixed.status == Status.PASS and "15 capture sizes fit" in fixed.message


def test_what_passes():
    assert judge("--tensor-parallel-size 2 --enforce-eager").status == Status.PASS
    assert judge('--compilation-config {"cudagraph_mode":"FULL_DECODE_ONLY"}').status == Status.PASS
    assert judge('--compilation-config {"cudagraph_mode":"FULL"}').status == Status.PASS
    assert judge('--compilation-config {"cudagraph_mode":"NONE"}').status == Status.PASS
    f = judge("--tensor-parallel-size 2", driver="25.5.1")
    assert f.status == Status.PASS and "no old stream budget" in f.message
    assert judge("--max-num-seqs 8").status == Status.PASS  # 1 2 4 8: four sizes (vllm-ascend: no x 2)
    f = judge("--tensor-parallel-size 2", ascend="0.20.2rc1")
    assert f.status == Status.SKIP and "shrinks the capture list" in f.message


def test_what_it_cannot_tell():
    assert judge("--tensor-parallel-size 2", driver=None).status == Status.UNKNOWN
    f = judge("--tensor-parallel-size 2", model=False)
    assert f.status == Status.UNKNOWN and "config.json" in f.message
    f = judge('--speculative-config {"method":"eagle","model":"/models/draft","num_speculative_tokens":2}')
    assert f.status == Status.UNKNOWN and "/models/draft" in f.message and "is not a local directory" not in \
        f.message and "/models/draft: " in f.message  # the probe's own reason: the path is not there


def test_a_separate_draft_model_is_counted_from_its_config(tmp_path):
    """update_aclgraph_sizes adds the draft's layers + 1 to every graph: an EAGLE-3 head has one layer."""
    draft = tmp_path / "qwen3-8b-eagle3"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"],
                                                   "num_hidden_layers": 1}))
    spec = json.dumps({"method": "eagle3", "model": str(draft), "num_speculative_tokens": 2}).replace(" ", "")
    f = judge(f"--speculative-config {spec}")
    fit = budget_sizes(G.budget, Layout(layers=36, draft_layers=1))[0]
    assert fit < budget_sizes(G.budget, Layout(layers=36))[0]  # 46 against 48
    assert f.status == Status.FAIL and f"streams for {fit} with 36 layers" in f.message
    assert "+ 2 for the draft" in next(e.excerpt for e in f.evidence if e.source.startswith("old stream budget"))
    (draft / "config.json").write_text("{}")
    f = judge(f"--speculative-config {spec}")
    assert f.status == Status.UNKNOWN and "gives no num_hidden_layers" in f.message
    (draft / "config.json").unlink()
    f = judge(f"--speculative-config {spec}")
    assert f.status == Status.UNKNOWN and f"{draft}/config.json: no such file" in f.message


def test_vllm103_leaves_the_graph_advisory_to_serve312_when_the_command_is_known():
    from ascend_doctor.report import Status as S
    from tests.field.runner import cases, finding, run

    case = next(c for c in cases() if c.cls == "B3")
    report = run(case.data)
    assert finding(report, "SERVE312").status == S.FAIL
    f = finding(report, "VLLM103")
    assert f.status == S.PASS and "ADV-2026-006" in f.message and "SERVE312" in f.message
    static = run({k: v for k, v in case.data.items() if k != "serve"})  # `check`: no command, the advisory speaks
    assert finding(static, "VLLM103").status == S.FAIL and "ADV-2026-006" in finding(static, "VLLM103").message

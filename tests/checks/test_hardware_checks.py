"""HW checks: Atlas 300I Duo (310P) rules from matrices/hardware-rules.toml, quoted from the vllm-ascend 310P
tutorials in each release's sdist (e.g. vllm_ascend-0.13.0.tar.gz docs/source/tutorials/310p.md line 5: "the 310I
series only supports eager mode and the float16 data type"; 0.20.2rc1 hardwares/310p.md: "do not omit the
--max-model-len argument ... or OOM may occur", "does not support triton or triton-ascend")."""

from __future__ import annotations

from ascend_doctor.knowledge.hardware import family_of_chip
from ascend_doctor.parsers.npu_smi import NpuChip, NpuSmiInfo
from ascend_doctor.probes.host_facts import ContainerFact
from ascend_doctor.probes.npu import CommandSummary, NpuSmiFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check


def smi(name: str, n: int = 2) -> NpuSmiFact:
    chips = [NpuChip(npu_id=i, chip_id=0, name=name, health="OK", hbm_used_mb=0, hbm_total_mb=21527)
             for i in range(n)]
    return NpuSmiFact(found=True, command=CommandSummary(argv=["npu-smi", "info"], returncode=0),
                      info=NpuSmiInfo(chips=chips))


def py(va: str, *extra) -> PythonEnv:
    dists = [Distribution(name="vllm-ascend", version=va), Distribution(name="vllm", version="0.13.0")]
    dists += [Distribution(name=n, version=v) for n, v in extra]
    return PythonEnv(executable="/opt/v/bin/python", version="3.11.10", distributions=dists)


def serve(command: str, va: str = "0.13.0", chip: str = "310P3", **kw) -> dict:
    f = facts(command, npus=smi(chip))
    f["python"] = py(va, *kw.get("extra", ()))
    return f


def test_families_from_chip_names():
    assert [family_of_chip(n) for n in ("910B3", "910B2C", "Ascend910", "310P3", "950PR", "910A", "910PremiumA",
                                        "910ProB", "")] == ["A2", "A2", "A3", "310P", "A5", "910", "910", "910", None]


# HW101 dtype ------------------------------------------------------------------------------------------------------
def test_bfloat16_model_with_auto_dtype_on_310p_fails():
    f = run_check("HW101", serve(f"vllm serve {QWEN}"))  # Qwen3-8B config.json: torch_dtype bfloat16
    assert f.status == Status.FAIL and "310P supports only float16" in f.message
    assert "config.json torch_dtype bfloat16" in f.message and "HW-310P-001" in f.message
    assert f.remediation.startswith("Serve with `--dtype float16`")
    assert any("tutorials/310p.md line 5" in e.excerpt for e in f.evidence)


def test_explicit_dtypes_on_310p():
    assert run_check("HW101", serve(f"vllm serve {QWEN} --dtype bfloat16")).status == Status.FAIL
    assert run_check("HW101", serve(f"vllm serve {QWEN} --dtype float16")).status == Status.PASS
    assert run_check("HW101", serve(f"vllm serve {QWEN} --dtype half")).status == Status.PASS


def test_dtype_rule_only_where_a_source_says_it():
    # v0.20.2rc1: only the examples use float16 -> a medium-confidence warning.
    f = run_check("HW101", serve(f"vllm serve {QWEN}", va="0.20.2rc1"))
    assert f.status == Status.WARN and "medium confidence" in f.message
    # v0.24.0rc1 has no 310P tutorial, but its quick_start.md says 300I DUO uses float16 (HW-310P-012). An A2 host:
    # no rule.
    f = run_check("HW101", serve(f"vllm serve {QWEN}", va="0.24.0rc1"))
    assert f.status == Status.FAIL and "HW-310P-012" in f.message
    assert run_check("HW101", serve(f"vllm serve {QWEN}", chip="910B3")).status == Status.SKIP
    assert run_check("HW101", serve(f"vllm serve {QWEN}", va="0.30.0rc1")).status == Status.FAIL  # "Use float16"


def test_dtype_unknown_without_npu_table_and_skip_without_command():
    f = serve(f"vllm serve {QWEN}")
    f["npu_smi"] = NpuSmiFact(found=False, command=CommandSummary(argv=["npu-smi", "info"], returncode=None))
    assert run_check("HW101", f).status == Status.UNKNOWN
    assert run_check("HW101", {"python": py("0.13.0"), "npu_smi": smi("310P3")}).status == Status.SKIP


# HW102 eager, HW103 flags -----------------------------------------------------------------------------------------
def test_eager_only_releases():
    f = run_check("HW102", serve(f"vllm serve {QWEN} --dtype float16"))
    assert f.status == Status.WARN and "--enforce-eager is not given" in f.message
    # the first 310P tutorial (0.9.2rc1's single_node_300i.md: "For 300I series, only eager mode is supported."),
    # whose image users ran in graph mode (vllm-ascend#1768: aclmdlRICaptureStatus … INTERNAL ASSERT FAILED)
    f = run_check("HW102", serve(f"vllm serve {QWEN}", va="0.9.2rc1"))
    assert f.status == Status.WARN and "HW-310P-006" in f.message
    assert run_check("HW101", serve(f"vllm serve {QWEN}", va="0.9.2rc1")).status == Status.FAIL
    assert run_check("HW102", serve(f"vllm serve {QWEN}", va="0.9.1")).status == Status.SKIP  # no 310P guide
    assert run_check("HW102", serve(f"vllm serve {QWEN} --enforce-eager")).status == Status.PASS
    # v0.18.0 supports FULL_DECODE_ONLY graphs on the 300I Duo: no eager rule.
    assert run_check("HW102", serve(f"vllm serve {QWEN}", va="0.18.0")).status == Status.SKIP


def test_max_model_len_required_on_310p():
    f = run_check("HW103", serve(f"vllm serve {QWEN}", va="0.20.2rc1"))
    assert f.status == Status.WARN and "--max-model-len not given" in f.message
    assert "16384" in f.remediation
    assert run_check("HW103", serve(f"vllm serve {QWEN} --max-model-len 16384", va="0.20.2rc1")).status \
        == Status.PASS
    assert run_check("HW103", serve(f"vllm serve {QWEN}", va="0.13.0")).status == Status.SKIP  # no such rule
    # a paste that shows part of the command: the flag not seen may be given (h38h, generically)
    part = serve(f"vllm serve {QWEN}", va="0.20.2rc1")
    part["serve_cmd"] = part["serve_cmd"].model_copy(update={"partial": True})
    f = run_check("HW103", part)
    assert f.status == Status.UNKNOWN and "shows only part of the command" in f.message


def test_a_long_derived_context_needs_max_model_len_on_a2():  # vLLM PR #27556: stuck above 65536 on A2
    f = facts(f"vllm serve {QWEN}", npus=smi("910B3"))
    f["python"] = py("0.13.0")
    f["serve_model"].config = {**f["serve_model"].config, "max_position_embeddings": 262144}
    out = run_check("HW103", f)
    assert out.status == Status.WARN and "HW-A2-001" in out.message and "262144 (max_position_embeddings=262144)" \
        in out.message and "above the 65536" in out.message
    f["serve_model"].config = {**f["serve_model"].config, "max_position_embeddings": 40960}  # Qwen3-8B's own
    out = run_check("HW103", f)
    assert out.status == Status.PASS and "not needed" in out.message
    f["serve_model"].config = None
    f["serve_model"].why_not = "not on this machine"
    out = run_check("HW103", f)
    assert out.status == Status.UNKNOWN and "not on this machine" in out.message
    f = facts(f"vllm serve {QWEN} --max-model-len 32768", npus=smi("910B3"))
    f["python"] = py("0.13.0")
    assert run_check("HW103", f).status == Status.PASS


def test_an_explicit_length_the_releases_own_a2_tutorial_runs_is_not_warned():
    """HW-A2-001's hang was reported for the model's default 262144 (vLLM PR #27556); vllm-ascend 0.21.0rc1's own
    GLM-4.x tutorial runs `--max-model-len 140000` on A2 (matrix sync: tutorial_lengths "A2: 140000
    models/GLM4.x.md:192").
    The two sources disagree, so an explicit length up to the documented one passes and cites the tutorial; a longer
    one passes too, named (the report is of the derived default; h38g: a held-out stack ran an explicit longer
    length), and the default (no flag) is judged as before. Found by tests/field/tutorial_controls.py."""
    def judge(flags: str, release: str = "0.21.0rc1"):
        f = facts(f"vllm serve {QWEN} {flags}".strip(), npus=smi("910B3"))
        f["python"] = py(release)
        return run_check("HW103", f)

    out = judge("--max-model-len 140000")
    assert out.status == Status.PASS and "own tutorials run 140000 on A2 (models/GLM4.x.md:192)" in out.message
    for flags, release in (("--max-model-len 300000", "0.21.0rc1"), ("--max-model-len 140000", "0.13.0")):
        out = judge(flags, release)  # beyond what the release documents (0.13.0's A2 tutorials stop at 32768)
        assert out.status == Status.PASS and "given explicitly" in out.message and "HW-A2-001" in out.message


# HW104 packages, HW105 image --------------------------------------------------------------------------------------
def test_triton_on_310p_fails():
    facts_ = {"python": py("0.20.2rc1", ("triton-ascend", "3.2.1")), "npu_smi": smi("310P3")}
    f = run_check("HW104", facts_)
    assert f.status == Status.FAIL and "triton-ascend 3.2.1 installed, which 310P does not support" in f.message
    assert "pip uninstall -y triton triton-ascend" in f.remediation
    assert run_check("HW104", {"python": py("0.20.2rc1"), "npu_smi": smi("310P3")}).status == Status.PASS
    assert run_check("HW104", {"python": py("0.20.2rc1", ("triton-ascend", "3.2.1")),
                               "npu_smi": smi("910B3")}).status == Status.SKIP


def test_container_image_suffix():
    ctr = ContainerFact(in_container=True, runtime="podman", image="quay.io/ascend/vllm-ascend:v0.13.0")
    base = {"python": py("0.13.0"), "npu_smi": smi("310P3")}
    f = run_check("HW105", {**base, "container": ctr})
    assert f.status == Status.WARN and "not the 310P build" in f.message and "-310p" in f.remediation
    ok = ctr.model_copy(update={"image": "quay.io/ascend/vllm-ascend:v0.13.0-310p"})
    assert run_check("HW105", {**base, "container": ok}).status == Status.PASS
    docker = ContainerFact(in_container=True, runtime="docker")
    assert run_check("HW105", {**base, "container": docker}).status == Status.UNKNOWN
    assert run_check("HW105", {**base, "container": ContainerFact(in_container=False)}).status == Status.SKIP


def test_w8a8_dynamic_in_float16_fails_on_a2_and_static_w8a8_is_not_judged():  # vllm-ascend#12907
    def quant(cmd: str, kind, chip: str = "910B3", readable: bool = True):
        f = serve(f"vllm serve {QWEN} {cmd}", va="0.13.0", chip=chip)
        m = f["serve_model"]
        if not readable:
            m.path, m.config, m.why_not = None, None, "not on this machine"
        else:
            m.quant_type, m.quant_description_files = kind, ["quant_model_description.json"] if kind else []
        return run_check("HW101", f)

    f = quant("--dtype float16", "W8A8_DYNAMIC")
    assert f.status == Status.FAIL and "with a W8A8_DYNAMIC checkpoint supports only bfloat16" in f.message
    assert "HW-A2-002" in f.message and "--dtype bfloat16" in f.remediation
    assert quant("--dtype bfloat16", "W8A8_DYNAMIC").status == Status.PASS
    assert quant("", "W8A8_DYNAMIC").status == Status.PASS  # Qwen3-8B's torch_dtype is bfloat16
    assert quant("--dtype float16", "W8A8").status == Status.SKIP  # static W8A8 keeps an int64 deq_scale
    assert quant("--dtype float16", None).status == Status.SKIP
    f = quant("--dtype float16", None, readable=False)
    assert f.status == Status.UNKNOWN and "not on this machine" in f.message
    assert quant("--dtype float16", "W8A8_DYNAMIC", chip="310P3").status == Status.PASS  # float16 is the 310P's own


# HW107 chip supported ---------------------------------------------------------------------------------------------
def test_the_first_generation_910_fails_on_every_release():  # vllm-ascend#237, #13540
    for va in ("0.7.3", "0.13.0", "0.23.0"):
        f = run_check("HW107", {"python": py(va), "npu_smi": smi("910PremiumA")})
        assert f.status == Status.FAIL and f"vllm-ascend {va} does not run on 910PremiumA" in f.message
        assert "HW-910-001" in f.message and "first-generation Ascend 910" in f.remediation


def test_a_bare_910b_is_the_first_generation_not_an_a2_chip():
    """vllm-ascend#10206: npu-smi names a 32 GB card "910B" and torch_npu gives soc_version 104 (Ascend910B, the first
    generation); vllm-ascend accepts 220-225 for the A2 chips (910B1-910B4_1)."""
    f = run_check("HW107", {"python": py("0.20.2rc1"), "npu_smi": smi("910B")})
    assert f.status == Status.FAIL and "HW-910-001" in f.message and "910B" in f.message, f.message
    assert run_check("HW107", {"python": py("0.20.2rc1"), "npu_smi": smi("910B2C")}).status == Status.PASS


def test_chips_the_release_names_pass_and_the_950_before_its_release_warns():
    f = run_check("HW107", {"python": py("0.13.0"), "npu_smi": smi("910B3")})
    assert f.status == Status.PASS and "A2 run vllm-ascend 0.13.0" in f.message
    f = run_check("HW107", {"python": py("0.14.0rc1"), "npu_smi": smi("950PR")})  # vllm-ascend#13086
    assert f.status == Status.WARN and "HW-A5-001" in f.message
    assert run_check("HW107", {"python": py("0.21.0rc1"), "npu_smi": smi("950PR")}).status == Status.PASS
    f = run_check("HW107", {"python": py("0.9.1"), "npu_smi": smi("310P3")})  # the 0.9.1 row names A2 only
    assert f.status == Status.WARN and "names A2" in f.message and "310P3" in f.message


def test_the_300i_duo_on_the_releases_whose_own_310p_guide_sends_users_to_v0_10_0rc1_warns():
    """vllm-ascend#4812: Qwen2.5-VL on the v0.11.0rc2-310p image fails where the v0.10.0rc1-310p image serves; the
    310P guide of 0.11.0rc1-0.13.0 says "You can use v0.10.0rc1 version first" (HW-310P-014)."""
    for va in ("0.11.0rc2", "0.13.0"):
        f = run_check("HW107", {"python": py(va), "npu_smi": smi("310P3")})
        assert f.status == Status.WARN and "HW-310P-014" in f.message, f.message
        assert "v0.10.0rc1-310p" in f.remediation
    for va in ("0.10.0rc1", "0.14.0rc1"):  # the release it points to; the one whose notes say support is back
        assert "HW-310P-014" not in run_check("HW107", {"python": py(va), "npu_smi": smi("310P3")}).message


def test_what_hw107_cannot_tell():
    f = run_check("HW107", {"python": py("0.13.0"), "npu_smi": smi("Mystery9000")})
    assert f.status == Status.UNKNOWN and "Mystery9000" in f.message
    f = run_check("HW107", {"python": py("0.13.0"), "npu_smi": NpuSmiFact(
        found=False, command=CommandSummary(argv=["npu-smi", "info"], returncode=None, error="not_found"))})
    assert f.status == Status.UNKNOWN
    f = run_check("HW107", {"python": py("9.9.9"), "npu_smi": smi("910B3")})
    assert f.status == Status.UNKNOWN and "not in the compatibility matrix" in f.message
    no_va = PythonEnv(executable="/opt/v/bin/python", version="3.11.10", distributions=[])
    assert run_check("HW107", {"python": no_va, "npu_smi": smi("910B3")}).status == Status.SKIP


def test_a_310p_deployment_across_nodes_fails_and_one_server_passes():
    """HW-310P-015 (vllm-ascend#7184: the 300I Duo serves on one server only): the command's multi-node signs fail,
    the multi-node variables alone warn, one server passes, an A2 host has no such rule."""
    from ascend_doctor.facts.scope import derive_scope

    base = "vllm serve /models/Qwen3-8B --dtype float16 --enforce-eager"
    for extra, sign in (("--data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-address 10.0.0.1",
                         "--data-parallel-size-local 2 of --data-parallel-size 4"),
                        ("--data-parallel-size 4 --data-parallel-start-rank 2 --headless", "--headless true"),
                        ("--nnodes 2", "--nnodes 2")):
        f = run_check("HW109", serve(f"{base} {extra}", va="0.14.0rc1"))
        assert f.status == Status.FAIL and sign in f.message and "HW-310P-015" in f.message, f.message
    one = serve(f"{base} --data-parallel-size 2", va="0.14.0rc1")
    assert run_check("HW109", one).status == Status.PASS
    env = serve(base, va="0.14.0rc1")
    env["npu_scope"] = derive_scope({"HCCL_IF_IP": "10.0.0.2"}, env["npu_smi"], env["serve_cmd"])
    w = run_check("HW109", env)
    assert w.status == Status.WARN and "HCCL_IF_IP=10.0.0.2" in w.message
    assert run_check("HW109", serve(f"{base} --nnodes 2", va="0.14.0rc1", chip="910B3")).status == Status.SKIP


def test_without_the_chips_the_one_server_rule_is_unknown():
    """HW109 with no npu-smi table and no image suffix: which family this is cannot be told."""
    f = serve("vllm serve /models/Qwen3-8B --nnodes 2", va="0.14.0rc1")
    f["npu_smi"] = NpuSmiFact(found=False, command=CommandSummary(argv=["npu-smi", "info"], error="not_found"))
    out = run_check("HW109", f)
    assert out.status == Status.UNKNOWN and "cannot tell the hardware family" in out.message
    long = serve("vllm serve /models/Qwen3-8B", va="0.14.0rc1")
    from ascend_doctor.facts.scope import derive_scope

    long["npu_scope"] = derive_scope({"HCCL_IF_IP": "10.0.0.2" + "x" * 500}, long["npu_smi"], long["serve_cmd"])
    assert len(run_check("HW109", long).message) < 400  # an environment value is quoted clipped

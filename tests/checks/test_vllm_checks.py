"""VLLM checks on hand-built facts: vllm-ascend release rows, compare_stack, advisories, pip check
(values from matrix-facts §1 and §5)."""

from ascend_doctor.probes.cann import CannFact, CannInstall, DriverFact
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import run_check


def py(*dists, version="3.11.7", machine="aarch64"):
    """A serving interpreter with distributions given as (name, version) or (name, version, requires)."""
    return PythonEnv(executable="/opt/v/bin/python", version=version, implementation="CPython", machine=machine,
                     distributions=[Distribution(name=d[0], version=d[1], requires=list(d[2]) if len(d) > 2 else [])
                                    for d in dists])


def cann(version):
    inst = CannInstall(root=f"/usr/local/Ascend/cann-{version}", version=version, version_source="version.cfg")
    return CannFact(found=True, installs=[inst], active=inst, version=version)


# A healthy vllm-ascend 0.13.0 stack (its wheel METADATA pins, vllm built with VLLM_TARGET_DEVICE=empty).
VA13 = [("vllm", "0.13.0"),
        ("vllm_ascend", "0.13.0", ["torch==2.8.0", "torch-npu==2.8.0.post2", "triton-ascend==3.2.0",
                                   "transformers<5,>=4.57.4"]),
        ("torch", "2.8.0"), ("torch_npu", "2.8.0.post2", ["torch==2.8.0"]), ("triton-ascend", "3.2.0"),
        ("transformers", "4.57.6")]


def replace(stack, **versions):
    return [(d[0], versions.get(d[0].replace("-", "_"), d[1]), *d[2:]) for d in stack]


# VLLM101 --------------------------------------------------------------------------------------------------------
def test_pair_ok():
    f = run_check("VLLM101", {"python": py(*VA13), "env": {}})
    assert f.status == Status.PASS and "0.13.0" in f.message
    assert any("versioning_policy.md" in e.excerpt for e in f.evidence)


def test_newer_vllm_ascend_on_vllm_0_13_fails_with_both_ways_out():
    stack = replace(VA13, vllm_ascend="0.14.0rc1")
    f = run_check("VLLM101", {"python": py(*stack), "env": {}})
    assert f.status == Status.FAIL and f.severity.value == "critical" and "0.14.1" in f.message
    assert "--branch v0.14.1" in f.remediation and "VLLM_TARGET_DEVICE=empty" in f.remediation
    assert "pip install -c pins.txt vllm-ascend==0.13.0 torch torch-npu triton-ascend" in f.remediation


def test_empty_target_build_of_the_right_release_passes_and_dev_build_warns():
    stack = replace(VA13, vllm="0.13.0+empty")  # VLLM_TARGET_DEVICE=empty, as vllm-ascend's install guide says
    f = run_check("VLLM101", {"python": py(*stack), "env": {}})
    assert f.status == Status.PASS and "VLLM_TARGET_DEVICE=empty build of 0.13.0" in f.message
    f = run_check("VLLM101", {"python": py(*replace(VA13, vllm="0.1.dev1+gbdb2cdd")), "env": {}})
    assert f.status == Status.WARN and "VLLM_VERSION" in f.message and "cannot be judged" in f.message


def test_local_build_of_another_release_fails():
    f = run_check("VLLM101", {"python": py(*replace(VA13, vllm="0.12.0+empty")), "env": {}})
    assert f.status == Status.FAIL and "0.12.0+empty" in f.message


def test_vllm_version_override_is_judged():
    stack = replace(VA13, vllm="0.1.dev1+gbdb2cdd")
    assert run_check("VLLM101", {"python": py(*stack), "env": {"VLLM_VERSION": "0.13.0"}}).status == Status.PASS
    f = run_check("VLLM101", {"python": py(*stack), "env": {"VLLM_VERSION": "0.12.0"}})
    assert f.status == Status.FAIL and "VLLM_VERSION" in f.message


def test_vllm_missing_fails():
    f = run_check("VLLM101", {"python": py(*VA13[1:]), "env": {}})
    assert f.status == Status.FAIL and "vllm is not" in f.message


def test_vllm_ascend_newer_than_matrix_warns():
    f = run_check("VLLM101", {"python": py(*replace(VA13, vllm_ascend="0.99.0")), "env": {}})
    assert f.status == Status.WARN and "not in the matrix yet" in f.message


def test_pair_skip_and_unknown():
    assert run_check("VLLM101", {"python": py(("vllm", "0.13.0")), "env": {}}).status == Status.SKIP
    assert run_check("VLLM101", {"python": py(*replace(VA13, vllm_ascend="0.12.5")), "env": {}}).status \
        == Status.UNKNOWN  # between two rows: not in the matrix, nothing to judge by
    assert run_check("VLLM101", {}).status == Status.UNKNOWN


# VLLM102 --------------------------------------------------------------------------------------------------------
def test_release_pins_ok():
    f = run_check("VLLM102", {"python": py(*VA13), "cann": cann("8.5.0")})
    assert f.status == Status.PASS and "torch-npu" in f.message and "cann" in f.message


def test_the_310p_image_variant_has_its_own_cann_and_no_triton_ascend():
    """#37: on a 300I Duo, VLLM102 judges the -310p image's pins (its CANN 9.1.0-beta.1 for 0.25.1rc1, no
    triton-ascend from v0.19.1rc1 on) and HW104 alone judges a triton-ascend that is there: they never disagree."""
    from tests.checks.test_hardware_checks import smi

    va25 = [("vllm", "0.25.1+empty"), ("vllm_ascend", "0.25.1rc1"), ("torch", "2.10.0"),
            ("torch_npu", "2.10.0.post2"), ("transformers", "5.14.1")]
    facts = {"python": py(*va25), "cann": cann("9.1.0-beta.1"), "npu_smi": smi("310P3")}
    f = run_check("VLLM102", facts)
    assert f.status == Status.PASS and "the 310P image of vllm-ascend 0.25.1rc1 does not ship it" in f.message
    a2 = run_check("VLLM102", {**facts, "npu_smi": smi("910B3")})  # the main image: CANN 9.0.1, triton-ascend 3.2.1
    assert a2.status == Status.FAIL and "triton-ascend not installed" in a2.message and "cann 9.1.0-beta.1" in a2.message
    with_triton = {**facts, "python": py(*va25, ("triton-ascend", "3.2.1"))}
    assert run_check("VLLM102", with_triton).status == Status.PASS


def test_cuda_torch_from_pypi_vllm_fails_with_pip_pin():
    # vllm 0.13.0 from PyPI pulls torch 2.9.0 (vllm-ascend#5710).
    f = run_check("VLLM102", {"python": py(*replace(VA13, torch="2.9.0")), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL and "torch 2.9.0" in f.message
    assert "pip install torch==2.8.0" in f.remediation and "matrix pins --vllm-ascend 0.13.0" in f.remediation


def test_missing_pinned_package_and_wrong_python_fail():
    stack = [d for d in VA13 if d[0] != "triton-ascend"]
    f = run_check("VLLM102", {"python": py(*stack, version="3.12.3"), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL and "triton-ascend not installed" in f.message and "python 3.12.3" in f.message
    assert "triton-ascend==3.2.0" in f.remediation and ">=3.10,<3.12" in f.remediation


def test_value_only_another_document_names_is_a_reported_conflict():
    # vllm-ascend 0.13.0: README says CANN 8.3.rc2, installation guide and matrix 8.5.0.
    f = run_check("VLLM102", {"python": py(*VA13), "cann": cann("8.3.RC2")})
    assert f.status == Status.WARN and "CONFLICT" in f.message and "README" in f.message


def test_the_cann_the_compiled_ops_were_built_against_is_judged_by_their_own_file():
    """#37: vllm-ascend 0.30.0rc2's table says CANN 9.2.0, its README and csrc/version.info 9.1.0 (`Version=9.1.0`,
    `required_package_runtime_version=">=9.1.0"`, read from the sdist): 9.1.0 is the CANN its ops target, not a mere
    conflict; below their minimum the fail quotes the op package's requirement."""
    va30 = [("vllm", "0.30.0+empty"), ("vllm_ascend", "0.30.0rc2"), ("torch", "2.10.0"),
            ("torch_npu", "2.10.0.post4"), ("triton-ascend", "3.2.2"), ("transformers", "5.14.1")]
    f = run_check("VLLM102", {"python": py(*va30), "cann": cann("9.1.0")})
    assert f.status == Status.PASS, f.message
    assert "custom ops built against 9.1.0, require >=9.1.0" in f.evidence[-1].excerpt
    old = run_check("VLLM102", {"python": py(*va30), "cann": cann("9.0.1")})
    assert old.status == Status.FAIL
    assert "cann 9.0.1 (row: 9.2.0 | 9.1.0); its compiled ops were built against CANN 9.1.0 and require CANN >=9.1.0 " \
           "(csrc/version.info)" in old.message


def test_the_upgrade_a_release_note_documents_is_a_conflict_not_a_failure():
    """#37: vllm-ascend 0.18.0 ships CANN 8.5.1, and its release notes send 310P, x86, FabricMem and Qwen3-Omni users
    to CANN 9.0.0 with torch_npu 2.9.0.post2 and triton-ascend 3.2.1. That documented stack warns (who says what),
    it does not fail."""
    va18 = [("vllm", "0.18.0+empty"), ("vllm_ascend", "0.18.0"), ("torch", "2.9.0"), ("torch_npu", "2.9.0.post2"),
            ("triton-ascend", "3.2.1"), ("transformers", "4.57.6")]
    f = run_check("VLLM102", {"python": py(*va18), "cann": cann("9.0.0")})
    assert f.status == Status.WARN, f.message
    assert "cann 9.0.0 is only what another vllm-ascend document names" in f.message and "vllm-ascend#9856" in f.message
    shipped = run_check("VLLM102", {"python": py(*replace(va18, torch_npu="2.9.0", triton_ascend="3.2.0")),
                                    "cann": cann("8.5.1")})
    assert shipped.status == Status.PASS, shipped.message


def test_release_pins_skip_and_unknown():
    assert run_check("VLLM102", {"python": py(("torch", "2.8.0")), "cann": cann("8.5.0")}).status == Status.SKIP
    assert run_check("VLLM102", {"python": py(*replace(VA13, vllm_ascend="0.99.0"))}).status == Status.SKIP
    assert run_check("VLLM102", {}).status == Status.UNKNOWN


# VLLM103 --------------------------------------------------------------------------------------------------------
def test_no_advisory_matches():
    f = run_check("VLLM103", {"python": py(*VA13), "cann": cann("8.5.0")})
    assert f.status == Status.PASS and "advisories" in f.message


def test_set_random_seed_advisory_reported_with_symptom_fix_and_source():
    stack = replace(VA13, vllm_ascend="0.14.0rc1", torch="2.9.0", torch_npu="2.9.0")
    f = run_check("VLLM103", {"python": py(*stack), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL and "ADV-2026-001" in f.message and "set_random_seed" in f.message
    ev = next(e for e in f.evidence if "ADV-2026-001" in e.source)
    assert "fix:" in ev.excerpt and "vllm-project/vllm-ascend@52d4acf" in ev.excerpt
    assert f.details["advisories"] == ["ADV-2026-001"]


def test_every_matching_advisory_is_reported():
    # vllm-ascend 0.21.0rc1 on HDK 24.1 and CANN 8.3.RC2: FULL_AND_PIECEWISE graphs need HDK 25.5.1+ / CANN 8.5.0+
    # (v0.21.0rc1 Highlights, #9572, #9962); the capture fails at start (faqs.md FAQ 17: error code 207008).
    stack = replace(VA13, vllm_ascend="0.21.0rc1", vllm="0.21.0", torch="2.10.0", torch_npu="2.10.0")
    from ascend_doctor.parsers.ascend_files import parse_driver_version_info
    drv = DriverFact(found=True, version_info=parse_driver_version_info("Version=24.1.rc3\n"))
    f = run_check("VLLM103", {"python": py(*stack), "cann": cann("8.3.RC2"), "driver": drv})
    assert f.status == Status.FAIL and "ADV-2026-006" in f.message and "ADV-2026-007" in f.message
    assert "207008" in f.message and "fall" not in f.message.lower()
    assert "--enforce-eager" in f.remediation and "FULL_DECODE_ONLY" in f.remediation
    assert f.details["advisories"] == ["ADV-2026-006", "ADV-2026-007"]
    assert sum("advisory ADV-" in e.source for e in f.evidence) == 2
    ev = next(e for e in f.evidence if "ADV-2026-006" in e.source)
    assert "Highlights" in ev.excerpt and "known issues" not in ev.excerpt


def test_triton_beside_triton_ascend_is_an_advisory():
    """vllm-ascend#7359/#7790, triton-lang/triton-ascend#306: both own site-packages/triton."""
    f = run_check("VLLM103", {"python": py(*VA13, ("triton", "3.6.0")), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL and f.details["advisories"] == ["ADV-2026-011"]
    assert "pip uninstall -y triton && pip install --force-reinstall --no-deps triton-ascend" in f.remediation
    assert run_check("VLLM103", {"python": py(*VA13), "cann": cann("8.5.0")}).status == Status.PASS


def test_torch_from_vllm_is_named_as_the_cause():
    """vLLM 0.13.0's PyPI package pins torch==2.9.0 (vllm-0.13.0.tar.gz PKG-INFO, audit §4.2-B): a torch 2.9.0
    under vllm-ascend 0.13.0 is what installing vLLM after vllm-ascend leaves (vllm-ascend#5710, #8286)."""
    f = run_check("VLLM102", {"python": py(*replace(VA13, torch="2.9.0")), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL
    assert "cause: vLLM 0.13.0's own package pins torch==2.9.0" in f.message
    assert "replaced the torch==2.8.0 vllm-ascend needs" in f.message
    f = run_check("VLLM102", {"python": py(*replace(VA13, torch="2.7.1")), "cann": cann("8.5.0")})
    assert f.status == Status.FAIL and "cause:" not in f.message  # 2.7.1 is not what vLLM 0.13.0 pins


def test_pip_fix_adds_the_index_for_pins_pypi_lacks():
    """triton-ascend 3.2.2 is not on PyPI (package-index.toml; vllm-ascend#10641, triton-lang/triton-ascend#900)."""
    stack = [("vllm", "0.23.0"), ("vllm_ascend", "0.23.0"), ("torch", "2.10.0"), ("torch_npu", "2.10.0.post4"),
             ("transformers", "5.5.4")]
    f = run_check("VLLM102", {"python": py(*stack), "cann": cann("9.1.0")})
    assert f.status == Status.FAIL and "triton-ascend not installed" in f.message
    assert ("pip install triton-ascend==3.2.2 --extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi`"
            in f.remediation)


def test_warning_advisory_warns_on_its_machine_only():
    stack = replace(VA13, vllm_ascend="0.18.0", vllm="0.18.0", torch="2.9.0", torch_npu="2.9.0")
    f = run_check("VLLM103", {"python": py(*stack, machine="x86_64"), "cann": cann("8.5.1")})
    assert f.status == Status.WARN and "ADV-2026-005" in f.message
    assert run_check("VLLM103", {"python": py(*stack, machine="aarch64"), "cann": cann("8.5.1")}).status \
        == Status.PASS


def test_advisories_unknown_without_python():
    assert run_check("VLLM103", {}).status == Status.UNKNOWN


# VLLM104 --------------------------------------------------------------------------------------------------------
def test_pip_check_clean():
    assert run_check("VLLM104", {"python": py(*VA13)}).status == Status.PASS


def test_pip_check_allows_the_documented_cuda_torch_pin():
    stack = [("vllm", "0.13.0", ["torch==2.9.0"])] + VA13[1:]
    f = run_check("VLLM104", {"python": py(*stack)})
    assert f.status == Status.PASS and "allowed" in f.message
    assert any("vllm-ascend#754" in e.excerpt for e in f.evidence)


def test_pip_check_missing_torch_npu_fails():
    stack = [d for d in VA13 if d[0] != "torch_npu"]
    f = run_check("VLLM104", {"python": py(*stack)})
    assert f.status == Status.FAIL and "torch-npu==2.8.0.post2, which is not installed" in f.message
    assert "pip install torch-npu==2.8.0.post2" in f.remediation


def test_pip_check_fix_names_the_index_of_a_pin_pypi_does_not_have():  # vllm-ascend#16732
    stack = [("vllm_ascend", "0.26.0rc1", ["triton-ascend==3.2.2"])]
    f = run_check("VLLM104", {"python": py(*stack)})
    assert f.status == Status.FAIL
    assert "pip install triton-ascend==3.2.2 --extra-index-url https://mirrors.huaweicloud.com/ascend/repos/pypi" \
        in f.remediation
    assert "--extra-index-url" not in run_check("VLLM104", {"python": py(*[d for d in VA13 if d[0] != "triton-ascend"])
                                                            }).remediation  # 3.2.0 is on PyPI


def test_pip_check_conflict_outside_stack_warns():
    stack = VA13 + [("jupyterlab", "4.2.0", ["jinja2>=3.0.3"]), ("jinja2", "2.11.3")]
    f = run_check("VLLM104", {"python": py(*stack)})
    assert f.status == Status.WARN and "jinja2" in f.message and "'jinja2>=3.0.3'" in f.remediation


def test_pip_check_unknown_without_python():
    assert run_check("VLLM104", {}).status == Status.UNKNOWN


def test_a_post_build_the_release_table_does_not_name_is_a_conflict_not_an_image_build():
    """#22 "no pass that rests on a broken fact": any dev/post build of a pinned release was allowed as the images'
    build; only the builds the release's own matrix row names are (v0.18.0: torch_npu 2.9.0.post1+git4c901a4)."""
    pins = ["torch==2.9.0", "torch-npu==2.9.0", "triton-ascend==3.2.0"]
    listed = [("vllm", "0.18.0"), ("vllm_ascend", "0.18.0", pins), ("torch", "2.9.0"),
              ("torch_npu", "2.9.0.post1+git4c901a4"), ("triton_ascend", "3.2.0.dev20260322")]
    assert run_check("VLLM104", {"python": py(*listed)}).status == Status.PASS
    unlisted = [d if d[0] != "torch_npu" else ("torch_npu", "2.9.0.post3") for d in listed]
    f = run_check("VLLM104", {"python": py(*unlisted)})
    assert f.status == Status.FAIL and "2.9.0.post3" in f.message


def test_an_advisory_about_unquantized_weights_is_not_reported_for_a_quantized_model():
    """ADV-2026-008 (0.12.0rc1's NZ default slows bf16/fp16 models) was reported beside a quantized checkpoint (an
    h38k false warning): `weights = "unquantized"` drops it when the model is quantized by any sign — the flag, the
    checkpoint, or a quantization word ending its name — and keeps it when nothing says so."""
    from tests.helpers import parse_serve as parse_serve_command

    stack = [("vllm", "0.12.0"), ("vllm_ascend", "0.12.0rc1"), ("torch", "2.8.0"), ("torch_npu", "2.8.0")]

    def with_cmd(line):
        f = {"python": py(*stack), "cann": cann("8.3.RC2")}
        if line:
            f["serve_cmd"] = parse_serve_command(line.split())
        return run_check("VLLM103", f)

    for line in ("vllm serve /models/Qwen3-32B-W8A8", "vllm serve Qwen/Qwen3-8B-AWQ",
                 "vllm serve /models/Qwen3-32B --quantization ascend"):
        f = with_cmd(line)
        assert "ADV-2026-008" not in (f.details or {}).get("advisories", []), line
        assert any("ADV-2026-008" in e.source and "quantized" in e.excerpt for e in f.evidence), line
    for line in ("vllm serve /models/Qwen3-32B", ""):  # unquantized, or not known: it may apply
        f = with_cmd(line)
        assert "ADV-2026-008" in f.details["advisories"], line

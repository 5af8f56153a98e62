"""TRIAGE107: a pip install of the stack on x86 without the PyTorch CPU index (vllm-project/vllm-ascend#1411; every
vllm-ascend installation guide adds the index on x86)."""

from ascend_doctor.core.registry import load_registry
from ascend_doctor.triage.installs import pip_installs, stated_arch
from ascend_doctor.triage.run import triage_text

REG = load_registry(entry_points=False)


def _finding(text):
    return next(f for f in triage_text(text, "paste.md", REG).findings if f.code == "TRIAGE107")


def test_an_x86_install_without_the_cpu_index_warns_with_the_guide_s_command():
    f = _finding("# hardware: 910B2 in an x86_64 server\n\n```sh\npip install vllm_ascend==0.8.5rc1\n```\n")
    assert f.status == "warn", f.message
    assert "line 4: vllm-ascend" in f.message and "x86_64 host (line 1)" in f.message
    assert "pip config set global.extra-index-url https://download.pytorch.org/whl/cpu/" in f.remediation


def test_the_index_anywhere_in_the_paste_or_an_arm_host_passes():
    for text in ("OS: Ubuntu 22.04.5 LTS (x86_64)\npip config set global.extra-index-url "
                 "https://download.pytorch.org/whl/cpu/\npip install vllm==0.9.1\n",
                 "x86 host\npip3 install --extra-index-url https://download.pytorch.org/whl/cpu/ vllm-ascend==0.9.1\n",
                 "x86 host\nexport PIP_EXTRA_INDEX_URL=https://mirrors.aliyun.com/pytorch-wheels/cpu\n"
                 "python -m pip install vllm-ascend\n",
                 "OS: openEuler 22.03 (aarch64)\npip install vllm-ascend==0.9.1\n"):
        assert _finding(text).status == "pass", text


def test_what_the_paste_does_not_say_is_not_judged():
    assert _finding("pip install vllm-ascend==0.9.1\n").status == "skip"  # no architecture stated
    mixed = _finding("works on aarch64, fails on x86\npip install vllm-ascend==0.9.1\n")
    assert mixed.status == "skip" and "both" in mixed.message
    assert _finding("x86_64\npip install -r requirements.txt\npip install transformers==4.57.1\n").status == "skip"


def test_the_install_reader():
    lines = list(enumerate(["$ pip install 'vllm-ascend[mooncake]==0.11.0' torch==2.7.1+cpu numpy",
                            "RUN python3 -m pip install vllm==0.11.0 && uv pip install torch_npu==2.7.1",
                            "pip install -e . --extra-index-url https://download.pytorch.org/whl/cpu/",
                            "pip installation failed"], 1))
    assert pip_installs(lines) == [(1, ["vllm-ascend"], False), (2, ["vllm", "torch-npu"], False)]
    assert stated_arch(lines, "x86_64") == ("x86_64", None)
    assert stated_arch([(3, "/usr/lib/x86_64-linux-gnu/libc.so")], None) == ("x86_64", 3)
    assert stated_arch([(1, "鲲鹏 920")], None) == ("aarch64", 1)

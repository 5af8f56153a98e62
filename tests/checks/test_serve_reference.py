"""SERVE207 model reference: a path that is there with its config, a cached hub id, offline without the cache,
ModelScope without its package — on test_serve_checks' fixture stack and DirHost."""

from __future__ import annotations

from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.checks.test_serve_checks import QWEN, facts
from tests.helpers import run_check


def judge(command: str, env=None, dists=None):
    out = facts(command, env=env)
    if dists is not None:
        out["python"] = PythonEnv(distributions=[Distribution(name=n, version="1") for n in dists])
    return run_check("SERVE207", out)


def test_a_local_directory_with_its_config_passes():
    f = judge(f"vllm serve {QWEN}")
    assert f.status == Status.PASS and "with its config" in f.message


def test_a_directory_without_config_or_a_missing_path_fails(tmp_path):
    empty = tmp_path / "weights-only"
    empty.mkdir()
    (empty / "model.safetensors").write_text("")
    f = judge(f"vllm serve {empty}")
    assert f.status == Status.FAIL and "has no config.json" in f.message
    f = judge(f"vllm serve {tmp_path}/not-mounted/Qwen3-0.6B")  # vllm-ascend#9999
    assert f.status == Status.FAIL and "is not a directory here" in f.message
    assert "-v /data/models:/data/models" in f.remediation


def test_a_hub_id_offline_and_uncached_fails_online_is_unknown(tmp_path):
    env = {"HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    f = judge("vllm serve bigcode/starcoder", env=env)  # vllm#3719
    assert f.status == Status.FAIL and "HF_HUB_OFFLINE is set" in f.message
    f = judge("vllm serve bigcode/starcoder", env={"HOME": str(tmp_path)})
    assert f.status == Status.UNKNOWN and "the doctor does not contact the hub" in f.message


def test_a_hub_id_in_the_cache_passes(tmp_path):
    snap = tmp_path / ".cache/huggingface/hub/models--bigcode--starcoder/snapshots/abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    f = judge("vllm serve bigcode/starcoder", env={"HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert f.status == Status.PASS and "Hugging Face cache" in f.message


def test_modelscope_needs_its_package(tmp_path):  # vllm#16524
    env = {"HOME": str(tmp_path), "VLLM_USE_MODELSCOPE": "True"}
    f = judge("vllm serve Qwen/Qwen2.5-VL-7B-Instruct", env=env, dists=["vllm"])
    assert f.status == Status.FAIL and "No module named 'modelscope'" in f.message
    f = judge("vllm serve Qwen/Qwen2.5-VL-7B-Instruct", env=env, dists=["vllm", "modelscope"])
    assert f.status == Status.UNKNOWN and "ModelScope" in f.message


def test_a_path_a_snapshot_never_recorded_is_unknown_not_missing():
    """`exec --replay` of a snapshot collected without the serve command: the model directory was never looked at."""
    from ascend_doctor.probes.serve import ServeModelFact

    out = facts("vllm serve /models/Qwen3-32B", model=False)
    out["serve_model"] = ServeModelFact(model="/models/Qwen3-32B", unrecorded=True,
                                        why_not="/models/Qwen3-32B: No such file or directory (not in the snapshot)")
    f = run_check("SERVE207", out)
    assert f.status == Status.UNKNOWN and "the snapshot did not record /models/Qwen3-32B" in f.message


def _model_with_links(tmp_path, secret_text: str):
    """A model folder whose chat template and config are links out of it (#40 item 11)."""
    secret = tmp_path / "secret"
    secret.write_text(secret_text)
    model = tmp_path / "model"
    model.mkdir()
    (model / "tokenizer_config.json").write_text('{"chat_template": "{{ tools }}"}')
    (model / "chat_template.jinja").symlink_to(secret)
    return model


def test_a_link_out_of_the_model_folder_is_not_read(tmp_path):
    model = _model_with_links(tmp_path, "-----BEGIN OPENSSH PRIVATE KEY----- hunter2")
    (model / "config.json").symlink_to(tmp_path / "secret")
    command = f"vllm serve {model} --enable-auto-tool-choice --tool-call-parser hermes"
    out = facts(command)
    m = out["serve_model"]
    assert m.chat_template_files == {} and m.config is None
    assert "outside the model folder" in m.config_error and str(tmp_path / "secret") in m.config_error
    f = run_check("SERVE205", out)
    assert f.status == Status.UNKNOWN and "chat_template.jinja is a link to" in f.message
    assert "hunter2" not in f.model_dump_json()


def test_the_hugging_face_cache_links_into_its_blobs_are_read(tmp_path):
    repo = tmp_path / ".cache/huggingface/hub/models--Qwen--Qwen3-0.6B"
    snap = repo / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (repo / "blobs").mkdir()
    (repo / "blobs" / "c0ffee").write_text('{"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}')
    (snap / "config.json").symlink_to("../../blobs/c0ffee")
    out = facts("vllm serve Qwen/Qwen3-0.6B", env={"HOME": str(tmp_path)})
    assert out["serve_model"].config == {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}
    assert out["serve_model"].refused == []

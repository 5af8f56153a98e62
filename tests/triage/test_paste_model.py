"""A paste's served model and environment: the catalogue's published config.json stands in for a model the command
names (a paste never holds the model's files), and the variables the paste sets (`export`, `docker run -e`) are the
environment it shows — every other variable stays "not in the paste".

The fixtures are written after vllm-ascend#1813 (Qwen3-30B-A3B on four 300I Duo with the v0.9.2rc1-310p image, run
as `docker run … -e VLLM_USE_V1=1`; the maintainer: "qwen3-moe is not supported on 310I series", the release rule
REL-A19-001) and the repository's own fixtures."""

from __future__ import annotations

from ascend_doctor.core.registry import load_registry
from ascend_doctor.triage.paste import read_paste
from ascend_doctor.triage.run import triage_text

REG = load_registry(entry_points=False)

SMI_310P = """+--------------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                                       |
+---------------------------+---------------+------------------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)        |
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)                |
+===========================+===============+============================================================+
| 0     310P3               | OK            | 94.6        39                0    / 0                     |
| 0                         | 0000:01:00.0  | 0           0    / 0          3368 / 44280                 |
+===========================+===============+============================================================+
| 1     310P3               | OK            | 94.6        39                0    / 0                     |
| 0                         | 0000:02:00.0  | 0           0    / 0          3368 / 44280                 |
+===========================+===============+============================================================+
"""


def paste(model: str, env_lines: str = "docker run -it -e OMP_NUM_THREADS=48 -e VLLM_USE_V1=1 $IMAGE\n") -> str:
    return ("The image is quay.io/ascend/vllm-ascend:v0.9.2rc1-310p on two 300I Duo.\n" + env_lines +
            f"```\nvllm serve {model} --max-model-len 32768 --max-num-seqs 32\n```\n"
            "```\n$ pip list | grep vllm\nvllm                0.9.2\nvllm_ascend         0.9.2rc1\n```\n"
            f"```text\n{SMI_310P}```\n")


def by_code(text: str) -> dict:
    return {f.code: f for f in triage_text(text, "p.md", REG).findings}


def test_a_catalogue_model_is_judged_on_its_published_config_and_its_failure_is_a_warning_that_says_so():
    """#1813's MoE model on a 300I Duo release before 310P MoE support: SERVE311's rule fires on the published config,
    as a warning (the paste cannot show that /models/Qwen3-30B-A3B is that checkpoint) naming the catalogue's copy."""
    f = by_code(paste("/models/Qwen3-30B-A3B"))["SERVE311"]
    assert f.status.value == "warn" and "REL-A19-001" in f.message, f.message
    assert "published config.json of Qwen/Qwen3-30B-A3B" in f.evidence[0].excerpt
    assert "a failure if the paste's model is that checkpoint" in f.evidence[0].excerpt
    assert f.details["model_config_from"] == "catalogue:Qwen/Qwen3-30B-A3B"
    # the hub id names it too; a dense model of the catalogue is fine on the same release (the pass control)
    assert by_code(paste("Qwen/Qwen3-30B-A3B"))["SERVE311"].status.value == "warn"
    ok = by_code(paste("/models/Qwen3-8B"))["SERVE311"]
    assert ok.status.value == "pass" and "published config.json of Qwen/Qwen3-8B" in ok.evidence[0].excerpt


def test_a_model_outside_the_catalogue_or_a_near_name_is_not_stood_in_for():
    """The catalogue's name (id, or a directory of that name), or that name with only a converted copy's words after
    it; any other word after it (a fine-tune, a distillation) may be anything."""
    for model in ("/models/my-finetune", "/models/Qwen3-30B-A3B-finetune", "/models/Qwen3-30B-A3B-w8a8-sft"):
        f = by_code(paste(model))["SERVE311"]
        assert f.status.value == "skip" and "serve_model" in f.message, (model, f.message)


def test_a_converted_copy_s_directory_is_read_through_the_published_config():
    """msModelSlim's exports are named after the published model (`Qwen3-30B-A3B-w8a8`, `…-W4A8-dynamic`,
    `Qwen3.5-27B-w8a8-mtp`): the architecture is the published one's, so #1813's rule judges the copy too, and the
    finding says which config stood in."""
    from ascend_doctor.deploy.catalogue import published_name

    assert published_name("Qwen3.5-27B-w8a8-mtp") == "Qwen3.5-27B"
    assert published_name("Qwen3-30B-A3B-W4A8-dynamic") == "Qwen3-30B-A3B"
    assert published_name("Qwen3-30B-A3B") == "Qwen3-30B-A3B" and published_name("w8a8") == "w8a8"
    f = by_code(paste("/models/Qwen3-30B-A3B-w8a8"))["SERVE311"]
    assert f.status.value == "warn" and "REL-A19-001" in f.message, f.message
    assert "published config.json of Qwen/Qwen3-30B-A3B" in f.evidence[0].excerpt


def test_what_the_catalogue_copy_does_not_show_stays_not_in_the_paste():
    """The config only: the quantization description and the model's files are the user's, never the catalogue's."""
    by = by_code(paste("/models/Qwen3-30B-A3B"))
    assert by["SERVE204"].status.value == "skip" and "serve_model.quant_description_files" in by["SERVE204"].message
    assert "catalogue's copy" in by["SERVE204"].message


def test_a_failure_the_model_did_not_make_stays_a_failure():
    """SERVE313 fails on the JSON option alone; the catalogue model beside it does not soften that."""
    text = ("```\n$ pip list | grep vllm\nvllm                  0.13.0\nvllm-ascend           0.13.0\n"
            "$ vllm serve /models/Qwen3-8B --kv-transfer-config "
            "'{\"kv_connector\":\"MooncakeConnectorV1\",\"kv_role\":\"kv_both_\"}'\n```\n")
    f = by_code(text)["SERVE313"]
    assert f.status.value == "fail" and "kv_role 'kv_both_'" in f.message


def test_a_json_option_on_a_vllm_older_than_the_strictness_rows_is_judged_not_crashed():
    """An image of 0.9.2rc1 (vLLM 0.9.2, recorded before the config decorator's `extra=` was read) with a
    `--compilation-config`: whether the release forbids unknown keys is looked up in a row that has no such list,
    which once crashed SERVE313 (`KeyError: 'config_strict'`); the keys are judged as any other."""
    text = ("image: quay.io/ascend/vllm-ascend:v0.9.2rc1-310p\n"
            "vllm serve /models/Qwen3-8B --enforce-eager --dtype float16 "
            "--compilation-config '{\"custom_ops\":[\"none\", \"+rms_norm\"]}'\n")
    f = by_code(text)["SERVE313"]
    assert f.status.value != "error" and "crashed" not in f.message, f.message


def test_the_variables_a_paste_sets_are_read_and_values_it_cannot_know_are_not():
    p = read_paste("export VLLM_USE_V1=1 HCCL_BUFFSIZE=\"512\"\nexport HOME_DIR=$HOME\n"
                   "docker run -it -e ASCEND_RT_VISIBLE_DEVICES=0,1 --env=TASK_QUEUE_ENABLE=2 \\\n"
                   "  -e OMP_NUM_THREADS=16 img\nENV PYTORCH_NPU_ALLOC_CONF=expandable_segments:True\n"
                   "pip install -e .\n")
    got = {k: (s.value, s.source) for k, s in p.exports.items()}
    assert got == {"VLLM_USE_V1": ("1", "export line"), "HCCL_BUFFSIZE": ("512", "export line"),
                   "ASCEND_RT_VISIBLE_DEVICES": ("0,1", "docker -e option"),
                   "TASK_QUEUE_ENABLE": ("2", "docker -e option"), "OMP_NUM_THREADS": ("16", "docker -e option"),
                   "PYTORCH_NPU_ALLOC_CONF": ("expandable_segments:True", "export line")}


def test_an_unset_variable_is_not_concluded_from_a_paste_that_shows_only_its_exports():
    """VLLM_USE_V1 exported: the V0-engine rules of 0.9.1 are judged; not exported, whether it is set is not shown
    (never "unset"), and SERVE402's "no VLLM_* variables set" is no pass on exports that name none."""
    base = ("```\n$ pip list | grep vllm\nvllm                0.9.1\nvllm_ascend         0.9.1\n```\n"
            "```\nvllm serve /models/Qwen3-8B\n```\n")
    unset = by_code("export HCCL_BUFFSIZE=512\n" + base)
    assert unset["SERVE311"].status.value == "skip", unset["SERVE311"].message
    assert "server_env.VLLM_USE_V1" in unset["SERVE311"].message and "HCCL_BUFFSIZE" in unset["SERVE311"].message
    seen = by_code("export VLLM_USE_V1=1\n" + base)
    assert seen["SERVE311"].status.value == "pass", seen["SERVE311"].message
    assert unset["SERVE402"].status.value == "skip" and "VLLM_*" in unset["SERVE402"].message


def test_an_official_image_brings_its_vllm_a_release_named_in_prose_does_not():
    """quay.io/ascend/vllm-ascend:v0.9.2rc1-310p ships vLLM 0.9.2 (the release's one pair in the matrix): the stack
    checks that need vLLM run; "we use vllm-ascend 0.9.2rc1" says nothing of the vLLM beside it."""
    from ascend_doctor.triage.run import triage_text as run

    cmd = "```\nvllm serve /models/Qwen3-8B --max-model-len 8192\n```\n"
    seen = run("docker pull quay.io/ascend/vllm-ascend:v0.9.2rc1-310p\n" + cmd, "p.md", REG).triage.seen
    assert seen["vllm"] == "0.9.2 (the vLLM of the vllm-ascend 0.9.2rc1 image, line 1)", seen
    assert seen["vllm_ascend"].startswith("0.9.2rc1 (the vllm-ascend image the paste names")
    prose = run("We installed vllm-ascend 0.9.2rc1 with pip.\n" + cmd, "p.md", REG).triage.seen
    assert "vllm" not in prose and prose["vllm_ascend"].startswith("0.9.2rc1")
    listed = run("image vllm-ascend:v0.9.2rc1\n```\n$ pip list | grep -E 'vllm|torch'\ntorch     2.5.1\n"
                 "vllm      0.9.1\n```\n" + cmd, "p.md", REG).triage.seen
    assert listed["vllm"].startswith("0.9.1 "), listed  # what the paste lists beats the image's pair


def test_export_lines_that_do_not_show_dynamic_eplb_leave_the_named_references_judged():
    """SERVE313 asks whether DYNAMIC_EPLB turns EPLB on; a paste whose exports do not show it still gets its named
    connector judged (a fail), and a command that names nothing is a skip, not an unknown."""
    head = ("export HCCL_BUFFSIZE=512\n```\n$ pip list | grep vllm\nvllm                  0.13.0\n"
            "vllm-ascend           0.13.0\n")
    bad = by_code(head + "$ vllm serve /models/Qwen3-8B --kv-transfer-config "
                         "'{\"kv_connector\":\"NoSuchConnector\",\"kv_role\":\"kv_both\"}'\n```\n")["SERVE313"]
    assert bad.status.value == "fail" and "NoSuchConnector" in bad.message, bad.message
    none = by_code(head + "$ vllm serve /models/Qwen3-8B\n```\n")["SERVE313"]
    assert none.status.value == "skip" and "named" in none.message


def test_variables_written_before_vllm_serve_are_the_command_s_own():
    """`VLLM_ASCEND_ENABLE_FLASHCOMM1=1 vllm serve …` (vllm-ascend's launch scripts): the command's environment, read
    token by token from the end of the line (a line of 250,000 `a=b` words before an unrelated word stays linear)."""
    import time

    p = read_paste("$ VLLM_USE_V1=1 HCCL_BUFFSIZE=512 vllm serve /models/Qwen3-8B --tensor-parallel-size 2\n")
    assert p.serve_argv[:3] == ["env", "VLLM_USE_V1=1", "HCCL_BUFFSIZE=512"] and p.serve_argv[3:5] == ["vllm", "serve"]
    assert read_paste("nohup vllm serve /m &\n").serve_argv == ["vllm", "serve", "/m"]
    t0 = time.monotonic()
    assert read_paste("a=b " * 250_000 + "x vllm serve /m\n").serve_argv == ["vllm", "serve", "/m"]
    assert time.monotonic() - t0 < 2.0


def test_template_placeholders_and_the_api_server_entry_are_commands_too():
    """A tutorial-style `vllm serve <MODEL_DIR> --port <PORT> …` keeps its options (`<MODEL_DIR>` is a placeholder,
    not an input redirection), and no catalogue model stands in for a model the paste does not give (vLLM's default
    Qwen3-0.6B is not what the author ran); `python -m vllm.entrypoints.openai.api_server --model …` is read like
    `vllm serve`."""
    p = read_paste("```bash\nvllm serve <MODEL_DIR> \\\n  --port <PORT> \\\n  --tensor-parallel-size 2\n```\n")
    assert p.serve_argv == ["vllm", "serve", "<MODEL_DIR>", "--port", "<PORT>", "--tensor-parallel-size", "2"]
    assert read_paste("vllm serve /m < prompts.txt\n").serve_argv == ["vllm", "serve", "/m"]
    by = by_code(paste("", env_lines="").replace("vllm serve  --max-model-len", "vllm serve --max-model-len"))
    assert by["SERVE311"].status.value == "skip" and "serve_model" in by["SERVE311"].message
    api = read_paste("python3 -m vllm.entrypoints.openai.api_server --model=/models/Qwen3-8B --tensor-parallel-size 4\n")
    assert api.serve_argv[:3] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    assert by_code(paste("", env_lines="").replace("vllm serve  --max-model-len",
                                                   "python -m vllm.entrypoints.openai.api_server --model "
                                                   "/models/Qwen3-30B-A3B --max-model-len"))["SERVE311"].status.value \
        == "warn"


def test_a_model_the_paste_names_on_a_line_stands_in_where_the_command_s_is_not_shown():
    """`vllm serve "$MODEL_PATH"` with the variable never set, and `# model: Qwen3-30B-A3B` above it: the labelled
    line names the model (and says so); a command that names its own model is not overridden by such a line."""
    text = paste('"$MODEL_PATH"').replace("The image is", "# model: Qwen3-30B-A3B (w8a8)\nThe image is")
    f = by_code(text)["SERVE311"]
    assert f.status.value == "warn" and "REL-A19-001" in f.message, f.message
    own = by_code(paste("/models/Qwen3-8B").replace("The image is", "model: Qwen3-30B-A3B\nThe image is"))
    assert own["SERVE311"].status.value == "pass"  # the command's own model decides
    assert by_code(paste('"$MODEL_PATH"'))["SERVE311"].status.value == "skip"  # nothing names it

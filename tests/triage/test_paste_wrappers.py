"""How a pasted serve command is wrapped and how a version is stated, in forms issue authors use that the paste
reader once missed (the h38h judges, generically: a command handed to `bash -c`, a container whose entrypoint is
vllm, a JSON value that opens on the next line, a version on a markdown heading or comment line). Fixtures written
here, after those forms."""

from __future__ import annotations

from ascend_doctor.triage.paste import read_paste

SERVE = ["vllm", "serve", "/models/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len", "8192"]


def test_a_command_handed_to_a_shell_by_a_wrapper_is_the_quoted_string():
    text = ("nohup bash -c 'vllm serve /models/Qwen3-8B \\\n  --tensor-parallel-size 2 \\\n"
            "  --max-model-len 8192' > serve.log 2>&1 &\n")
    f = read_paste(text)
    assert f.serve_argv == SERVE and f.serve_lines == "1-3" and not f.serve_open
    one = read_paste('su vllm -c "vllm serve /models/Qwen3-8B --tensor-parallel-size 2 --max-model-len 8192"\n')
    assert one.serve_argv == SERVE
    # a string the paste never closes is not read as a command
    assert read_paste("bash -c 'vllm serve /models/Qwen3-8B \\\n  --tensor-parallel-size 2 \\\n").serve_argv is None


def test_a_container_whose_entrypoint_is_vllm_serves_what_follows_the_image():
    text = ("docker run --rm --name vllm --device /dev/davinci0 \\\n  -e VLLM_USE_V1=1 --entrypoint vllm \\\n"
            "  quay.io/ascend/vllm-ascend:v0.18.0rc1 serve /models/Qwen3-8B \\\n"
            "  --tensor-parallel-size 2 --max-model-len 8192\n")
    assert read_paste(text).serve_argv == SERVE
    # another entrypoint, or vllm's without `serve`, is no serve command
    assert read_paste("docker run --entrypoint bash img -c 'echo serve'\n").serve_argv is None
    assert read_paste("docker run --entrypoint vllm img --version\n").serve_argv is None


def test_a_json_value_that_opens_on_the_next_line():
    text = ("vllm serve /models/Qwen3-8B --tensor-parallel-size 2 --speculative-config '\n{\n"
            '  "method": "ngram",\n  "num_speculative_tokens": 3\n}\' --max-model-len 8192\n')
    f = read_paste(text)
    spec = f.serve_argv[f.serve_argv.index("--speculative-config") + 1]
    assert '"num_speculative_tokens": 3' in spec and f.serve_argv[-2:] == ["--max-model-len", "8192"]


def test_a_version_stated_on_a_heading_or_comment_line():
    f = read_paste("# vllm-ascend: v0.18.0rc1\n## vllm 0.18.0\n# CANN: 8.5.0\n# torch_npu: 2.9.0\n"
                   "# driver: 25.2.0\n# hardware: Atlas 800I A2\n")
    assert f.versions["cann"][0].value == "8.5.0" and f.driver_version.value == "25.2.0"
    assert f.packages["vllm"][0].value == "0.18.0" and f.packages["torch-npu"][0].value == "2.9.0"
    # a comment that says more than a version, a shebang and a rule state nothing
    g = read_paste("#!/bin/bash\n# torch 2.1 is required by the old scripts\n#### CANN 8.0\n")
    assert "torch" not in g.packages and "cann" not in g.versions


def test_statements_the_reader_once_missed():
    f = read_paste("CANN: Ascend-cann-toolkit version=8.3.RC1 (innerversion=V100R001C23), path=/usr/local/Ascend/x\n"
                   "Python 3.11.13\ndriver: 24.1.rc3.5\n版本: vllm 0.9.1 + vllm-ascend 0.9.1rc1\n"
                   "torch 2.5.1 / torch_npu 2.5.1.post1\n")
    assert f.versions["cann"][0].value == "8.3.RC1" and f.python_version.value == "3.11.13"
    assert f.driver_version.value == "24.1.rc3.5"
    assert {k: v[0].value for k, v in f.packages.items()} == {
        "vllm": "0.9.1", "vllm-ascend": "0.9.1rc1", "torch": "2.5.1", "torch-npu": "2.5.1.post1"}
    g = read_paste("环境：vllm 0.9.1（官方镜像）+ vllm-ascend 0.9.1rc1 (source build) + torch_npu 2.5.1 (pip)\n")
    assert g.packages["vllm"][0].value == "0.9.1" and g.packages["torch-npu"][0].value == "2.5.1"
    assert "vllm-ascend" not in g.packages  # a source build named after its last tag is not that release
    # a piece that says more than `name version` states nothing
    assert "vllm" not in read_paste("we tried vllm 0.9.1 + a patch / nothing else\n").packages


def test_a_release_branch_build_is_after_its_tag():
    """`vllm-ascend: v0.11.0-dev` names the v0.11.0-dev branch: a build after the tag, not before 0.11.0rc1 (as
    PEP 440 would order `0.11.0.dev0`)."""
    f = read_paste("vllm: v0.11.0\nvllm-ascend: v0.11.0-dev\n")
    assert f.packages["vllm-ascend"][0].value == "0.11.0.post0.dev0"


def test_the_cann_an_author_changed_to_beats_the_image_s():
    f = read_paste("# image: quay.io/ascend/vllm-ascend:v0.11.0rc1 (310p image), CANN inside the container manually "
                   "upgraded to 8.3.0beta1\n")
    assert f.image.value == "0.11.0rc1" and f.image_family.value == "310P"
    assert f.versions["cann"][0].value == "8.3.0beta1"
    assert read_paste("CANN 升级到 8.5.0\n").versions["cann"][0].value == "8.5.0"


def test_a_command_cut_mid_option_or_quoted_in_comments_is_not_all_there():
    f = read_paste("vllm serve /models/Qwen3-8B \\\n  --tensor-parallel-size 2 \\\n  --max-num...\n# (cut off)\n")
    assert f.serve_argv == ["vllm", "serve", "/models/Qwen3-8B", "--tensor-parallel-size", "2"] and f.serve_open
    g = read_paste("# options stated in the thread:\n#   vllm serve /models/Qwen3-8B\n#   --enforce-eager\n")
    assert g.serve_argv[:3] == ["vllm", "serve", "/models/Qwen3-8B"] and g.serve_open
    assert not read_paste("vllm serve /models/Qwen3-8B --enforce-eager\n").serve_open


def test_a_json_value_on_the_lines_after_its_option_and_the_command_going_on_after_it():
    """`--speculative-config \\` then `'{…` over lines then `}' \\` then more options: the value whole, and the
    options after it read (the joined text once ended on a continuation, which no shell reader accepts)."""
    for text in ("vllm serve /m \\\n  --speculative-config \\\n  '{\"method\": \"mtp\",\n"
                 "    \"num_speculative_tokens\": 1}' \\\n  --port 8000\n",
                 "vllm serve /m \\\n  --speculative-config '{\n    \"method\": \"mtp\", \"num_speculative_tokens\": 1\n"
                 "  }' \\\n  --port 8000\n"):
        argv = read_paste(text).serve_argv
        assert argv[-2:] == ["--port", "8000"] and '"num_speculative_tokens": 1' in argv[4], argv
    assert read_paste("vllm serve /m --tp 2 \\\n").serve_argv == ["vllm", "serve", "/m", "--tp", "2"]


def test_a_note_in_brackets_after_a_version_or_a_label():
    f = read_paste("# vllm: 0.18.0 (from the image)\n# driver (npu-smi): 25.2.0\n"
                   "# vllm-ascend: 0.18.0rc1 (source build)\n")
    assert f.packages["vllm"][0].value == "0.18.0" and f.driver_version.value == "25.2.0"
    assert "vllm-ascend" not in f.packages  # a build noted as from source is not the release


def test_an_npu_smi_table_pasted_inside_comments_is_the_table():
    rows = ["+------------------------------------------------------------------------------------------------+",
            "| npu-smi 25.2.0                   Version: 25.2.0                                               |",
            "+---------------------------+---------------+----------------------------------------------------+",
            "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
            "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
            "+===========================+===============+====================================================+",
            "| 0     910B3               | OK            | 90.3        40                0    / 0             |",
            "| 0                         | 0000:C1:00.0  | 0           0    / 0          3404 / 65536         |",
            "+===========================+===============+====================================================+"]
    f = read_paste("\n".join("# " + r for r in rows) + "\n")
    assert f.driver_version.value == "25.2.0" and [s.kind for s in f.sections] == ["npu_smi_info"]


def test_a_long_run_of_key_value_lines_is_read_once():
    """A run of `k=v` lines was scanned again from each of its lines for a key=value file (quadratic: 50,000 lines
    took minutes). A file (version.info, CANN's install info) is a few dozen lines; a longer run is read once."""
    import time

    from ascend_doctor.triage.paste import KV_FILE_LINES

    t0 = time.monotonic()
    read_paste("  x=1,\n" * 50_000)
    assert time.monotonic() - t0 < 5.0
    head = "Version=24.1.rc3\nascendhal_version=7.35.23\n"
    assert read_paste(head + "k=v\n" * 5).seen("driver_version_info")
    assert not read_paste(head + "k=v\n" * (KV_FILE_LINES + 5)).seen("driver_version_info")  # that long: no file


def test_versions_listed_with_commas_or_in_a_note_after_another_version():
    """The h38i judges, generically: versions given as `name=version` pieces of one comma-separated line, and in a
    bracketed note after another part's version, were asked for again."""
    def read(line: str) -> dict:
        return {k: [s.value for s in v] for k, v in read_paste(line + "\n").versions.items()}

    assert read("vllm=0.9.1, vllm-ascend=0.9.1rc1; torch_npu=2.5.1") == {
        "vllm": ["0.9.1"], "vllm_ascend": ["0.9.1rc1"], "torch_npu": ["2.5.1"]}
    assert read("- vllm-ascend: 0.10.0rc1 (torch-npu 2.5.1.post1.dev20250619, CANN 8.2.RC1)") == {
        "vllm_ascend": ["0.10.0rc1"], "torch_npu": ["2.5.1.post1.dev20250619"], "cann": ["8.2.RC1"]}
    assert read("vllm-ascend 0.9.1rc1 (official image)") == {"vllm_ascend": ["0.9.1rc1"]}  # read once
    # a sentence with a comma states nothing; a note that says the build is from a branch still holds
    assert read("I use torch 2.1, vllm 0.9.1") == {} and read("vllm 0.9.1, which I built myself") == {}
    assert read("vllm-ascend 0.11.0rc0 (main branch)") == {}


def test_more_forms_of_a_stated_version_and_a_stated_absence():
    """The h38i FINAL judge's remaining false warnings, generically (read once h38i was measured): an internal
    `CANN_Version: CANN x` label, CANN's directory name with its arch (`8.3.RC1/x86_64-linux`), one value for a list of
    the toolkit's names, pip list rows with the editable location column, and a part the author says is missing."""
    from ascend_doctor.triage.answer import missing_pieces

    def read(line: str) -> dict:
        return {k: [s.value for s in v] for k, v in read_paste(line + "\n").versions.items()}

    assert read("# CANN_Version: CANN 8.5.0.B030") == {"cann": ["8.5.0.B030"]}
    assert read("cann=8.3.RC1/x86_64-linux") == {"cann": ["8.3.RC1"]}
    assert read("CANN / ascend-toolkit / nnal: 8.2RC1") == {"cann": ["8.2RC1"]}
    assert read("# vllm_ascend                              0.23.0rc1     /vllm-workspace/vllm-ascend") == {
        "vllm_ascend": ["0.23.0rc1"]}
    assert read("vllm 0.9.1 is installed in /usr/lib") == {}  # a sentence, not a list row
    f = read_paste("vllm: 0.7.3\nvllm-ascend: 0.7.3\n#   torch-npu: not installed\n")
    assert "torch_npu" in f.absent and not any("torch-npu version" in m for m in missing_pieces(f))
    assert read_paste("CANN 8.1.RC1 is not installed on the host\n").absent == {}


def test_a_comment_that_names_the_command_in_prose_is_no_command():
    """An h38j OLD judge, generically: a comment mentioning the launch command was read as a `vllm serve` line, and
    its words failed SERVE105 as positional arguments. A commented command (a quote of one) is still read."""
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.report import Status
    from ascend_doctor.triage.run import triage_text

    stack = "vllm 0.18.0\nvllm-ascend 0.18.0rc1\n"
    prose = triage_text(stack + "# vllm serve command not shown in the excerpt\n", "paste.md", load_registry())
    found = {f.code: f for f in prose.findings}
    assert found["SERVE105"].status == Status.SKIP and "reads as prose" in found["SERVE105"].message
    assert not any(s.kind == "serve_command" for s in prose.triage.sections)
    quoted = triage_text(stack + "# vllm serve /models/Qwen3-8B --max-model-len 4096\n", "paste.md",
                         load_registry())
    found = {f.code: f for f in quoted.findings}
    assert found["SERVE105"].status != Status.FAIL and "reads as prose" not in found["SERVE105"].message


def test_a_bold_label_a_shared_value_and_the_toolkit_s_own_name():
    """The h38j OLD judges, generically: versions on markdown-bold `name: version` lines, one value for two parts
    named together (`a && b: X`), and CANN under its toolkit's name were asked for again."""
    def read(line: str) -> dict:
        return {k: [s.value for s in v] for k, v in read_paste(line + "\n").versions.items()}

    assert read("**vllm-ascend**: 0.11.0") == {"vllm_ascend": ["0.11.0"]}
    assert read("- **CANN版本**：8.3.RC1") == {"cann": ["8.3.RC1"]}
    assert read("vllm && vllm-ascend:0.11.0") == {"vllm": ["0.11.0"], "vllm_ascend": ["0.11.0"]}
    assert read("Ascend-toolkit 8.0.RC2") == {"cann": ["8.0.RC2"]}
    assert read("**note**: use it") == {} and read("vllm && the rest: see below") == {}


def test_a_release_named_as_the_image_that_runs():
    """vllm-ascend#9009 (development material): `image: vllm-ascend v0.19.1rc1 (official image)` names the official
    image, whose recipe gives the vLLM it holds (there, one without the speculative method the command asks for)."""
    for line in ("# image: vllm-ascend v0.19.1rc1 (official image)", "镜像：vllm-ascend 0.19.1rc1",
                 "vllm-ascend v0.19.1rc1 (the official image)"):
        f = read_paste(line + "\n")
        assert f.image is not None and f.image.value == "0.19.1rc1", line
    assert read_paste("vllm-ascend 0.19.1rc1\n").image is None  # a version line names no image
    assert read_paste("vllm-ascend 0.11.0rc0 (main branch)\n").image is None


def test_more_cann_labels_and_a_trailing_comment_that_names_the_command():
    """The h38j NEW judges, generically: CANN's label with words before its colon, or the toolkit's name after it,
    was not read; a trailing comment on a container-start line that mentions `vllm serve` in words was read as the
    command (SERVE105 failed its words)."""
    def read(line: str) -> dict:
        return {k: [s.value for s in v] for k, v in read_paste(line + "\n").versions.items()}

    assert read("CANN toolkit version (installed): 8.3.RC1") == {"cann": ["8.3.RC1"]}
    assert read("CANN Ascend-cann-toolkit: 8.2.RC1") == {"cann": ["8.2.RC1"]}
    assert read("CANN is needed: 8") == {} and read("CANN: 8.1.RC1") == {"cann": ["8.1.RC1"]}
    text = "docker run -it --rm \\\n  quay.io/ascend/vllm-ascend:v0.18.0 bash  # then vllm serve with the model\n"
    assert read_paste(text).serve_argv is None
    assert read_paste("VLLM_USE_V1=1 vllm serve /m --max-model-len 4096  # the launch\n").serve_argv[-2:] == [
        "--max-model-len", "4096"]


def test_bold_markers_a_bracketed_note_and_an_arithmetic_expansion():
    # the h38s judges, generically: a reporter's Markdown bold inside the command, a note in brackets that names the
    # command, and `$((…))` with blanks inside were read as options and positional arguments (false SERVE105 fails)
    bold = read_paste("```\n**vllm serve /models/Qwen3-8B** --tensor-parallel-size 2 \\\n"
                      "  **--max-model-len 8192**\n```\n")
    assert bold.serve_argv == SERVE
    spread = read_paste("vllm serve /models/Qwen3-8B --kv-transfer-config \\\n  '{\n  \"kv_connector\": \"X\",\n"
                        "  \"kv_role\": \"kv_both\"**\n}'\n")
    assert spread.serve_argv[-1].replace(" ", "").replace("\n", "") == '{"kv_connector":"X","kv_role":"kv_both"}'
    assert read_paste("[... the rest of the script (image tag, vllm serve flags) is not shown ...]\n").serve_argv is None
    assert read_paste("(then vllm serve with the usual flags)\n").serve_argv is None
    arith = read_paste("vllm serve /models/Qwen3-8B --max-num-seqs $((CARDS * 16)) --port 8000\n")
    assert arith.serve_argv == ["vllm", "serve", "/models/Qwen3-8B", "--max-num-seqs", "$((CARDS * 16))",
                                "--port", "8000"]


def test_npu_smi_rows_pasted_without_the_headers():
    from tests.helpers import DATA

    lines = (DATA / "npu_smi" / "info_a2_8x910B3_tp4_procs.txt").read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| 0     910B3"))
    f = read_paste("The NPUs:\n" + "\n".join(lines[start:start + 6]) + "\n\nvllm serve /models/Qwen3-8B\n")
    assert f.npu_smi_fragment and f.npu_smi_lines == "2-7" and f.serve_argv is not None
    # a whole table later in the paste is the table
    whole = read_paste("\n".join(lines[start:start + 6]) + "\n\n" + "\n".join(lines) + "\n")
    assert not whole.npu_smi_fragment and [s.kind for s in whole.sections].count("npu_smi_info") == 1


def test_a_command_followed_by_a_note_that_text_was_left_out_is_open():
    cut = read_paste("vllm serve /models/Qwen3-8B --tensor-parallel-size 2 --gpu-m\n[... the rest is not shown ...]\n")
    assert cut.serve_open
    for note in ("...\n", "<snip>\n", "(truncated)\n"):
        assert read_paste("vllm serve /models/Qwen3-8B --tensor-parallel-size 2\n\n" + note).serve_open, note
    assert not read_paste("vllm serve /models/Qwen3-8B --tensor-parallel-size 2\n\nINFO server started\n").serve_open


def test_a_name_colon_version_row_among_others_is_a_version_not_an_image():
    listed = read_paste("Environment:\nvllm:v0.11.0\nvllm-ascend:v0.11.0\ntorch-npu:2.7.1\n")
    assert listed.image is None and listed.versions["vllm_ascend"][0].value == "0.11.0"
    # controls: a registry path, and a tag on a line of its own, are the image
    assert read_paste("docker pull quay.io/ascend/vllm-ascend:v0.11.0\n").image.value == "0.11.0"
    assert read_paste("vllm-ascend:v0.11.0\n").image.value == "0.11.0"


def test_a_traceback_behind_process_tags_without_its_header_and_one_with_frames_cut_out():
    tagged = read_paste('(ApiServer_0 pid=559)   File "/vllm/v1/engine/core_client.py", line 496, in __init__\n'
                        '(ApiServer_0 pid=559)     raise TimeoutError("Timed out waiting for engines")\n'
                        "(ApiServer_0 pid=559) TimeoutError: Timed out waiting for engines\n")
    assert [(t.label, t.cut) for t in tagged.tracebacks] == [("TimeoutError: Timed out waiting for engines", False)]
    elided = read_paste('Traceback (most recent call last):\n  File "/a.py", line 1, in f\n    g()\n[...]\n'
                        '  File "/b.py", line 9, in g\n    raise ValueError("x")\nValueError: x\n')
    assert [(t.label, t.cut) for t in elided.tracebacks] == [("ValueError: x", False)]
    assert elided.tracebacks[0].frames == ["/a.py:1 in f", "/b.py:9 in g"]


def test_a_version_that_ends_a_sentence_loses_its_full_stop():
    for text in ("vllm-ascend: v0.11.0.\n", "vllm-ascend：v0.11.0.\n"):
        assert read_paste(text).versions["vllm_ascend"][0].value == "0.11.0", text
    assert read_paste("CANN: 8.2.RC1.\n").versions["cann"][0].value == "8.2.RC1"


def test_the_driver_an_npu_smi_board_view_reports():
    board = read_paste("npu-smi info -t board -i 0\n        NPU ID                         : 0\n"
                       "        Software Version               : 25.2.0\n"
                       "        Firmware Version               : 7.7.0.6.236\n")
    assert board.driver_version.value == "25.2.0" and "Software Version" in board.driver_version.source
    assert read_paste("Software Version: 3.1.4\n").driver_version is None  # not an Ascend driver's numbering


def test_the_machine_a_hostnamectl_or_lscpu_block_names():
    assert read_paste("  Operating System: Ubuntu 22.04.4 LTS\n      Architecture: arm64\n").machine == "aarch64"
    assert read_paste("Architecture:            x86_64\nCPU op-mode(s):        32-bit, 64-bit\n").machine == "x86_64"
    assert read_paste("Architecture: see the design doc\n").machine is None


def test_an_error_put_above_its_cut_traceback_is_its_label():
    first = read_paste('RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\nTraceback (most recent call last):\n'
                       '  File "/a.py", line 1, in f\n    g()\n')
    assert [(t.label, t.cut) for t in first.tracebacks] == [
        ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", False)]
    prose = read_paste('It fails like this:\nTraceback (most recent call last):\n  File "/a.py", line 1, in f\n')
    assert [(t.label, t.cut) for t in prose.tracebacks] == [("", True)]

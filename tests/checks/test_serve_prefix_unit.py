"""SERVE326: the unit in which the server reuses cached prefixes. The figures are the ones upstream states:
DeepSeek-V4 at block 128 needs 16k shared tokens, 32k with MTP (the maintainer in vllm-ascend#10710); Qwen3.5-35B-A3B
at TP 2 gets a 2048-token block (vllm-ascend PR #7103's note); DCP multiplies the block
(`_ascend_resolve_kv_cache_block_sizes`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ascend_doctor.knowledge.prefix_unit import eagle_style, largest_ratio, prefix_unit
from ascend_doctor.report import Status
from tests.checks.test_serve_checks import QWEN, facts, on_release, run_check

CATALOGUE = Path(__file__).resolve().parents[2] / "matrices" / "deploy" / "models"
MTP = '--speculative-config {"method":"deepseek_mtp","num_speculative_tokens":1}'


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    """Model directories holding the catalogue's copies of the published config.json files."""
    root = tmp_path_factory.mktemp("models")
    for name, copy in (("DeepSeek-V4-Flash", "deepseek-ai--DeepSeek-V4-Flash.json"),
                       ("Qwen3.5-35B-A3B", "Qwen--Qwen3.5-35B-A3B.json")):
        (root / name).mkdir()
        shutil.copy(CATALOGUE / copy, root / name / "config.json")
    return root


def judge(model: str, extra: str, release: str):
    return run_check("SERVE326", on_release(facts(f"vllm serve {model} {extra}"), release))


def test_deepseek_v4_at_block_128_needs_16k_shared_tokens(models):
    v4 = models / "DeepSeek-V4-Flash"
    f = judge(v4, "-tp 8 --enable-prefix-caching --block-size 128", "0.20.2rc1")
    assert f.status == Status.WARN, f.message
    assert "whole units of 16384 tokens" in f.message and "128 (1:128 compressed attention)" in f.message
    assert "REL-B13-012" in f.message  # 0.20.2rc1 runs V4 at 128 whatever --block-size says
    assert "0.21.0rc1 or later and pass --block-size 32" in f.remediation
    default = judge(v4, "-tp 8 --enable-prefix-caching", "0.23.0")
    assert default.status == Status.WARN and "16384" in default.message, default.message
    assert "pass --block-size 32 (a unit of 4096 tokens" in default.remediation


def test_block_32_passes_and_mtp_doubles_what_must_be_shared(models):
    v4 = models / "DeepSeek-V4-Flash"
    ok = judge(v4, "-tp 8 --enable-prefix-caching --block-size 32", "0.26.0rc1")
    assert ok.status == Status.PASS and "whole units of 4096 tokens" in ok.message, ok.message
    mtp = judge(v4, f"-tp 8 --enable-prefix-caching --block-size 32 {MTP}", "0.22.1rc1")
    assert mtp.status == Status.WARN, mtp.message
    assert "at least 8192 tokens" in mtp.message and "deepseek_mtp recomputes the last matched unit" in mtp.message
    # a block V4 does not take is replaced by 32 from 0.21.0rc1 (REL-B13-011)
    odd = judge(v4, "-tp 8 --enable-prefix-caching --block-size 256", "0.23.0")
    assert odd.status == Status.PASS and "replaced by 32" in odd.message and "4096" in odd.message


def test_a_hybrid_gets_the_block_its_state_needs(models):
    qwen35 = models / "Qwen3.5-35B-A3B"
    f = judge(qwen35, "-tp 2 --enable-prefix-caching", "0.23.0")
    assert f.status == Status.PASS and "whole units of 2048 tokens" in f.message, f.message
    short = judge(qwen35, "-tp 2 --enable-prefix-caching --max-model-len 2048", "0.23.0")
    assert short.status == Status.WARN and "can never hit" in short.message, short.message
    old = judge(qwen35, "-tp 2 --enable-prefix-caching", "0.15.0rc1")
    assert old.status == Status.UNKNOWN and "predates prefix caching" in old.message


def test_decode_context_parallel_multiplies_the_block():
    f = judge(QWEN, "-tp 8 -dcp 8 --enable-prefix-caching", "0.23.0")
    assert f.status == Status.PASS and "whole units of 1024 tokens" in f.message and "REL-B13-003" in f.message
    never = judge(QWEN, "-tp 8 -dcp 8 --enable-prefix-caching --max-model-len 1024", "0.23.0")
    assert never.status == Status.WARN and "can never hit" in never.message
    assert "--decode-context-parallel-size" in never.remediation
    plain = judge(QWEN, "--enable-prefix-caching --block-size 16", "0.23.0")  # replaced by 128 on 0.12.0rc1+
    assert plain.status == Status.PASS and "whole units of 128 tokens" in plain.message


def test_what_it_does_not_judge_or_cannot_see():
    assert judge(QWEN, "--no-enable-prefix-caching", "0.23.0").status == Status.SKIP
    blind = on_release(facts("vllm serve /nowhere/model --enable-prefix-caching", model=False), "0.23.0")
    f = run_check("SERVE326", blind)
    assert f.status == Status.UNKNOWN and "not read" in f.message
    bad = judge(QWEN, "--enable-prefix-caching --block-size big", "0.23.0")
    assert bad.status == Status.UNKNOWN and "not an integer" in bad.message


def test_the_pieces():
    assert eagle_style("eagle3") and eagle_style("qwen3_5_mtp") and eagle_style("MTP")
    assert not eagle_style("ngram") and not eagle_style(None) and not eagle_style("suffix")
    assert largest_ratio({"compress_ratios": [0, 4, 128, True, "x"]}) == 128
    assert largest_ratio({"compress_ratios": "128"}) == 1 and largest_ratio({}) == 1
    u = prefix_unit(64, "why", ratio=128, dcp=2, pcp=2, eagle=True)
    assert u.unit == 64 * 128 * 4 and u.least_shared == 2 * u.unit and u.context_parallel


def test_a_paste_naming_deepseek_v4_is_judged_on_the_catalogue_copy():
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    paste = ("vllm-ascend: 0.23.0\nvllm: 0.23.0\n"
             "vllm serve /models/DeepSeek-V4-Flash-w8a8-mtp -tp 8 --enable-expert-parallel --enable-prefix-caching "
             "--block-size 128 --max-model-len 131072\n")
    report = triage_text(paste, "p.md", load_registry(entry_points=False), RunOptions())
    f = next(x for x in report.findings if x.code == "SERVE326")
    assert f.status == Status.WARN and "16384" in f.message, f.message
    assert json.dumps(f.details).count("catalogue:deepseek-ai/DeepSeek-V4-Flash") == 1


def test_a_cut_speculative_config_leaves_open_what_it_would_double():
    """A paste that ends inside --speculative-config: at block 32 the unit is 4096 tokens, 8192 with an MTP method
    — which the paste does not show, so no pass; at block 128 it warns either way."""
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    def on(block: int):
        paste = ("vllm-ascend: 0.23.0\nvllm: 0.23.0\n"
                 f"vllm serve /models/DeepSeek-V4-Flash-w8a8-mtp -tp 8 --enable-prefix-caching --block-size {block} "
                 "--speculative-config '{\"method\": \"deepseek_mtp\",\n")
        report = triage_text(paste, "p.md", load_registry(entry_points=False), RunOptions())
        return next(x for x in report.findings if x.code == "SERVE326")

    f = on(32)
    assert f.status == Status.UNKNOWN and "cut in the paste" in f.message and "8192" in f.message, f.message
    assert on(128).status == Status.WARN


def test_a_release_that_is_not_a_version_is_unknown():
    f = judge(QWEN, "--enable-prefix-caching", "main")
    assert f.status == Status.UNKNOWN and "main is not a release number" in f.message, f.message


def test_a_paste_that_cuts_the_command_before_any_block_size_leaves_the_deepseek_v4_unit_open():
    """On 0.21.0rc1+ DeepSeek-V4 keeps a --block-size of 32: a command the paste cuts may give one past the cut, so the
    16k unit of the default is not a finding; on 0.20.2rc1 (128 whatever it says) it still is."""
    from ascend_doctor.core.options import RunOptions
    from ascend_doctor.core.registry import load_registry
    from ascend_doctor.triage.run import triage_text

    def on(release: str):
        paste = (f"vllm-ascend: {release}\n"
                 "vllm serve /models/DeepSeek-V4-Flash-w8a8-mtp -tp 8 --enable-prefix-caching \\\n"
                 "  --max-model-len 131072 ...\n")
        report = triage_text(paste, "p.md", load_registry(entry_points=False), RunOptions())
        return next(x for x in report.findings if x.code == "SERVE326")

    f = on("0.23.0")
    assert f.status == Status.UNKNOWN and "a --block-size where it is cut" in f.message, f.message
    assert on("0.20.2rc1").status == Status.WARN


def test_prefix_caching_on_by_default_for_a_decoder_model_and_off_for_a_hybrid(models):
    # vLLM's EngineArgs: enable_prefix_caching None -> ModelConfig.is_prefix_caching_supported (0.13.0-0.22.1 sdists):
    # on for a decoder-only generative model (DeepSeek-V4 too), off for a hybrid ("still experimental")
    v4 = judge(models / "DeepSeek-V4-Flash", "-tp 8", "0.23.0")
    assert v4.status == Status.WARN and "16384" in v4.message, v4.message
    assert any("on by default" in str(e.excerpt) for e in v4.evidence)
    plain = judge(QWEN, "-tp 1", "0.23.0")
    assert plain.status == Status.PASS and "whole units of 128 tokens" in plain.message
    hybrid = judge(models / "Qwen3.5-35B-A3B", "-tp 2 --max-model-len 2048", "0.23.0")
    assert hybrid.status == Status.SKIP and "hybrid" in hybrid.message
    pooling = judge(QWEN, "--runner pooling", "0.23.0")
    assert pooling.status == Status.SKIP and "pooling" in pooling.message
    v0 = judge(QWEN, "-tp 1", "0.10.0rc1")
    assert v0.status == Status.SKIP and "VLLM_USE_V1" in v0.message
    assert "still reads VLLM_USE_V1" in v0.message  # the paired vLLM's envs.py (names-vllm env rows) says so
    off = judge(models / "DeepSeek-V4-Flash", "-tp 8 --no-enable-prefix-caching", "0.23.0")
    assert off.status == Status.SKIP and "turns prefix caching off" in off.message


def test_a_cut_command_leaves_the_default_open(models):
    from ascend_doctor.parsers.serve_cmdline import ServeCommand

    f = facts(f"vllm serve {models / 'DeepSeek-V4-Flash'} -tp 8 --block-size 32")
    cmd = f["serve_cmd"]
    assert isinstance(cmd, ServeCommand)
    cmd.partial = True
    cut = run_check("SERVE326", on_release(f, "0.23.0"))
    # at block 32 the unit is 4096: a pass needs no caveat; at 128 (the default) a warning would
    assert cut.status == Status.PASS
    g = facts(f"vllm serve {models / 'DeepSeek-V4-Flash'} -tp 8 --block-size 128")
    g["serve_cmd"].partial = True
    open_ = run_check("SERVE326", on_release(g, "0.20.2rc1"))
    assert open_.status == Status.UNKNOWN and "prefix caching is on by default here" in open_.message

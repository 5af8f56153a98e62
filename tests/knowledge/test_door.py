"""The one door to the shipped tables: every file under matrices/ is a named table, a `--matrix` layer can change a
row of any of them (and the verdict that reads it), errors name the layer and its row, and nothing outside the
knowledge package reads a table by itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.core.errors import InputError
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.files import builtin_matrices_dir, matrix_files
from ascend_doctor.knowledge.tables import TABLES
from ascend_doctor.report import Status
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import REPO, run_check


def layer(tmp_path: Path, text: str, name: str = "site.toml") -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_every_file_under_matrices_is_a_table_the_door_knows():
    root = builtin_matrices_dir()
    named = {str(p.relative_to(root)) for p in matrix_files()} | {f"{t}.toml" for t in TABLES}
    shipped = {str(p.relative_to(root)) for p in root.rglob("*.toml")}
    assert shipped == named
    k = Knowledge()
    for name in TABLES:
        assert k.table(name) is not None  # every shipped table validates


# A call that reads a table by itself, or a path into matrices/: only ascend_doctor/knowledge may have them.
OUTSIDE = re.compile(r"matrices/|builtin_matrices_dir|builtin_dir\(\"matrices\"\)|shipped_file|matrix_files|"
                     r"load_matrix|\bload_model\(|_rules\(\)|read_toml\(")


def test_nothing_outside_the_knowledge_package_reads_a_table():
    # The user's own config file is read with read_toml: it is not a table of the doctor's.
    allowed = {"ascend_doctor/core/config.py": {"read_toml("}}
    found = []
    files = [*sorted((REPO / "ascend_doctor").rglob("*.py")), *sorted((REPO / "checks").glob("*.py"))]
    for path in files:
        rel = str(path.relative_to(REPO))
        if rel.startswith("ascend_doctor/knowledge/") or rel == "ascend_doctor/core/paths.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in OUTSIDE.finditer(line):
                if m.group(0) not in allowed.get(rel, ()):
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert found == []


def test_a_layer_names_its_table_and_an_unknown_one_is_refused_with_a_suggestion(tmp_path):
    bad = layer(tmp_path, 'table = "serve/tool-parser-isues"\n')
    with pytest.raises(InputError, match=r"table: 'serve/tool-parser-isues' is not a table the doctor ships; did "
                                         r"you mean serve/tool-parser-issues\?"):
        Knowledge([bad]).check()


def test_a_faulty_row_is_named_by_the_layer_and_its_own_row_number(tmp_path):
    p = layer(tmp_path, 'table = "deploy/chips"\n[[chip]]\nid = "910B9"\nfamily = "A2"\nmemory_mib = -1\n'
                        'sources = ["site"]\n')
    with pytest.raises(InputError) as e:
        Knowledge([p]).chips
    assert str(e.value).startswith(f"chip table {p}: chip[0] (910B9).memory_mib: must be greater than 0")


def test_two_rows_with_one_id_in_a_layer_are_refused(tmp_path):
    p = layer(tmp_path, 'table = "serve/release-rules"\n[[release_rule]]\nid = "X"\n[[release_rule]]\nid = "X"\n')
    with pytest.raises(InputError, match=r"release_rule\[1\] \(X\)\.id: duplicate id \(also release_rule\[0\]\)"):
        Knowledge([p]).release_rules


def test_matrix_validate_says_where_each_row_went(tmp_path):
    chips = layer(tmp_path, 'table = "deploy/chips"\n[[chip]]\nid = "910B3"\nfamily = "A2"\nmemory_mib = 65536\n'
                            'sources = ["site"]\n[[chip]]\nid = "910X"\nfamily = "A2"\nmemory_mib = 1024\n'
                            'sources = ["site"]\n', "chips.toml")
    r = CliRunner().invoke(cli, ["matrix", "validate", chips])
    assert r.exit_code == 0, r.output
    assert f"{chips}: layered over the deploy/chips table (2 change(s))" in r.output
    assert "chip 910B3: replaces the shipped row" in r.output and "chip 910X: added" in r.output
    r = CliRunner().invoke(cli, ["matrix", "tables"])
    assert r.exit_code == 0 and "serve/tool-parser-issues: matrices/serve/tool-parser-issues.toml" in r.output


# One verdict per subfolder that a layer changes -------------------------------------------------------------------
def test_serve_layer_tool_parser_issues_changes_serve210(tmp_path):
    from tests.checks.test_serve_parser_release import judge

    assert judge("--enable-auto-tool-choice --tool-call-parser hermes", vllm="0.24.0").status == Status.PASS
    p = layer(tmp_path, '''table = "serve/tool-parser-issues"
[[parser_issue]]
id = "SITE-1"
tool_parser = ["hermes"]
vllm = ">=0.24.0,<0.25.0"
trigger = "any"
says = "our gateway drops the last delta"
fixed_in = "0.25.0"
source = ["https://github.com/example/site/issues/1"]
''')
    from tests.checks.test_serve_checks import QWEN, facts

    out = facts(f"vllm serve {QWEN} --enable-auto-tool-choice --tool-call-parser hermes", files=False, model=False)
    out["python"] = PythonEnv(distributions=[Distribution(name="vllm", version="0.24.0")])
    f = run_check("SERVE210", out, options={"matrix": [p]})
    assert f.status == Status.WARN and "SITE-1" in f.message


def test_serve_layer_lora_changes_serve310(tmp_path):
    from ascend_doctor.probes.lora import lora_probe
    from tests.checks.test_serve_checks import QWEN, _Store, facts
    from tests.hook.dirhost import DirHost

    out = facts(f"vllm serve {QWEN} --enable-lora --max-lora-rank 24")
    out["serve_lora"] = lora_probe(DirHost(), _Store({"serve_cmd": out["serve_cmd"]}))
    assert run_check("SERVE310", out).status == Status.FAIL
    p = layer(tmp_path, 'table = "serve/lora"\nmax_lora_ranks = [8, 16, 24]\n')
    assert run_check("SERVE310", out, options={"matrix": [p]}).status == Status.PASS


def test_deploy_layer_chips_changes_serve305_and_plan(tmp_path):
    small = layer(tmp_path, 'table = "deploy/chips"\n[[chip]]\nid = "910B3"\nfamily = "A2"\nmemory_mib = 8192\n'
                            'visible_mib = 8000\nsources = ["a site that limits HBM"]\n')
    args = ["plan", "--model", "Qwen3-8B", "--chip", "910B3", "--npus", "1", "--format", "json"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    r = CliRunner().invoke(cli, [*args, "--matrix", small])
    assert r.exit_code == 1, r.output  # 16 GB of weights cannot fit in 8 GB
    model = layer(tmp_path, 'table = "deploy/models"\n[[model]]\nid = "site/Qwen3-8B-copy"\nconfig = '
                            f'"{builtin_matrices_dir() / "deploy" / "models" / "Qwen--Qwen3-8B.json"}"\n'
                            'source = "site"\ncheckpoints = [{format = "bf16", repo = "site/q"}]\n')
    assert CliRunner().invoke(cli, ["plan", "--model", "Qwen3-8B-copy", "--chip", "910B3", "--npus", "1",
                                    "--format", "json"]).exit_code == 2
    r = CliRunner().invoke(cli, ["plan", "--model", "Qwen3-8B-copy", "--chip", "910B3", "--npus", "1", "--format",
                                 "json", "--matrix", model])
    assert r.exit_code == 0, r.output


def test_depcheck_layer_allows_a_conflict(tmp_path):
    from tests.test_depcheck import STACK, env

    dists = [("torch", "2.9.0", []) if d[0] == "torch" else d for d in STACK]
    py = env(*dists)
    assert run_check("VLLM104", {"python": py}).status == Status.FAIL
    p = layer(tmp_path, '''table = "depcheck/dependency-allowlist"
[[allow]]
id = "site-torch"
requirer = "vllm-ascend"
requirement = "torch"
reason = "our build of vllm-ascend runs on torch 2.9.0"
source = ["site runbook #1"]
[[allow]]
id = "site-torch-npu"
requirer = "torch-npu"
requirement = "torch"
reason = "same"
source = ["site runbook #1"]
''')
    assert run_check("VLLM104", {"python": py}, options={"matrix": [p]}).status == Status.PASS


def test_signatures_layer_adds_a_signature(tmp_path):
    log = layer(tmp_path, "boot\nSITE-E42 our storage went away\n", "serve.log")
    r = CliRunner().invoke(cli, ["diagnose", log, "--format", "json"])
    assert r.exit_code == 0 and '"matches": []' in r.output
    p = layer(tmp_path, '''table = "signatures/error-signatures"
[[signature]]
id = "site-e42"
family = "site"
kind = "error"
priority = "specific"
component = "site storage"
pattern = 'SITE-E42'
meaning = "the model share was unmounted"
fix = "remount /models"
source = "site runbook #2"
confidence = "issue"
''')
    r = CliRunner().invoke(cli, ["diagnose", log, "--format", "json", "--matrix", p])
    assert r.exit_code == 1 and "site-e42" in r.output


def test_compute_layer_changes_the_slow_rank_rule(tmp_path):
    from tests.compute.test_npu_replay import by_code, replay

    assert by_code(replay(tmp_path, "slow-npu"))["NPU204"]["status"] == "warn"  # one rank 38% below the median
    p = layer(tmp_path, 'table = "compute/compute-smoke"\n[slow]\nslower_than_median = 0.5\n'
                        'source = "site: our racks run hot"\n')
    assert by_code(replay(tmp_path, "slow-npu", "--matrix", p))["NPU204"]["status"] == "pass"


def test_host_policy_layer_and_policy_option_change_host104(tmp_path):
    from ascend_doctor.probes.host_facts import ShmFact

    small = ShmFact(total_bytes=512 << 20, free_bytes=512 << 20)
    assert run_check("HOST104", {"shm": small}).status == Status.FAIL
    text = 'shm_gib = { minimum = 0.25, recommended = 0.5, source = "site: single-NPU servers" }\n'
    p = layer(tmp_path, 'table = "host-policy"\n' + text)
    assert run_check("HOST104", {"shm": small}, options={"matrix": [p]}).status == Status.PASS
    q = layer(tmp_path, text, "policy.toml")
    assert run_check("HOST104", {"shm": small}, options={"policy": q}).status == Status.PASS

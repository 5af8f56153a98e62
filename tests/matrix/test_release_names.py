"""The names each release accepts (serve/names-vllm, serve/names-vllm-ascend): the readers, `matrix sync`'s rows, the
shipped rows against the sdists they were read from, and SERVE313/SERVE402 judging a replayed command with them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_doctor.cli import cli
from ascend_doctor.knowledge.door import Knowledge
from ascend_doctor.knowledge.matrix import load_matrix
from ascend_doctor.knowledge.release_names import Names
from ascend_doctor.parsers.release_names import (
    appended_choices,
    config_literals,
    dispatched_strings,
    engine_arg_fields,
    enum_members,
    literal_field_values,
    literal_names,
    patched_fields,
    register_connector_names,
)
from ascend_doctor.sync.run import sync
from tests.helpers import REPO
from tests.matrix.test_sync import _tar

HEALTHY = str(REPO / "examples" / "healthy-a2.snapshot.json")  # vLLM 0.13.0, vllm-ascend 0.13.0
SDISTS = Path(os.environ.get("ASCEND_DOCTOR_SDISTS", REPO.parent / "sdists"))


# The readers ------------------------------------------------------------------------------------------------------
SPECULATIVE = '''
MTPModelTypes = Literal["deepseek_mtp", "mtp"]
EagleModelTypes = Literal["eagle", "eagle3", MTPModelTypes]
SpeculativeMethod = Literal["ngram", "draft_model", EagleModelTypes]
'''


def test_nested_literal_aliases_are_resolved():
    assert literal_names(SPECULATIVE, "SpeculativeMethod") == ["deepseek_mtp", "draft_model", "eagle", "eagle3",
                                                               "mtp", "ngram"]
    assert literal_names(SPECULATIVE, "MTPModelTypes") == ["deepseek_mtp", "mtp"]
    assert literal_names(SPECULATIVE, "Missing") is None
    assert literal_names("def broken(:\n", "SpeculativeMethod") is None


def test_enum_members_connectors_and_a_dispatcher():
    enum = "class CUDAGraphMode(enum.Enum):\n    NONE = 0\n    FULL = 2\n    FULL_DECODE_ONLY = (FULL, NONE)\n" \
           "    def decode_mode(self):\n        return self\n"
    assert enum_members(enum, "CUDAGraphMode") == ["FULL", "FULL_DECODE_ONLY", "NONE"]
    factory = 'KVConnectorFactory.register_connector(\n    "MooncakeConnector", "m", "C")\n' \
              'KVConnectorFactory.register_connector(name, "m", "C")\n'
    assert register_connector_names(factory) == ["MooncakeConnector"]
    assert register_connector_names("x = 1\n") is None
    dispatch = ('def get_spec_decode_method(method, cfg):\n    if method == "ngram":\n        return 1\n'
                '    elif method in ("eagle", "eagle3"):\n        return 2\n    raise ValueError(method)\n')
    assert dispatched_strings(dispatch, "get_spec_decode_method", "method") == ["eagle", "eagle3", "ngram"]
    assert dispatched_strings(dispatch, "other", "method") is None


# matrix sync --------------------------------------------------------------------------------------------------------


def test_sync_reads_every_kind_from_planted_sdists(tmp_path):
    ascend = _tar(tmp_path / "vllm_ascend-0.31.0rc1.tar.gz", "vllm_ascend-0.31.0rc1", {
        "PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.31.0rc1\n",
        "vllm_ascend/envs.py": 'env_variables = {\n    "VLLM_ASCEND_PLANTED": lambda: os.getenv("VLLM_ASCEND_PLANTED"),\n}\n',
        # read outside envs.py (env_read): a getenv, an environ lookup and a membership test; a write is not a read
        "vllm_ascend/ops/sp/flashcomm.py": 'import os\nfrom os import environ\n'
        'OLD = os.getenv("VLLM_ASCEND_OLD_SWITCH", "0")\nB = environ.get("HCCL_PLANTED")\n'
        'C = "LD_PLANTED" in os.environ\nos.environ["VLLM_ASCEND_WRITTEN"] = "1"\nD = os.environ[f"X_{OLD}"]\n',
        "vllm_ascend/distributed/kv_transfer/__init__.py":
            'def register_connector():\n    KVConnectorFactory.register_connector("PlantedConnector", "m", "C")\n',
        "vllm_ascend/spec_decode/__init__.py":
            'def get_spec_decode_method(method, c):\n    if method == "mtp":\n        return 1\n'})
    vllm = _tar(tmp_path / "vllm-0.99.0.tar.gz", "vllm-0.99.0", {
        "PKG-INFO": "Metadata-Version: 2.1\nName: vllm\nVersion: 0.99.0\n",
        "vllm/envs.py": 'environment_variables = {\n    "VLLM_PLANTED": lambda: 1,\n}\n',
        "vllm/config/speculative.py": SPECULATIVE,
        "vllm/distributed/kv_transfer/kv_connector/factory.py":
            'KVConnectorFactory.register_connector("NixlConnector", "m", "C")\n'})
    k = Knowledge()
    res = sync(load_matrix(), ascend=[ascend], vllm=[vllm], names=k.release_names)
    rows = {(p.table, p.id): p for p in res.proposals if p.table.startswith("names")}
    assert set(rows) == {("names_vllm_ascend", "0.31.0rc1"), ("names_vllm", "0.99.0")}
    a = rows["names_vllm_ascend", "0.31.0rc1"].row
    assert a["names"] == {"kv_connector": ["PlantedConnector"], "kv_connector_module": ["PlantedConnector=m"],
                          "speculative_method": ["mtp"], "registered_lib": [],
                          "env": ["VLLM_ASCEND_PLANTED"], "patched_field": [],  # no patch modules: none retyped
                          "env_read": ["HCCL_PLANTED", "LD_PLANTED", "VLLM_ASCEND_OLD_SWITCH"]}
    assert "env_read: vllm_ascend/ (3 modules: os.getenv / os.environ reads outside envs.py)" in a["where"]
    assert "kv_connector: vllm_ascend/distributed/kv_transfer/__init__.py (register_connector calls)" in a["where"]
    assert a["source"].startswith("pypi:vllm_ascend-0.31.0rc1.tar.gz (sha256 ")
    v = rows["names_vllm", "0.99.0"].row
    assert v["names"]["speculative_method"] == ["deepseek_mtp", "draft_model", "eagle", "eagle3", "mtp", "ngram"]
    assert v["names"]["kv_connector"] == ["NixlConnector"] and "cudagraph_mode" not in v["names"]


def test_proposed_rows_load_as_a_layer_of_the_table(tmp_path):
    from ascend_doctor.sync.run import render_toml

    ascend = _tar(tmp_path / "vllm_ascend-0.31.0rc1.tar.gz", "vllm_ascend-0.31.0rc1", {
        "PKG-INFO": "Metadata-Version: 2.1\nName: vllm_ascend\nVersion: 0.31.0rc1\n",
        "vllm_ascend/envs.py": 'env_variables = {\n    "VLLM_ASCEND_PLANTED": lambda: 1,\n}\n'})
    text = render_toml(sync(load_matrix(), ascend=[ascend], names=Knowledge().release_names))
    block = text[text.index("-> matrices/serve/names-vllm-ascend.toml"):].split("\n", 1)[1]
    layer = tmp_path / "names.toml"
    layer.write_text('table = "serve/names-vllm-ascend"\n' + block.split("\n\n")[0] + "\n")
    row, how = Knowledge([str(layer)]).release_names["vllm-ascend"].row_for("0.31.0rc1")
    assert how == "exact" and row.names == {"env": ["VLLM_ASCEND_PLANTED"], "env_read": [], "patched_field": [],
                                            "registered_lib": []}


SAMPLE = (("va", "vllm_ascend-0.13.0.tar.gz"), ("va", "vllm_ascend-0.30.0rc2.tar.gz"), ("va", "vllm_ascend-0.9.1.tar.gz"),
          ("vllm", "vllm-0.13.0.tar.gz"), ("vllm", "vllm-0.30.0.tar.gz"))


@pytest.mark.parametrize("sub,name", SAMPLE)
def test_a_shipped_row_is_what_sync_reads_from_its_sdist(sub, name):
    """The stored PyPI sdists (ASCEND_DOCTOR_SDISTS/va and /vllm; skipped on a plain clone): sync proposes nothing
    for the names tables, so the shipped row is exactly what it extracts, and the row cites that file's sha256."""
    path = SDISTS / sub / name
    if not path.is_file():
        pytest.skip(f"{path} not stored here")
    k = Knowledge()
    kw = {"ascend": [str(path)]} if sub == "va" else {"vllm": [str(path)]}
    res = sync(load_matrix(), names=k.release_names, additional_config=k.additional_config, **kw)
    assert [p for p in res.proposals if p.table.startswith("names")] == []
    project = "vllm-ascend" if sub == "va" else "vllm"
    version = name.split("-", 1)[1].removesuffix(".tar.gz")
    row, how = k.release_names[project].row_for(version)
    import hashlib

    assert how == "exact" and hashlib.sha256(path.read_bytes()).hexdigest()[:16] in row.source


# What the rows say ----------------------------------------------------------------------------------------------------
def test_history_names_the_release_that_dropped_a_name_and_its_successor():
    k = Knowledge()
    names = Names({"vllm": "0.13.0", "vllm-ascend": "0.13.0"}, k.release_names)
    # out of envs.py in 0.11.0rc1 (for VLLM_ASCEND_ENABLE_FLASHCOMM1) but read by enable_sp() up to 0.19.1rc1
    assert names.judge("env", "VLLM_ASCEND_ENABLE_FLASHCOMM").known is True
    v = Names({"vllm": "0.20.2", "vllm-ascend": "0.20.2rc1"}, k.release_names).judge(
        "env", "VLLM_ASCEND_ENABLE_FLASHCOMM")
    assert v.known is False and v.last == "vllm-ascend 0.19.1rc1" and v.dropped == "vllm-ascend 0.20.2rc1"
    v = names.judge("env", "VLLM_ASCEND_MLA_PA")
    assert v.known is False and v.dropped == "vllm-ascend 0.12.0rc1"
    v = names.judge("kv_connector", "LLMDataDistCMgrConnector")
    assert v.known is False and v.dropped == "vllm-ascend 0.12.0rc1" and v.successor is None
    v = names.judge("speculative_method", "draft_model", ("vllm-ascend",))
    assert v.known is False and v.first == "vllm-ascend 0.17.0rc1"
    assert names.judge("kv_connector", "MooncakeConnectorV1").known is True  # vllm-ascend's
    assert names.judge("kv_connector", "NixlConnector").known is True  # vLLM's
    assert names.judge("cudagraph_mode", "full_decode_only").known is True  # vLLM upper-cases it
    none = Names({"vllm": "0.6.0", "vllm-ascend": None}, k.release_names)
    assert none.judge("kv_connector", "X").known is None  # no recorded release at or before it


# exec --replay on the healthy A2 snapshot ------------------------------------------------------------------------------
def _exec(*command, select="SERVE313", snapshot=HEALTHY, env=()):
    args = ["exec", "--replay", snapshot, "--select", select, "--format", "json", "-o", "-", "--", *env,
            "vllm", "serve", "/models/Qwen3-8B", *command]
    r = CliRunner().invoke(cli, args)
    report = json.JSONDecoder().raw_decode(r.output, r.output.index("{"))[0]
    f = next(x for x in report["findings"] if x["code"] == select)
    return r.exit_code, f


def test_an_unregistered_connector_fails_naming_the_registered_ones():
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"NoSuchConnector","kv_role":"kv_both"}')
    assert code == 1 and f["status"] == "fail"
    assert "'NoSuchConnector' is not among the KV connectors of vLLM 0.13.0+empty + vllm-ascend 0.13.0" in f["message"]
    assert "MooncakeConnectorV1" in f["message"] and "NixlConnector" in f["message"]
    assert "Unsupported connector type" in f["message"]
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"MooncakeConnectorV1","kv_role":"kv_producer"}')
    assert code == 0 and f["status"] == "pass"
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"Mine","kv_connector_module_path":"my.mod"}')
    assert f["status"] == "pass" and "'Mine'" not in f["message"]  # the user's own module: only the keys judged


def test_a_connector_the_release_dropped_says_when():
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"LLMDataDistCMgrConnector","kv_role":"kv_both"}')
    assert f["status"] == "fail" and "vllm-ascend 0.12.0rc1 removed it" in f["message"]


def test_a_speculative_method_vllm_accepts_but_vllm_ascend_has_no_proposer_for():
    code, f = _exec("--speculative-config", '{"method":"draft_model","model":"/m/draft","num_speculative_tokens":2}')
    assert f["status"] == "fail" and "vllm-ascend 0.13.0" in f["message"]
    assert "first appears in vllm-ascend 0.17.0rc1" in f["message"]
    assert "Unknown speculative decoding method" in f["message"]
    code, f = _exec("--speculative-config", '{"method":"nosuch","num_speculative_tokens":2}')
    assert f["status"] == "fail" and "vLLM 0.13.0+empty" in f["message"]
    # deepseek_mtp is rewritten to mtp by vLLM before vllm-ascend sees it
    code, f = _exec("--speculative-config", '{"method":"deepseek_mtp","num_speculative_tokens":1}')
    assert code == 0 and f["status"] == "pass"


def test_cudagraph_mode_and_structured_outputs_backend():
    code, f = _exec("--compilation-config", '{"cudagraph_mode":"FULL_DECODE"}')
    assert f["status"] == "fail" and "did you mean FULL_DECODE_ONLY" in f["message"]
    code, f = _exec("--compilation-config", '{"cudagraph_mode":"full_decode_only"}')
    assert f["status"] == "pass"
    code, f = _exec("--structured-outputs-config", '{"backend":"xgrammer"}')
    assert f["status"] == "fail" and "did you mean xgrammar" in f["message"]


def test_a_renamed_vllm_ascend_variable_fails_with_its_new_name(tmp_path):
    """VLLM_ASCEND_ENABLE_FLASHCOMM left envs.py in 0.11.0rc1 for VLLM_ASCEND_ENABLE_FLASHCOMM1; enable_sp() read the
    old name for backward compatibility up to 0.19.1rc1 (so the recorded 0.13.0 host accepts it), not from 0.20.2rc1."""
    snap = _snapshot_with(tmp_path, **{"vllm-ascend": "0.20.2rc1", "vllm": "0.20.2"})
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_ENABLE_FLASHCOMM=1"), snapshot=snap)
    assert code == 1 and f["status"] == "fail"
    assert "last read by vllm-ascend 0.19.1rc1" in f["message"]
    assert "vllm-ascend 0.20.2rc1 takes it as --additional-config '{\"enable_flashcomm1\": …}'" in f["message"]
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_ENABLE_FLASHCOMM=1"))
    assert code == 0 and f["status"] == "pass"
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_ENABLE_FLASHCOMM1=1"))
    assert code == 0 and f["status"] == "pass"
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_MLA_PA=1"))  # removed, nothing instead: a warning
    assert code == 0 and f["status"] == "warn" and "ignored since vllm-ascend 0.12.0rc1" in f["message"]


def _snapshot_with(tmp_path, **versions) -> str:
    data = json.loads(Path(HEALTHY).read_text())
    for d in data["python_envs"]["default"]["distributions"]:
        if d["name"] in versions:
            d["version"] = versions[d["name"]]
    path = tmp_path / "stack.snapshot.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_variable_moved_into_additional_config_names_the_key(tmp_path):
    snap = _snapshot_with(tmp_path, **{"vllm-ascend": "0.27.1rc1", "vllm": "0.27.1"})
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_ENABLE_MLAPO=1"), snapshot=snap)
    assert f["status"] == "fail" and "last read by vllm-ascend 0.26.0rc1" in f["message"]
    assert "--additional-config '{\"enable_mlapo\": …}'" in f["message"]
    code, f = _exec("--additional-config", '{"enable_mlapo": true}', select="SERVE307", snapshot=snap)
    assert code == 0 and f["status"] == "pass"


def test_a_variable_read_outside_envs_py_is_known(tmp_path):
    """VLLM_ASCEND_ENABLE_FLASHCOMM1 left envs.py in 0.27.1rc1, but ascend_config.py still reads it with os.getenv
    (deprecated, with a warning) — the env_read row says so; SERVE402 had failed it as moved to --additional-config."""
    snap = _snapshot_with(tmp_path, **{"vllm-ascend": "0.27.1rc1", "vllm": "0.27.1"})
    code, f = _exec(select="SERVE402", env=("env", "VLLM_ASCEND_ENABLE_FLASHCOMM1=1"), snapshot=snap)
    assert code == 0 and f["status"] == "pass", f["message"]
    row, _ = Knowledge().release_names["vllm-ascend"].row_for("0.27.1rc1")
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1" in row.names["env_read"]
    assert "VLLM_ASCEND_ENABLE_FLASHCOMM1" not in row.names["env"]


def test_an_additional_config_key_on_a_forbid_release_fails(tmp_path):
    snap = _snapshot_with(tmp_path, **{"vllm-ascend": "0.27.1rc1", "vllm": "0.27.1"})
    code, f = _exec("--additional-config", '{"torchair_graph_config": {"enabled": true}}', select="SERVE307",
                    snapshot=snap)
    assert code == 1 and f["status"] == "fail" and "Unexpected keyword argument" in f["message"]


def test_eplb_on_a_model_type_the_release_does_not_register(tmp_path):
    """vllm-ascend#5798: dynamic EPLB on Qwen3-VL-MoE with 0.13.0rc1 stops with `EPLB is not supported.`; the
    maintainer's answer is >= 0.15.0, whose EPLB takes any MoE model (no list)."""
    from ascend_doctor.report import Status
    from tests.checks.test_serve_checks import facts, on_release, run_check

    model = tmp_path / "Qwen3-VL-30B-A3B-Instruct"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "qwen3_vl_moe", "text_config": {
        "model_type": "qwen3_vl_moe_text"}, "architectures": ["Qwen3VLMoeForConditionalGeneration"]}))

    def on(version: str, extra: str = '--additional-config {"dynamic_eplb":true}'):
        f = on_release(facts(f"vllm serve {model} --enable-expert-parallel {extra}"), version)
        del f["vllm_files"]  # the recorded releases' rows judge it
        return run_check("SERVE313", f)

    out = on("0.13.0rc1")
    assert out.status == Status.FAIL and "'qwen3_vl_moe_text' is not among the model types EPLB registers" \
        in out.message and "EPLB is not supported." in out.message
    assert on("0.15.0rc1").status == Status.PASS  # no list: any MoE model
    assert on("0.13.0rc1", extra="").status == Status.SKIP  # EPLB off: nothing to judge


def test_keys_inside_a_json_option_against_the_fields_of_its_config_class(tmp_path):
    """vLLM validates each JSON option as a config class: from 0.16.0 its `config` decorator forbids unknown keys
    (a validation error at start); before, pydantic ignores them without a word."""
    bad = '{"cudagraph_mode":"FULL_DECODE_ONLY","cudagraph_capture_size":[1,2,4]}'
    code, f = _exec("--compilation-config", bad)  # vLLM 0.13.0: ignored
    assert code == 0 and f["status"] == "warn" and "did you mean cudagraph_capture_sizes" in f["message"]
    assert "ignores keys its config class does not define" in f["message"]
    snap = _snapshot_with(tmp_path, **{"vllm": "0.20.2", "vllm-ascend": "0.20.2rc1"})
    code, f = _exec("--compilation-config", bad, snapshot=snap)
    assert code == 1 and f["status"] == "fail" and "Extra inputs are not permitted" in f["message"]
    code, f = _exec("--compilation-config", bad.replace("size\"", "sizes\""), snapshot=snap)
    assert code == 0 and f["status"] == "pass"
    code, f = _exec("--attention-config.use_prefill_decode_atention", "true", snapshot=snap)  # the dotted form
    assert f["status"] == "fail" and "'use_prefill_decode_atention'" in f["message"]
    code, f = _exec("--attention-config", '{"backend":"FLASH_ATTN","use_prefill_decode_atention":true}',
                    snapshot=snap)
    assert f["status"] == "fail" and "'use_prefill_decode_atention' is not among the AttentionConfig fields" \
        in f["message"]


def test_values_inside_a_json_option_against_the_literals_of_its_config_class(tmp_path):
    """A Literal-typed field admits only its constants (pydantic stops vLLM at start): `kv_role`, the indexer cache
    dtype. vllm-ascend 0.29.0rc1 on widens `indexer_kv_dtype` with `int8` in a platform patch (its DeepSeek-V4
    tutorial passes `--attention_config.indexer_kv_dtype int8`): there vLLM's list is not the answer."""
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"MooncakeConnector","kv_role":"kv_both_"}')
    assert code == 1 and f["status"] == "fail"
    assert "kv_role 'kv_both_' is not one of the values vLLM 0.13.0+empty accepts for KVTransferConfig.kv_role " \
           "(kv_both, kv_consumer, kv_producer); did you mean kv_both?" in f["message"]
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"MooncakeConnector","kv_role":"kv_both"}')
    assert code == 0 and f["status"] == "pass" and "kv_role 'kv_both'" in f["message"]
    old = _snapshot_with(tmp_path, **{"vllm": "0.26.0", "vllm-ascend": "0.26.0rc1"})
    code, f = _exec("--attention_config.indexer_kv_dtype", "int8", snapshot=old)
    assert code == 1 and f["status"] == "fail"
    assert "indexer_kv_dtype 'int8' is not one of the values vLLM 0.26.0 accepts for AttentionConfig." \
           "indexer_kv_dtype (bf16, fp8, mxfp4, nvfp4)" in f["message"]
    code, f = _exec("--attention-config", '{"indexer_kv_dtype":"fp8"}', snapshot=old)
    assert f["status"] == "pass"
    dev = _snapshot_with(tmp_path, **{"vllm": "0.26.0", "vllm-ascend": "0.28.1rc1.dev40"})  # may patch: warn
    code, f = _exec("--attention_config.indexer_kv_dtype", "int8", snapshot=dev)
    assert code == 0 and f["status"] == "warn" and "patches judged by those of 0.28.0rc1" in f["message"]
    new = _snapshot_with(tmp_path, **{"vllm": "0.30.0", "vllm-ascend": "0.30.0rc2"})
    code, f = _exec("--attention_config.indexer_kv_dtype", "int8", snapshot=new)
    assert code == 0 and f["status"] == "unknown"
    assert "vllm-ascend 0.30.0rc2 retypes indexer_kv_dtype in its platform patches" in f["message"]


def test_which_literal_fields_are_validated():
    """Only what pydantic validates: a config class that is a pydantic dataclass (or BaseModel); vLLM 0.9.0's
    `@config` over the standard library's dataclass admits any string. Aliases, `| None` and Optional resolve; a
    type imported from another module is not a Literal this file can read, and is left out."""
    text = ("from typing import Literal, Optional\nfrom pydantic.dataclasses import dataclass\n"
            "from vllm.config.cache import CacheDType\n"
            "Role = Literal['a', 'b']\nBoth = Literal[Role, 'c']\n"
            "@config\n@dataclass\nclass C:\n    role: Both | None = None\n    n: Optional[Literal[2, 3]] = None\n"
            "    free: str = 'x'\n    dtype: CacheDType = 'auto'\n    flag: Literal[True] = True\n")
    assert literal_field_values(text, "C") == ["n=2", "n=3", "role=a", "role=b", "role=c"]
    assert literal_field_values(text.replace("from pydantic.dataclasses", "from dataclasses"), "C") is None
    assert literal_field_values(text.replace("@dataclass\n", ""), "C") is not None  # `config` alone (0.2x)
    assert literal_field_values(text, "Missing") is None
    patch = ("def apply():\n    AttentionConfig.__annotations__['indexer_kv_dtype'] = X\n"
             "    CacheConfig.__dataclass_fields__['cache_dtype'].type = X\n    cfg.__annotations__['policy'] = Y\n")
    assert patched_fields(patch) == ["AttentionConfig.indexer_kv_dtype", "CacheConfig.cache_dtype", "cfg.policy"]
    assert patched_fields("x = 1\n") == []


def test_a_release_the_doctor_has_not_read_is_judged_as_a_warning(tmp_path):
    """A tag the rows do not have (0.19.1rc3, ahead of every recorded tag of that line) may have what the nearest
    older release lacked: its list is no ground for a failure."""
    snap = _snapshot_with(tmp_path, **{"vllm": "0.25.1", "vllm-ascend": "0.19.1rc3"})
    code, f = _exec("--speculative-config", '{"method":"dspark","num_speculative_tokens":2}', snapshot=snap)
    assert code == 0 and f["status"] == "warn" and "judged against vllm-ascend 0.19.1rc1, the nearest older " \
        "recorded release" in f["message"]


def test_a_development_build_is_judged_by_the_release_that_pairs_its_vllm(tmp_path):
    """vllm-ascend#14260: `0.19.1rc2.dev1265` served with vLLM 0.25.1 is main long after 0.19.1 (setuptools-scm
    names it after the last tag it reaches); the doctor said dspark "first appears in vllm-ascend 0.24.0rc1" — the
    user's run had got past method dispatch. It is judged as 0.25.1rc1, the release pairing vLLM 0.25.1."""
    snap = _snapshot_with(tmp_path, **{"vllm": "0.25.1", "vllm-ascend": "0.19.1rc2.dev1265"})
    code, f = _exec("--speculative-config", '{"method":"dspark","num_speculative_tokens":2}', snapshot=snap)
    assert code == 0 and f["status"] == "pass", f["message"]
    assert "vllm-ascend 0.25.1rc1" in json.dumps(f["evidence"])


def test_which_development_builds_stand_in_for_which_release():
    from ascend_doctor.knowledge.release_names import paired_release

    m = Knowledge().matrix
    assert paired_release("0.19.1rc2.dev1265", "0.25.1", m) == "0.25.1rc1"  # a stale tag: judged by its vLLM
    assert paired_release("0.30.0rc2.dev3", "0.30.0", m) is None  # between 0.30.0rc1 and rc2: nearest older
    assert paired_release("0.25.1rc1", "0.25.1", m) is None  # a release: its own row
    assert paired_release("0.19.1rc2.dev1265", None, m) is None


def test_an_option_a_release_removed_says_when():
    """`--task` (the pooling vocabulary before `--runner`/`--convert`) and `--enable-reasoning` are options vLLM
    removed: the unknown option is named with the release that dropped it, from the recorded option lists."""
    code, f = _exec("--task", "embed", "--enable-reasoning", select="SERVE105")
    assert code == 1 and f["status"] == "fail"
    assert "--task (removed in vLLM 0.13.0; last in 0.12.0)" in f["message"]
    assert "--enable-reasoning (removed in vLLM 0.10.0; last in 0.9.2)" in f["message"]
    code, f = _exec("--runner", "pooling", select="SERVE105")
    assert code == 0 and f["status"] == "pass"


def test_a_stack_with_no_list_to_judge_by_is_unknown():
    """No installed files and a vLLM older than every recorded release: the connector cannot be judged."""
    from ascend_doctor.report import Status
    from ascend_doctor.seam.host import Distribution
    from tests.checks.test_serve_checks import facts, run_check

    f = facts('vllm serve /m --kv-transfer-config {"kv_connector":"X","kv_role":"kv_both"}')
    del f["vllm_files"]
    f["python"].distributions = [Distribution(name="vllm", version="0.6.0")]
    out = run_check("SERVE313", f)
    assert out.status == Status.UNKNOWN and "no recorded release at or before it" in out.message


def test_serve316_an_option_value_outside_the_choices_vllm_derives_from_its_field(tmp_path):
    """argparse's choices come from the Literal type of the config field behind the option (vLLM's
    `literal_to_kwargs`): `--kv-cache-dtype int8` (the C8 option of vllm-ascend 0.29.0rc1's tutorials) is no
    choice of vLLM 0.13.0; vllm-ascend 0.29.0rc1 on widens it in its platform, so there it is not judged."""
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316")
    assert code == 1 and f["status"] == "fail"
    assert "--kv-cache-dtype 'int8' is not one of the choices vLLM 0.13.0+empty gives it (auto, bfloat16, fp8, " \
           "fp8_ds_mla, fp8_e4m3, fp8_e5m2, fp8_inc: the type of CacheConfig.cache_dtype)" in f["message"]
    assert "vllm-ascend 0.29.0rc1 is the first release that widens them" in f["message"]
    code, f = _exec("--kv-cache-dtype", "fp8", "--scheduling-policy", "priority", select="SERVE316")
    assert code == 0 and f["status"] == "pass" and "--scheduling-policy priority" in f["message"]
    code, f = _exec("--scheduling-policy", "fifo", select="SERVE316")
    assert f["status"] == "fail" and "(fcfs, priority: the type of SchedulerConfig.policy)" in f["message"]
    code, f = _exec("--tensor-parallel-size", "2", "--quantization", "ascend", select="SERVE316")
    assert f["status"] == "skip"  # no option with fixed choices (vllm-ascend appends `ascend` to --quantization)
    new = _snapshot_with(tmp_path, **{"vllm": "0.30.0", "vllm-ascend": "0.30.0rc2"})
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316", snapshot=new)
    assert code == 0 and f["status"] == "unknown" and "vllm-ascend 0.30.0rc2 widens its choices" in f["message"]
    odd = _snapshot_with(tmp_path, **{"vllm": "0.13.5", "vllm-ascend": "0.13.0"})  # not recorded: nearest older
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316", snapshot=odd)
    assert code == 0 and f["status"] == "warn" and "judged against vLLM 0.13.0" in f["message"]
    old = _snapshot_with(tmp_path, **{"vllm": "0.5.0", "vllm-ascend": "0.13.0"})
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316", snapshot=old)
    assert f["status"] == "unknown" and "not known" in f["message"]


def test_the_option_choices_readers():
    cfg = ("from typing import Literal\nfrom pydantic.dataclasses import dataclass\n"
           "CacheDType = Literal['auto', 'fp8']\n"
           "@config\n@dataclass\nclass CacheConfig:\n    cache_dtype: CacheDType = 'auto'\n    block_size: int = 16\n"
           "class Plain:\n    mode: Literal['a'] = 'a'\n")
    assert config_literals(cfg) == ["CacheConfig.cache_dtype=auto", "CacheConfig.cache_dtype=fp8"]
    args = ("class EngineArgs:\n    kv_cache_dtype: CacheDType = CacheConfig.cache_dtype\n"
            "    block_size: int | None = CacheConfig.block_size\n"
            "    policy: SchedulerPolicy = field(default=SchedulerConfig.policy)\n    x: Foo = 3\n")
    assert engine_arg_fields(args) == ["kv_cache_dtype=CacheConfig.cache_dtype", "policy=SchedulerConfig.policy"]
    assert engine_arg_fields("class Other:\n    pass\n") is None
    platform = ("def pre_register_and_update(cls, parser=None):\n"
                "    a = parser._option_string_actions.get('--quantization')\n"
                "    if 'ascend' not in a.choices:\n        a.choices.append('ascend')\n")
    assert appended_choices(platform) == ["quantization"]
    assert appended_choices(platform.replace("append", "count")) == []


def test_serve316_without_vllm_in_the_serving_python_is_a_skip(tmp_path):
    data = json.loads(Path(HEALTHY).read_text())
    dists = data["python_envs"]["default"]["distributions"]
    data["python_envs"]["default"]["distributions"] = [d for d in dists if d["name"] != "vllm"]
    path = tmp_path / "no-vllm.snapshot.json"
    path.write_text(json.dumps(data))
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316", snapshot=str(path))
    assert f["status"] == "skip" and "vLLM is not installed" in f["message"]


def test_serve316_a_development_build_judged_by_another_releases_platform_only_warns(tmp_path):
    """vllm-ascend 0.28.1rc1.dev40 is judged by 0.28.0rc1's platform, which does not widen --kv-cache-dtype; the
    build itself may (0.29.0rc1 does): vLLM's refusal of int8 is a warning there, not a failure."""
    dev = _snapshot_with(tmp_path, **{"vllm": "0.26.0", "vllm-ascend": "0.28.1rc1.dev40"})
    code, f = _exec("--kv-cache-dtype", "int8", select="SERVE316", snapshot=dev)
    assert code == 0 and f["status"] == "warn" and "patches judged by those of 0.28.0rc1" in f["message"]


def test_a_huge_value_is_quoted_clipped():
    """A value is quoted in the finding as given, but at most 64 characters of it: a pasted command's 10,000-character
    kv_role or --kv-cache-dtype does not become a 10,000-character finding."""
    big = "x" * 10_000
    code, f = _exec("--kv-transfer-config", '{"kv_connector":"MooncakeConnector","kv_role":"%s"}' % big)
    assert f["status"] == "fail" and "x" * 64 + "…" in f["message"] and "x" * 65 not in f["message"]
    code, f = _exec("--kv-cache-dtype", big, select="SERVE316")
    assert f["status"] == "fail" and "x" * 65 not in f["message"]


def test_which_fields_a_platform_patch_retypes():
    from ascend_doctor.knowledge.release_names import Listed, retypes

    patched = Listed("vllm-ascend", "0.30.0rc2", {"AttentionConfig.indexer_kv_dtype", "config_cls.policy"}, "rows")
    assert retypes(patched, "AttentionConfig.indexer_kv_dtype") and retypes(patched, "indexer_kv_dtype")
    assert retypes(patched, "EplbConfig.policy")  # patched through a variable: matched by the field's name
    assert not retypes(patched, "SchedulerConfig.indexer_kv_dtype") and not retypes(patched, "CacheConfig.cache_dtype")


def test_eagle3_before_vllm_ascend_had_a_dispatcher_follows_the_drafter_chain(tmp_path):
    """0.9.0rc1-0.10.1rc1 build the drafter in an if/elif chain of NPUModelRunner whose `else` raises `Unknown
    speculative decoding method`: eagle3 is in 0.9.1rc1's chain, not in 0.9.1rc2-0.9.1's (vllm-ascend#2562: "only
    submitted to version 0.9.1rc1 and is missing in versions 0.9.1rc2 and 0.9.1rc3"), again from 0.9.2rc1."""
    from ascend_doctor.parsers.release_names import drafter_chain

    chain = ("class R:\n  def __init__(self):\n    if self.speculative_config.method == 'ngram':\n      pass\n"
             "    elif self.speculative_config.method in ['eagle', 'eagle3']:\n      pass\n"
             "    else:\n      raise ValueError('Unknown speculative decoding method: x')\n")
    assert drafter_chain(chain) == ["eagle", "eagle3", "ngram"]
    assert drafter_chain("if x.method == 'ngram':\n  pass\n") is None  # no refusing else: not the chain
    k = Knowledge()
    for ascend, known in (("0.9.1rc1", True), ("0.9.1rc3", False), ("0.9.1", False), ("0.9.2rc1", True)):
        v = Names({"vllm": "0.9.1", "vllm-ascend": ascend}, k.release_names).judge(
            "speculative_method", "eagle3", ("vllm-ascend",))
        assert v.known is known, (ascend, v)
    snap = _snapshot_with(tmp_path, **{"vllm-ascend": "0.9.1rc3", "vllm": "0.9.1"})
    code, f = _exec("--speculative-config", '{"method":"eagle3","model":"/m/eagle3","num_speculative_tokens":2}',
                    snapshot=snap)
    assert f["status"] == "fail" and "vllm-ascend 0.9.1rc3" in f["message"], f["message"]
    assert "Unknown speculative decoding method" in f["message"]
    code, f = _exec("--speculative-config", '{"method":"eagle","model":"/m/eagle","num_speculative_tokens":2}',
                    snapshot=snap)
    assert f["status"] == "pass", f["message"]

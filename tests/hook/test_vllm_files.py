"""Reading the installed vLLM / vllm-ascend / transformers as text: fixture trees, the probe, a real sdist (slow)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ascend_doctor.core.options import RunOptions
from ascend_doctor.facts import FactStore
from ascend_doctor.parsers.vllm_source import (
    literal_alias,
    model_registry_architectures,
    module_dict_keys,
    read_installed,
    registered_names,
)
from ascend_doctor.probes.serve import serve_model_probe, vllm_files_probe
from ascend_doctor.seam.host import Distribution, PythonEnv
from tests.helpers import DATA
from tests.hook.dirhost import DirHost

SERVE = DATA / "serve"


def _read(p):
    try:
        return Path(p).read_text(encoding="utf-8")
    except OSError:
        return None


def _list(p):
    try:
        return os.listdir(p)
    except OSError:
        return None


def test_new_layout_tables():
    f = read_installed(str(SERVE / "site-vllm0130"), _read, _list)
    assert "deepseek_v32" in f.tool_parsers.names and "deepseek_v4" not in f.tool_parsers.names
    assert f.tool_parsers.source.endswith("vllm/tool_parsers/__init__.py")
    assert "deepseek_r1" in f.reasoning_parsers.names
    assert f.tokenizer_modes.names == ["auto", "deepseek_v32", "hf", "mistral", "slow"]
    assert "DeepseekV32ForCausalLM" in f.architectures.names
    assert "PanguProMoEForCausalLM" in f.architectures.names  # registered by vllm_ascend
    assert "Phi3SmallForCausalLM" not in f.architectures.names  # _PREVIOUSLY_SUPPORTED_MODELS
    assert "deepseek_v32" in f.vllm_model_types.names
    assert "qwen3" in f.transformers_model_types.names and "deepseek_v4" not in f.transformers_model_types.names
    assert "VLLM_HOST_IP" in f.vllm_env_vars.names
    assert "VLLM_ASCEND_ENABLE_NZ" in f.vllm_ascend_env_vars.names


def test_old_layout_decorators():
    f = read_installed(str(SERVE / "site-vllm0111"), _read, _list)
    assert f.tool_parsers.names == ["deepseek_v31", "hermes", "llama3_json", "llama4_json"]
    assert "register_module" in f.tool_parsers.source
    assert f.reasoning_parsers.names == ["deepseek_r1"]
    assert f.tokenizer_modes.names == ["auto", "custom", "mistral", "slow"]
    assert not f.transformers_model_types.ok and "configuration_auto.py" in f.transformers_model_types.why_not


def test_absent_tree_says_why():
    f = read_installed("/nonexistent/site-packages", _read, _list)
    assert not f.tool_parsers.ok and "not found" in f.tool_parsers.why_not
    assert not f.vllm_ascend_env_vars.ok


def test_parsers_never_execute_code():
    hostile = "import os\nos.system('touch /tmp/pwned')\n_TOOL_PARSERS_TO_REGISTER = {'a': ('b', 'C')}\n"
    assert module_dict_keys(hostile, "_TOOL_PARSERS_TO_REGISTER") == ["a"]
    assert registered_names("@ToolParserManager.register_module(name=['x', 'y'])\nclass A: pass\n",
                            "ToolParserManager") == ["x", "y"]
    assert literal_alias("from typing import Literal\nX = Literal['a']\n", "X") == ["a"]
    assert literal_alias("Y = 1\n", "X") is None
    assert model_registry_architectures("_A_MODELS = {'M': ('m', 'M')}\n_B = {**_A_MODELS}\n") == ["M"]


def test_dict_keys_by_pattern_when_ast_cannot_parse():
    text = ('environment_variables: dict[str, Callable[[], Any]] = {\n'
            '    "VLLM_A": lambda: os.getenv("VLLM_A",\n        default="x"),\n'
            '    "VLLM_B": lambda: {\n        "nested": 1},\n}\nbroken(((\n'
            '_CONFIG_REGISTRY: dict = LazyConfigDict(\n    a="A",\n    b="B",\n)\n')
    assert module_dict_keys(text, "environment_variables") == ["VLLM_A", "VLLM_B"]
    assert module_dict_keys(text, "_CONFIG_REGISTRY") == ["a", "b"]
    assert module_dict_keys(text, "absent") is None


def test_unparseable_file_is_reported():
    f = read_installed("/site", lambda p: "def (" if p.endswith("__init__.py") else None,
                       lambda p: ["__init__.py"] if p == "/site/vllm" else None)
    assert not f.tool_parsers.ok and "/site/vllm/tool_parsers/__init__.py" in f.tool_parsers.why_not
    assert not f.tokenizer_modes.ok


def test_probe_reads_through_the_host():
    site = str(SERVE / "site-vllm0130")
    py = PythonEnv(purelib=site, distributions=[Distribution(name="vllm", version="0.13.0"),
                                                Distribution(name="transformers", version="4.57.1")])
    host = DirHost(python=py)
    store = FactStore(host, RunOptions(), probes={"python": lambda h, c: h.python_env()})
    fact = vllm_files_probe(host, store)
    assert fact.vllm_version == "0.13.0" and fact.tool_parsers.ok
    assert any(p.endswith("vllm/tool_parsers/__init__.py") for p in host.reads)


def test_serve_model_probe_hf_cache(tmp_path):
    from tests.helpers import parse_serve as parse_serve_command

    snap = tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"]}')
    (tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "refs").mkdir()
    (tmp_path / "hub" / "models--Qwen--Qwen3-8B" / "refs" / "main").write_text("abc123")
    cmd = parse_serve_command(["vllm", "serve", "Qwen/Qwen3-8B"])
    host = DirHost(env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    store = FactStore(host, RunOptions(), probes={}, preset={"serve_cmd": cmd})
    m = serve_model_probe(host, store)
    assert m.resolved_from == "Hugging Face cache" and m.config["model_type"] == "qwen3"
    m = serve_model_probe(DirHost(env={"HF_HUB_CACHE": str(tmp_path / "empty")}), store)
    assert m.path is None and "Hugging Face cache" in m.why_not


# A real vLLM release (slow tier): the sdist from PyPI, cached; skipped when it cannot be downloaded. ---------------
SDIST_CACHE = Path(os.environ.get("ASCEND_DOCTOR_SDIST_CACHE", Path.home() / ".cache" / "ascend-doctor" / "sdists"))


def _vllm_sdist(version: str) -> Path:
    """The cached sdist, else `pip download` it; vLLM's metadata step needs torch, so when pip gives up after the
    download (it then deletes the archive) fetch the same file through PyPI's simple index (PEP 691 JSON), checking
    its sha256."""
    want = SDIST_CACHE / f"vllm-{version}.tar.gz"
    if want.is_file():
        return want
    SDIST_CACHE.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps", "--no-binary",
                        ":all:", "--no-build-isolation", "-d", str(SDIST_CACHE)], capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not want.is_file():
        try:
            _fetch_from_simple_index("vllm", version, want)
        except Exception as exc:  # offline, proxy, changed API: this tier is optional
            pytest.skip(f"vllm=={version} sdist could not be downloaded into {SDIST_CACHE}: {exc}")
    return want


def _fetch_from_simple_index(name: str, version: str, dest: Path) -> None:
    import hashlib
    import json
    import urllib.request

    req = urllib.request.Request(f"https://pypi.org/simple/{name}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        files = json.load(r)["files"]
    sdist = next(f for f in files if f["filename"] == dest.name)
    part = dest.with_suffix(".part")
    h = hashlib.sha256()
    with urllib.request.urlopen(sdist["url"], timeout=120) as r, open(part, "wb") as fh:
        for chunk in iter(lambda: r.read(1 << 20), b""):
            h.update(chunk)
            fh.write(chunk)
    if h.hexdigest() != sdist["hashes"]["sha256"]:
        part.unlink()
        raise ValueError("sha256 mismatch")
    part.rename(dest)


@pytest.mark.slow
def test_real_vllm_0_13_0_sdist(tmp_path):
    archive = _vllm_sdist("0.13.0")
    with tarfile.open(archive) as tf:
        wanted = [m for m in tf.getmembers() if m.isfile() and "/vllm/" in m.name and m.name.endswith(".py")
                  and ("/tool_parsers/" in m.name or "/reasoning/" in m.name or m.name.endswith(
                      ("/config/model.py", "/models/registry.py", "/transformers_utils/config.py", "/vllm/envs.py",
                       "/engine/arg_utils.py", "/openai/cli_args.py")))]
        for m in wanted:  # only regular files with relative names under the tree: nothing escapes tmp_path
            if m.name.startswith("/") or ".." in Path(m.name).parts:
                continue
            tf.extract(m, tmp_path)
    root = tmp_path / "vllm-0.13.0"
    f = read_installed(str(root), _read, _list)
    assert "deepseek_v32" in f.tool_parsers.names
    assert "deepseek_v4" not in f.tool_parsers.names
    assert "hermes" in f.tool_parsers.names
    assert "deepseek_r1" in f.reasoning_parsers.names and "deepseek_v4" not in f.reasoning_parsers.names
    assert "deepseek_v32" in f.tokenizer_modes.names and "deepseek_v4" not in f.tokenizer_modes.names
    assert "DeepseekV32ForCausalLM" in f.architectures.names
    assert "deepseek_v32" in f.vllm_model_types.names
    assert "VLLM_USE_V1" not in f.vllm_env_vars.names and "VLLM_HOST_IP" in f.vllm_env_vars.names
    assert {"tensor-parallel-size", "tp", "enable-auto-tool-choice", "tool-call-parser", "served-model-name",
            "no-enable-prefix-caching", "config", "port"} <= set(f.cli_options.names)
    # a snapshot masks `api_key: …` in recorded files; the pattern reader still finds every option
    from ascend_doctor.parsers.vllm_source import cli_option_names, cli_option_names_lenient
    from ascend_doctor.text.redact import redact_text

    for rel in ("vllm/entrypoints/openai/cli_args.py", "vllm/engine/arg_utils.py"):
        text = (root / rel).read_text(encoding="utf-8")
        assert set(cli_option_names(text)) <= set(cli_option_names_lenient(redact_text(text))), rel
    # …and the dict tables read by pattern equal the ast reading (envs.py is one the masking breaks)
    for rel, name in (("vllm/envs.py", "environment_variables"), ("vllm/tool_parsers/__init__.py",
                      "_TOOL_PARSERS_TO_REGISTER"), ("vllm/transformers_utils/config.py", "_CONFIG_REGISTRY")):
        text = (root / rel).read_text(encoding="utf-8")
        assert sorted(module_dict_keys(redact_text(text) + "\n(((\n", name)) == sorted(module_dict_keys(text, name))
    # the matrix's 0.13.0 row was extracted from the same sdist: the two must agree
    from tests.helpers import shipped

    assert set(f.tool_parsers.names) == shipped().matrix.parsers_in_vllm("0.13.0", "tool_parser")


def test_probe_follows_editable_installs(tmp_path):
    """vllm-ascend images `pip install -e` vLLM and vllm-ascend: the code is in the checkout, not site-packages."""
    import shutil

    site = tmp_path / "site-packages"
    (site / "vllm-0.13.0+empty.dist-info").mkdir(parents=True)
    checkout = tmp_path / "vllm workspace" / "vllm"
    shutil.copytree(SERVE / "site-vllm0130" / "vllm", checkout / "vllm")
    url = "file://" + str(checkout).replace(" ", "%20")
    (site / "vllm-0.13.0+empty.dist-info" / "direct_url.json").write_text(
        '{"url": "%s", "dir_info": {"editable": true}}' % url)
    py = PythonEnv(purelib=str(site), distributions=[Distribution(name="vllm", version="0.13.0+empty",
                                                                  location=str(site))])
    host = DirHost(python=py)
    store = FactStore(host, RunOptions(), probes={"python": lambda h, c: h.python_env()})
    fact = vllm_files_probe(host, store)
    assert fact.vllm_dir == str(checkout / "vllm")
    assert fact.tool_parsers.ok and "deepseek_v32" in fact.tool_parsers.names
    # not editable: stays in site-packages (where nothing is installed here)
    (site / "vllm-0.13.0+empty.dist-info" / "direct_url.json").write_text('{"url": "file:///x", "dir_info": {}}')
    assert not vllm_files_probe(host, store).tool_parsers.ok


def test_collected_snapshot_replays_the_same_tables():
    """`collect` runs this probe, so a snapshot carries the vLLM files: `exec --replay` lints like the node would."""
    from ascend_doctor.seam.snapshot import RecordingHost, ReplayHost, Snapshot

    site = str(SERVE / "site-vllm0130")
    py = PythonEnv(purelib=site, distributions=[Distribution(name="vllm", version="0.13.0"),
                                                Distribution(name="vllm-ascend", version="0.13.0rc3"),
                                                Distribution(name="transformers", version="4.57.1")])
    rec = RecordingHost(DirHost(python=py))
    live = vllm_files_probe(rec, FactStore(rec, RunOptions(), probes={"python": lambda h, c: h.python_env()}))
    snap = Snapshot.model_validate_json(rec.snapshot.dump())
    replay = ReplayHost(snap)
    again = vllm_files_probe(replay, FactStore(replay, RunOptions(), probes={"python": lambda h, c: h.python_env()}))
    names = lambda f: {k: v["names"] for k, v in f.model_dump().items() if isinstance(v, dict) and "names" in v}  # noqa: E731
    assert names(again) == names(live)
    assert again.names == live.names and again.names["vllm"]["kv_connector"].ok
    assert again.tool_parsers.ok and again.vllm_env_vars.ok and "api-key" in again.cli_options.names
    # snapshots redact Python source code-aware (annotations such as `api_key: Optional[...]` survive): ast reads it
    assert "read by pattern" not in again.cli_options.source


# Layouts found by reading every paired vLLM release and transformers 4.40-5.24 (matrix sync, 2026-12-01) ----------
def _tree(files: dict):
    from ascend_doctor.sync.archive import Tree

    return Tree("fixture", files)


def test_transformers_5_6_layout_config_mapping_in_auto_mappings():
    """transformers >= 5.6 generates CONFIG_MAPPING_NAMES into auto_mappings.py; configuration_auto.py imports it,
    `.update()`s it and rebuilds it with `OrderedDict(**{...}, **CONFIG_MAPPING_NAMES)`. Reading only
    configuration_auto.py found no keys, and every model_type looked unknown (SERVE201 failed every model)."""
    auto = "transformers/models/auto/"
    t = _tree({
        auto + "auto_mappings.py": 'from collections import OrderedDict\nCONFIG_MAPPING_NAMES = OrderedDict(\n'
                                   '    [\n        ("qwen3_moe", "Qwen3MoeConfig"),\n        ("deepseek_v4", "X"),\n'
                                   '    ]\n)\n',
        auto + "configuration_auto.py": 'from .auto_mappings import CONFIG_MAPPING_NAMES, OTHER\n'
                                        'CONFIG_MAPPING_NAMES.update({"mlcd": "MLCDVisionConfig"})\n'
                                        'CONFIG_MAPPING_NAMES = OrderedDict(**{"gpt-sw3": "GPT2Config"}, '
                                        '**CONFIG_MAPPING_NAMES)\n'})
    f = read_installed(".", t.read, t.listdir)
    assert f.transformers_model_types.names == ["deepseek_v4", "gpt-sw3", "mlcd", "qwen3_moe"]
    assert "auto_mappings.py" in f.transformers_model_types.source


def test_transformers_import_from_elsewhere_is_not_guessed():
    t = _tree({"transformers/models/auto/configuration_auto.py": "from .gone import CONFIG_MAPPING_NAMES\n"})
    f = read_installed(".", t.read, t.listdir)
    assert not f.transformers_model_types.ok and "gone.py" in f.transformers_model_types.why_not


def test_old_vllm_layouts():
    """0.7.x: reasoning parsers under entrypoints/openai/reasoning_parsers, --tokenizer-mode argparse choices;
    0.10.1-0.10.2: TokenizerMode in vllm/config/__init__.py; 0.12.0: _TOOL_PARSERS_TO_REGISTER in the old package."""
    t = _tree({
        "vllm/engine/arg_utils.py": "def add(parser):\n    parser.add_argument('--tokenizer-mode', type=str, "
                                    "choices=['auto', 'slow', 'mistral'])\n",
        "vllm/config.py": "X = 1\n",
        "vllm/entrypoints/openai/reasoning_parsers/deepseek.py":
            "@ReasoningParserManager.register_module('deepseek_r1')\nclass P: pass\n",
        "vllm/entrypoints/openai/tool_parsers/__init__.py": '_TOOL_PARSERS_TO_REGISTER = {"hermes": ("a", "B")}\n'})
    f = read_installed(".", t.read, t.listdir)
    assert f.tokenizer_modes.names == ["auto", "mistral", "slow"] and "arg_utils.py" in f.tokenizer_modes.source
    assert f.reasoning_parsers.names == ["deepseek_r1"]
    assert f.tool_parsers.names == ["hermes"]
    t = _tree({"vllm/config/__init__.py": 'TokenizerMode = Literal["auto", "hf", "slow", "mistral", "custom"]\n'})
    assert read_installed(".", t.read, t.listdir).tokenizer_modes.names == ["auto", "custom", "hf", "mistral", "slow"]


def test_tokenizer_modes_include_the_registry():
    """From 0.12 `--tokenizer-mode` is `TokenizerMode | str`: registry-only modes are accepted (vllm-0.30.0.tar.gz
    vllm/tokenizers/registry.py `_VLLM_TOKENIZERS`, e.g. kimi_audio, deepseek_v41)."""
    t = _tree({"vllm/config/model.py": 'TokenizerMode = Literal["auto", "hf", "slow", "mistral"]\n',
               "vllm/tokenizers/registry.py": '_VLLM_TOKENIZERS = {\n    "deepseek_v41": ("a", "B"),\n'
                                              '    "kimi_audio": ("a", "B"),\n    "hf": ("hf", "C"),\n}\n'})
    f = read_installed(".", t.read, t.listdir)
    assert f.tokenizer_modes.names == ["auto", "deepseek_v41", "hf", "kimi_audio", "mistral", "slow"]
    assert "registry.py" in f.tokenizer_modes.source


def test_probe_says_whether_vllm_ascend_is_an_editable_install(tmp_path):
    """The images' `pip install -e` of vllm-ascend runs its source tree, which holds the subpackages a release's
    wheel leaves out (SERVE311's wheel-only rules stand aside for it)."""
    site = tmp_path / "site-packages"
    info = site / "vllm_ascend-0.9.0rc1.dist-info"
    info.mkdir(parents=True)
    checkout = tmp_path / "vllm-ascend"
    (checkout / "vllm_ascend").mkdir(parents=True)
    (checkout / "vllm_ascend" / "__init__.py").write_text("")
    py = PythonEnv(purelib=str(site), distributions=[Distribution(name="vllm-ascend", version="0.9.0rc1",
                                                                  location=str(site))])
    host = DirHost(python=py)
    store = FactStore(host, RunOptions(), probes={"python": lambda h, c: h.python_env()})
    (info / "direct_url.json").write_text('{"url": "file://%s", "dir_info": {"editable": true}}' % checkout)
    assert vllm_files_probe(host, store).vllm_ascend_editable is True
    (info / "direct_url.json").write_text('{"url": "file:///x", "dir_info": {}}')
    assert vllm_files_probe(host, store).vllm_ascend_editable is False

"""The vllm serve command-line parser: forms, flag shapes, aliases, --config YAML, redaction."""

from __future__ import annotations

import pytest

from ascend_doctor.knowledge.serve_options import option_syntax
from ascend_doctor.parsers.serve_cmdline import DEFAULT_MODEL, load_config_yaml, served_address
from tests.helpers import parse_serve as parse_serve_command
from tests.helpers import shipped

SEED = ("vllm serve /models/DeepSeek-V4-Flash-w8a8-mtp --tensor-parallel-size 8 --enable-auto-tool-choice "
        "--tool-call-parser deepseek_v4 --reasoning-parser deepseek_v4 --quantization ascend").split()


def test_seed_command():
    c = parse_serve_command(SEED)
    assert c.recognized and c.entry == "vllm serve"
    assert c.model == "/models/DeepSeek-V4-Flash-w8a8-mtp"
    assert c.int_opt("tensor-parallel-size") == 8
    assert c.flag("enable_auto_tool_choice") is True
    assert c.get("tool_call_parser") == "deepseek_v4" and c.get("quantization") == "ascend"
    assert c.unknown_args == [] and c.argv == SEED


def test_api_server_module_form_and_equals():
    c = parse_serve_command(["python3", "-u", "-m", "vllm.entrypoints.openai.api_server", "--model=/m/Qwen3-8B",
                             "--tensor_parallel_size=2", "--port", "9000"])
    assert c.entry == "api_server" and c.model == "/m/Qwen3-8B"
    assert c.int_opt("tensor_parallel_size") == 2
    assert served_address(c) == ("127.0.0.1", 9000)


def test_cli_main_form_and_env_prefix():
    c = parse_serve_command(["env", "VLLM_USE_V1=0", "HF_TOKEN=hf_secretsecretsecret1234", "/opt/venv/bin/python",
                             "-m", "vllm.entrypoints.cli.main", "serve", "Qwen/Qwen3-8B", "-tp", "2"])
    assert c.entry == "cli.main serve" and c.model == "Qwen/Qwen3-8B"
    assert c.env["VLLM_USE_V1"] == "0"
    assert "hf_secretsecretsecret1234" not in " ".join(c.argv)


def test_booleans_no_prefix_and_unknown_flags():
    c = parse_serve_command("vllm serve m --enforce-eager --no-enable-prefix-caching --some-new-flag --port 1".split())
    assert c.options["enforce_eager"] is True
    assert c.options["enable_prefix_caching"] is False
    assert c.options["some_new_flag"] is True  # unknown flag followed by another option: a flag
    assert c.int_opt("port") == 1


def test_boolean_before_model_does_not_eat_it():
    c = parse_serve_command("vllm serve --trust-remote-code /models/x -tp 2".split())
    assert c.model == "/models/x" and c.flag("trust_remote_code")


@pytest.mark.parametrize("alias,dest", [("-tp", "tensor_parallel_size"), ("-pp", "pipeline_parallel_size"),
                                        ("-dp", "data_parallel_size"), ("-q", "quantization")])
def test_short_aliases(alias, dest):
    c = parse_serve_command(["vllm", "serve", "m", alias, "4"])
    assert c.options[dest] == "4"


def test_short_aliases_are_the_ones_vllm_declares():
    # vLLM 0.13.0 vllm/engine/arg_utils.py declares exactly these (plus -O handled as a prefix).
    syntax = option_syntax(shipped().matrix)
    assert {"-tp", "-pp", "-dp", "-dcp", "-pcp", "-q", "-n", "-r", "-cc", "-ac"} <= set(syntax.aliases)
    assert "enable_auto_tool_choice" in syntax.flags and "tensor_parallel_size" not in syntax.flags


def test_O_level_and_negative_numbers():
    # no vLLM release named: -O3 is the compilation config's level (FlexibleArgumentParser's `-O.level=3`)
    c = parse_serve_command("vllm serve m -O3 --seed -1".split())
    assert c.options["compilation_config.level"] == "3" and c.options["seed"] == "-1"


@pytest.mark.parametrize("vllm,level", [("0.9.1", "compilation_config.level"), ("0.11.0", "compilation_config.level"),
                                        ("0.13.0", "optimization_level"), (None, "compilation_config.level")])
def test_every_spelling_of_the_O_level(vllm, level):
    # vLLM 0.9.2-0.11.0 utils: `-O3`/`-O=3` -> `-O.level=3`, `-O 3` -> `-O.level 3`; 0.13.0 argparse_utils:
    # `--optimization-level 3` (read in the sdists)
    for argv in ("m -O3", "m -O=3", "m -O 3"):
        c = parse_serve_command(["vllm", "serve", *argv.split()], vllm_version=vllm)
        assert c.options == {level: "3"} and c.unknown_args == [], argv
    dotted = parse_serve_command("vllm serve m -O.mode=3".split(), vllm_version=vllm)
    assert dotted.options == {"compilation_config.mode": "3"}
    as_json = parse_serve_command(["vllm", "serve", "m", "-O", '{"level": 3}'], vllm_version=vllm)
    assert as_json.json_value("compilation_config") == ({"level": 3}, None)


def test_a_bare_level_after_the_long_option_only_where_the_release_reads_it():
    # CompilationConfig.from_cli took "0".."3" as the level up to vLLM 0.9.1; 0.9.2 on validate the value as JSON
    old = parse_serve_command("vllm serve m --compilation-config 3".split(), vllm_version="0.9.1")
    assert old.options == {"compilation_config.level": "3"}
    new = parse_serve_command("vllm serve m --compilation-config 3".split(), vllm_version="0.13.0")
    assert new.options == {"compilation_config": "3"} and new.json_value("compilation_config")[1]
    unknown = parse_serve_command("vllm serve m --compilation-config=1".split())  # which vLLM runs is not known
    assert unknown.options == {"compilation_config.level": "1"}


def test_multi_value_served_model_name():
    c = parse_serve_command("vllm serve m --served-model-name a b --port 1".split())
    assert c.options["served_model_name"] == ["a", "b"] and c.unknown_args == []


def test_default_model_and_unknown_positionals():
    c = parse_serve_command(["vllm", "serve", "--port", "8000"])
    assert c.model == DEFAULT_MODEL and c.model_defaulted
    c = parse_serve_command(["vllm", "serve", "m", "extra"])
    assert c.unknown_args == ["extra"]


def test_not_vllm():
    c = parse_serve_command(["bash", "-c", "vllm serve x"])
    assert not c.recognized and c.model is None
    c = parse_serve_command(["python3", "server.py", "--port", "8123"])
    assert not c.recognized and served_address(c) == ("127.0.0.1", 8123)


def test_secrets_redacted_but_tokenizer_mode_kept():
    c = parse_serve_command("vllm serve m --api-key sk-abcdefghijklmnop --tokenizer-mode deepseek_v4".split())
    assert c.options["api_key"] == "<redacted>" and c.options["tokenizer_mode"] == "deepseek_v4"
    assert "sk-abcdefghijklmnop" not in c.display and "deepseek_v4" in c.display
    c = parse_serve_command("vllm serve m --api-key=k1".split(), keep_secrets=True)
    assert c.options["api_key"] == "k1"
    assert parse_serve_command("vllm serve m --api-key=k1".split()).argv[-1] == "--api-key=<redacted>"


def test_config_yaml_with_cli_precedence():
    files = {"/etc/serve.yaml": "# vLLM config\nmodel: /models/from-yaml\ntensor-parallel-size: 8\n"
                                "enable_auto_tool_choice: true\ntool-call-parser: 'hermes'  # comment\nport: 8001\n"}
    c = parse_serve_command(["vllm", "serve", "--config", "/etc/serve.yaml", "--port", "9000"], read_text=files.get)
    assert c.model == "/models/from-yaml"
    assert c.int_opt("tensor_parallel_size") == 8 and c.flag("enable_auto_tool_choice")
    assert c.get("tool_call_parser") == "hermes"
    assert c.int_opt("port") == 9000 and c.option_sources["port"] == "cli"
    assert c.option_sources["tensor_parallel_size"] == "/etc/serve.yaml"
    assert "/etc/serve.yaml" in c.source("tensor_parallel_size")


def test_config_unreadable_or_malformed():
    c = parse_serve_command(["vllm", "serve", "m", "--config", "/nope.yaml"], read_text=lambda p: None)
    assert c.config_error and "/nope.yaml" in c.config_error
    c = parse_serve_command(["vllm", "serve", "m", "--config", "/c.yaml"], read_text=lambda p: "just words\n")
    assert c.config_error and "/c.yaml" in c.config_error


def test_config_nested_values(monkeypatch):
    text = "compilation-config:\n  level: 3\nport: 8001\n"
    c = parse_serve_command(["vllm", "serve", "m", "--config", "/c.yaml"], read_text=lambda p: text)
    assert c.config_error is None and c.int_opt("port") == 8001


def test_config_yaml_is_read_as_vllm_reads_it():
    assert load_config_yaml("---\na: 1\nb: \"x y\"\nc: false\nd: [1, 2]\ne: null\nf:\n  - x\n") == \
        {"a": 1, "b": "x y", "c": False, "d": [1, 2], "e": None, "f": ["x"]}
    for bad in ("- item\n", "a: [\n", "[" * 5000):
        with pytest.raises(ValueError):
            load_config_yaml(bad)


def test_option_syntax_is_per_vllm_release():
    """Which options take no value is read per release from matrices/vllm-options.toml (the `no-X` forms a release
    defines, plus the serve_option_kind rows), not from a list frozen at vLLM 0.13.0: `--language-model-only` is a
    flag of newer releases only, so `--language-model-only /models/x` keeps /models/x as the model there, and
    `--hf-token` takes a value although vLLM defines `--no-hf-token`."""
    new = option_syntax(shipped().matrix, "0.32.0")
    old = option_syntax(shipped().matrix, "0.13.0")
    assert "language_model_only" in new.flags and "language_model_only" not in old.flags
    assert "headless" in old.flags and "hf_token" not in new.flags and "served_model_name" in new.multi
    c = parse_serve_command(["vllm", "serve", "--language-model-only", "/models/x"], vllm_version="0.32.0")
    assert c.model == "/models/x" and c.flag("language-model-only")
    c = parse_serve_command(["vllm", "serve", "/m", "--hf-token", "hf_abc", "--port", "8000"], keep_secrets=True)
    assert c.get("hf_token") == "hf_abc" and c.get("port") == "8000"


def test_a_json_option_with_its_dotted_form_folded_in():
    """vLLM folds `--compilation-config.pass_config.enable_sp true` into the JSON option; a JSON-looking value is read
    as JSON, any other stays a string (the DSpark tutorial's settings, given both ways)."""
    cmd = parse_serve_command(["vllm", "serve", "/m", "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
                               "--compilation-config.pass_config.enable_sp", "true",
                               "--compilation-config.max_cudagraph_capture_size", "48"])
    merged, err = cmd.json_with_dotted("compilation_config")
    assert err is None and merged == {"cudagraph_mode": "FULL_DECODE_ONLY", "pass_config": {"enable_sp": True},
                                      "max_cudagraph_capture_size": 48}
    bad = parse_serve_command(["vllm", "serve", "/m", "--compilation-config", "{oops"])
    assert bad.json_with_dotted("compilation_config")[0] is None and bad.json_with_dotted("compilation_config")[1]
    assert parse_serve_command(["vllm", "serve", "/m"]).json_with_dotted("compilation_config") == ({}, None)


def test_a_unique_prefix_of_an_option_is_that_option_as_argparse_reads_it():
    """vLLM's FlexibleArgumentParser keeps argparse's allow_abbrev: `--tensor-parallel 4` serves with TP 4 (held-out
    h38d #4891's command). Only for a recorded release (its option list), only a unique prefix (`--enable` is
    ambiguous: argparse refuses it), and said in the command's notes."""
    from ascend_doctor.knowledge.serve_options import parse_serve

    m = shipped().matrix
    c = parse_serve("vllm serve /m --tensor-parallel 4 --max-model 8192 --enable".split(), m, vllm_version="0.13.0")
    assert c.int_opt("tensor_parallel_size") == 4 and c.int_opt("max_model_len") == 8192
    assert c.options["enable"] is True and "tensor_parallel" not in c.options
    assert "--tensor-parallel read as --tensor-parallel-size (argparse takes a unique prefix of an option)" in c.notes
    unknown = parse_serve("vllm serve /m --tensor-parallel 4".split(), m)  # which vLLM: not known, not guessed
    assert "tensor_parallel" in unknown.options and not unknown.notes
    assert option_syntax(m, "0.13.0").options and not option_syntax(m).options

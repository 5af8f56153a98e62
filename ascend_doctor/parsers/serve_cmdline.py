"""Understanding a `vllm serve` command line without running or importing vLLM (pure: text in, ServeCommand out).

Recognised forms:
  vllm serve MODEL [options]                                  (any path to the `vllm` console script)
  python -m vllm.entrypoints.openai.api_server --model MODEL [options]
  python -m vllm.entrypoints.cli.main serve MODEL [options]
  env K=V ... <one of the above>                              (the assignments are recorded in `env`)

Options follow vLLM's FlexibleArgumentParser: `--flag value`, `--flag=value`, underscores or dashes
(`--tensor_parallel_size` == `--tensor-parallel-size`), `--no-<flag>` for BooleanOptionalAction flags, the short aliases
of vllm/engine/arg_utils.py (`-tp -pp -dp -dcp -pcp -q -n -r -cc -ac -O` and the `-dp*` family) and
`--config FILE` (a YAML file of the same options; the command line wins over the file, as in vLLM).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pydantic import Field

from ascend_doctor.core.model import Model
from ascend_doctor.text.jsonread import loads
from ascend_doctor.text.redact import REDACTED, is_secret_option, redact_argv
from ascend_doctor.text.switches import is_on


@dataclass(frozen=True)
class OptionSyntax:
    """How the options of one vLLM release parse, as dest names: `flags` take no value (`--no-X` sets False), `multi`
    take every value up to the next option, `aliases` maps short spellings (`-tp`). It is data (the matrix's
    vllm-options.toml, `Matrix.serve_option_syntax`); `ascend_doctor.knowledge.serve_options.parse_serve` picks the one
    of the installed vLLM."""

    flags: frozenset = frozenset()
    multi: frozenset = frozenset()
    aliases: dict = field(default_factory=dict)
    # every option of the release (dest names) when it is recorded: argparse takes a unique prefix of one
    # (`--tensor-parallel 4` is `--tensor-parallel-size 4`, allow_abbrev); empty when the release is not known
    options: frozenset = frozenset()
    # the options whose bare 0-3 the release reads as the compilation level (`--compilation-config 3`, vLLM <= 0.9.1)
    levels: frozenset = frozenset()

    def optimization_level(self) -> str:
        """Where `-O3` / `-O 3` lands: vLLM's --optimization-level where the release has it (0.12.0 on), else the
        compilation config's `level` (`-O.level=3`, what FlexibleArgumentParser rewrote it to before)."""
        return "optimization_level" if "optimization_level" in self.options else "compilation_config.level"


_LEVELS = frozenset({"0", "1", "2", "3"})

API_SERVER_MODULES = ("vllm.entrypoints.openai.api_server",)
CLI_MODULES = ("vllm.entrypoints.cli.main", "vllm")
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"  # vllm/config/model.py default `model` (0.13.0), used when none is given
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class Launch(Model):
    """How a command line starts, before any option is read: the `env K=V` assignments in front, the program, and
    which vLLM entry point it is. The serving interpreter (probes/serve.py `serve_entry`) and the server's
    environment (`server_env`) are derived from this, and `parse_serve_command` starts from it."""

    env: dict[str, str] = Field(default_factory=dict, description="`env K=V` assignments before the command")
    argv: list[str] = Field(default_factory=list, description="The command after the assignments")
    entry: str = Field("", description="'vllm serve' | 'api_server' | 'cli.main serve' | 'LLM()' (a script's "
                                       "offline engine, read as the options it stands for) | '' (not vLLM)")
    start: int = Field(-1, description="Index in `argv` of the first argument after the entry point")

    @property
    def program(self) -> str:
        return self.argv[0] if self.argv else ""


_SHELL_EXPANSION = re.compile(r"\$(?:\{|\(|[A-Za-z_]|[0-9@*#?])")


# vLLM parses these with `human_readable_int` ('32k' = 32,000, '32K' = 32,768; vllm/engine/arg_utils.py of vLLM 0.9.2:
# `if name in {"max_model_len", "max_num_batched_tokens"}: kwargs[name]["type"] = human_readable_int`).
HUMAN_READABLE = frozenset({"max_model_len", "max_num_batched_tokens"})
_HUMAN_INT = re.compile(r"^(\d{1,30}(?:\.\d{1,30})?)([kKmMgG])\Z")


def human_readable_int(value: str) -> int:
    """vLLM's reading of '25.6k', '1K', '2M' (a decimal suffix in lower case, a binary one in upper case, which takes
    no decimals); ValueError as vLLM's own argparse error when it is neither that nor an integer."""
    m = _HUMAN_INT.fullmatch(value.strip())
    if not m:
        return int(value)
    number, suffix = m.groups()
    if suffix.islower():
        return int(float(number) * 10 ** {"k": 3, "m": 6, "g": 9}[suffix])
    if "." in number:
        raise ValueError(f"Decimals are not allowed with binary suffixes like {suffix}. Did you mean to use "
                         f"{number}{suffix.lower()} instead?")
    return int(number) * 2 ** {"K": 10, "M": 20, "G": 30}[suffix]


# engine arguments whose default is True in vLLM: False is said on the command line as `--no-<option>`; False for any
# other is its default, and no option
DEFAULT_ON = frozenset({"enable_prefix_caching", "enable_chunked_prefill"})


def engine_option(key: str, value: Any) -> list[str]:
    """The `vllm serve` words of one engine argument given as a Python value (vLLM's `non-default args:` log line, an
    offline `LLM(key=value)`): True a flag, a dict (a JSON option) its JSON text, a list its words (vLLM's list
    options take nargs: `--served-model-name a b`, `--cuda-graph-sizes 1 2 4`), None or a default's False nothing."""
    flag = "--" + str(key).replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + str(key).replace("_", "-")] if key in DEFAULT_ON else []
    if value is None:
        return []
    if isinstance(value, dict):
        return [flag, json.dumps(value)]
    if isinstance(value, (list, tuple)):
        return [flag, *(str(v) for v in value)]
    return [flag, str(value)]


def shell_expansions(options: dict) -> dict[str, str]:
    """dest -> value, for each option whose value holds an unexpanded shell expansion (`$7`, `${TP}`, `$(nproc)`):
    what a launch script shows before its shell runs it. Only text can hold one; a live command's argv is expanded."""
    return {k: v for k, v in options.items() if isinstance(v, str) and _SHELL_EXPANSION.search(v)}


_WHOLE_EXPANSION = re.compile(r"\$(?:\{[A-Za-z_@*#?0-9][^{}]*\}|\([^()]*\)|[A-Za-z_]\w*|[0-9@*#?])")


def is_expansion(word: str) -> bool:
    """Whether a word is one shell expansion and nothing else (`$EXTRA_ARGS`, `${ARGS[@]}`, `$@`, `$(cat args)`):
    in a pasted launch script it stands for words the paste does not show."""
    return bool(_WHOLE_EXPANSION.fullmatch(word))


def launch_of(argv: list[str]) -> Launch:
    """The `Launch` of a command line (pure)."""
    rest = list(argv)
    env: dict[str, str] = {}
    if rest and os.path.basename(rest[0]) == "env":
        rest = rest[1:]
        while rest and _ENV_ASSIGN.match(rest[0]):
            k, _, v = rest[0].partition("=")
            env[k] = v
            rest = rest[1:]
    entry, start = _find_entry(rest)
    return Launch(env=env, argv=rest, entry=entry, start=start)



class ServeCommand(Model):
    """A parsed `vllm serve` command line. Option keys are vLLM's dest names (`tensor_parallel_size`)."""

    argv: list[str] = Field(description="The command line as given, secrets redacted")
    recognized: bool = Field(False, description="True when this is a vllm serve / api_server command")
    entry: str = Field("", description="'vllm serve' | 'api_server' | 'cli.main serve' | 'LLM()' (a script's "
                                       "offline engine, read as the options it stands for) | '' (not vLLM)")
    model: Optional[str] = None
    model_defaulted: bool = Field(False, description="No model given: vLLM falls back to its default model")
    options: dict[str, Any] = Field(default_factory=dict, description="dest -> value (str, or bool for flags)")
    option_sources: dict[str, str] = Field(default_factory=dict, description="dest -> 'cli' | 'config: FILE'")
    unknown_args: list[str] = Field(default_factory=list, description="Positionals vLLM would reject")
    env: dict[str, str] = Field(default_factory=dict, description="`env K=V` assignments before the command")
    config_file: Optional[str] = None
    config_error: Optional[str] = None
    notes: list[str] = Field(default_factory=list)
    cut: list[str] = Field(default_factory=list, description="dests given whose value the source shows only in part "
                                                             "(a paste that ends inside it): not read")
    unexpanded: dict[str, str] = Field(default_factory=dict, description="dest -> a value that is a shell expansion "
                                       "the source does not resolve (`$7`, `${TP}` in a pasted launch script)")

    partial: bool = Field(False, description="the source shows only part of the command (a paste that elides or "
                                             "quotes some of it): an option not seen may still be given")

    def has(self, name: str) -> bool:
        return _dest(name) in self.options

    def is_cut(self, name: str) -> bool:
        """The option is given but its value was not seen whole (a paste ends inside it)."""
        return _dest(name) in self.cut

    def get(self, name: str, default: Any = None) -> Any:
        return self.options.get(_dest(name), default)

    def flag(self, name: str) -> bool:
        """A boolean option's value (`--x` True, `--no-x` False, `x: true` in --config)."""
        v = self.options.get(_dest(name))
        if isinstance(v, bool):
            return v
        if isinstance(v, str):
            return is_on(v)
        return False

    def int_opt(self, name: str) -> Optional[int]:
        """An integer option, or None when absent; raises ValueError when present but not an integer, and
        FactUnavailable when its value is a shell expansion the source does not resolve (not known, not wrong)."""
        v = self._number(name)
        if v is None:
            return None
        return human_readable_int(v) if _dest(name) in HUMAN_READABLE else int(v)

    def float_opt(self, name: str) -> Optional[float]:
        v = self._number(name)
        return None if v is None else float(v)

    def _not_shown(self, dest: str) -> None:
        """FactUnavailable when the option's value is not in the source: a shell expansion it does not resolve, or a
        value it elides or ends inside (`cut`) — not known, never wrong."""
        from ascend_doctor.core.errors import FactUnavailable
        from ascend_doctor.i18n import T

        if dest in self.unexpanded:
            raise FactUnavailable(f"serve_cmd.{dest}", T(
                "--{option} is {value}, a shell expansion the paste does not resolve",
                option=dest.replace("_", "-"), value=self.unexpanded[dest]))
        if dest in self.cut:
            raise FactUnavailable(f"serve_cmd.{dest}", T(
                "--{option} is given, but the text elides its value or ends inside it", option=dest.replace("_", "-")))

    def _number(self, name: str) -> Optional[str]:
        dest = _dest(name)
        self._not_shown(dest)
        v = self.options.get(dest)
        if v is None or isinstance(v, bool):
            return None
        return str(v).strip()

    def json_value(self, name: str) -> tuple[Optional[dict], Optional[str]]:
        """A JSON-object option (`--additional-config`, `--eplb-config`, `--speculative-config`): (value, None),
        (None, None) when absent, or (None, the parser's own error) when vLLM would refuse it at start."""
        raw = self.get(name)
        if raw is None or isinstance(raw, bool):
            return None, None
        self._not_shown(_dest(name))
        if isinstance(raw, dict):  # from a --config YAML
            return raw, None
        try:
            value = loads(str(raw))
        except ValueError as exc:
            return None, f"{self.source(name)}: {exc}"
        if not isinstance(value, dict):
            return None, f"{self.source(name)}: not a JSON object"
        return value, None

    def json_with_dotted(self, name: str) -> tuple[Optional[dict], Optional[str]]:
        """`json_value` with the option's dotted form folded in, as vLLM's parser folds it
        (`--compilation-config.pass_config.enable_sp true` sets `{"pass_config": {"enable_sp": true}}`; a value
        that is JSON is read as JSON, any other stays a string)."""
        value, err = self.json_value(name)
        if err:
            return None, err
        out = dict(value or {})
        for dest, raw in self.options.items():
            head, _, path = dest.partition(".")
            if head != _dest(name) or not path:
                continue
            if isinstance(raw, str):
                try:
                    raw = loads(raw)
                except ValueError:
                    pass
            node = out
            *parents, last = path.split(".")
            for p in parents:
                node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
            node[last] = raw
        return out, None

    def graph_capture(self) -> tuple[bool, str]:
        """(graph capture on, how it was decided): `--enforce-eager`, or `cudagraph_mode` NONE in
        --compilation-config."""
        if self.flag("enforce_eager"):
            return False, "--enforce-eager"
        comp, _ = self.json_value("compilation_config")
        mode = str((comp or {}).get("cudagraph_mode") or "").upper()
        if mode == "NONE":
            return False, "--compilation-config cudagraph_mode NONE"
        return True, f"--compilation-config cudagraph_mode {mode}" if mode else "graph mode (no --enforce-eager)"

    def source(self, name: str) -> str:
        """Where an option came from, for evidence: `--flag value` or `FILE: key`."""
        d = _dest(name)
        src = self.option_sources.get(d, "cli")
        flag = "--" + d.replace("_", "-")
        if src == "cli":
            v = self.options.get(d)
            return flag if isinstance(v, bool) else f"{flag} {v}"
        return f"{src}: {d.replace('_', '-')}: {self.options.get(d)}"

    @property
    def display(self) -> str:
        return " ".join(self.argv)


def _dest(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def _is_python(arg: str) -> bool:
    return bool(re.match(r"^python[0-9.]*$", os.path.basename(arg)))


def _find_entry(argv: list[str]) -> tuple[str, int]:
    """(entry kind, index of the first option argument), or ('', -1) when this is not a vLLM server command."""
    if not argv:
        return "", -1
    base = os.path.basename(argv[0])
    if base == "vllm" and len(argv) > 1 and argv[1] == "serve":
        return "vllm serve", 2
    if _is_python(argv[0]):
        i = 1
        while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":
            i += 1  # interpreter flags such as -u, -O, -X dev (values after -X/-W are rare here)
        if i + 1 < len(argv) and argv[i] == "-m":
            mod = argv[i + 1]
            if mod in API_SERVER_MODULES:
                return "api_server", i + 2
            if mod in CLI_MODULES and i + 2 < len(argv) and argv[i + 2] == "serve":
                return "cli.main serve", i + 3
    return "", -1


def load_config_yaml(text: str) -> dict[str, Any]:
    """vLLM's `--config FILE`, read as vLLM reads it (PyYAML's safe_load); ValueError with the parser's own words."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).replace("\n", " ")) from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("the file is not a mapping of option: value")
    return {str(k): v for k, v in data.items()}


def host_text_reader(host) -> Callable[[str], Optional[str]]:
    """`read_text` for parse_serve_command over a Host: a file's text, or None when it cannot be read."""
    def read(path: str) -> Optional[str]:
        r = host.read_file(path)
        return r.content if r.ok else None

    return read


def _abbreviation(dest: str, syntax: OptionSyntax, cmd: ServeCommand) -> str:
    """The option a unique prefix stands for, as vLLM's argparse (allow_abbrev) reads it; `dest` itself when it is an
    option, is no prefix of one, or of several (argparse refuses an ambiguous one)."""
    if not syntax.options or dest in syntax.options or dest.startswith("no_"):
        return dest
    longer = [o for o in syntax.options if o.startswith(dest)]
    if len(longer) != 1:
        return dest
    if cmd.recognized:
        cmd.notes.append(f"--{dest.replace('_', '-')} read as --{longer[0].replace('_', '-')} (argparse takes a "
                         "unique prefix of an option)")
    return longer[0]


def _read_args(args: list[str], syntax: OptionSyntax, cmd: ServeCommand) -> tuple[list[str], dict[str, Any]]:
    """(positionals, dest -> value) of the arguments after the entry point, as vLLM's argparse reads them."""
    positionals: list[str] = []
    cli_opts: dict[str, Any] = {}
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            positionals.extend(args[i:])
            break
        if not a.startswith("-") or a == "-" or re.match(r"^-\d", a):
            positionals.append(a)
            continue
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            dest = _abbreviation(_dest(name), syntax, cmd)
        else:
            name, eq, value = a.partition("=")
            dest = syntax.aliases.get(name)
            if name.startswith("-O.") and len(name) > 3:
                dest = "compilation_config" + name[2:]  # -O.mode=3: a key of the compilation config
            elif name.startswith("-O") and len(name) > 2:
                dest, eq, value = "compilation_config", "=", name[2:]  # -O3, -O{"mode": 3}
            if (name[2:] in _LEVELS and name[:2] == "-O") or (name == "-O" and (
                    value if eq else "".join(args[i:i + 1])) in _LEVELS):
                dest = syntax.optimization_level()  # -O3, -O=3, -O 3: the optimization level, not a JSON object
            elif dest is None and len(name) > 2 and name[:2] in syntax.aliases:
                # argparse reads a single-dash word that starts with a short option as that option and its value:
                # `-quantization ascend` is `-q uantization` and a stray `ascend` (vllm-ascend#3494)
                dest, value = syntax.aliases[name[:2]], name[2:] + eq + value
                eq = "="
                if cmd.recognized:
                    cmd.notes.append(f"{a!r} read as {name[:2]} {value!r} (argparse takes a single-dash word that "
                                     f"starts with a short option as that option and its value)")
            if dest is None:
                if cmd.recognized:
                    cmd.notes.append(f"unrecognised short option {a!r}")
                dest = _dest(name)
        if dest in syntax.levels and (value if eq else "".join(args[i:i + 1])) in _LEVELS:
            dest = "compilation_config.level"  # `--compilation-config 3`: the level, in the releases that read it so
        if eq:
            cli_opts[dest] = value
            continue
        base = dest[3:] if dest.startswith("no_") else dest
        if base in syntax.flags:
            cli_opts[base] = not dest.startswith("no_")
            continue
        if base in syntax.multi:
            values = []
            while i < len(args) and not args[i].startswith("-"):
                values.append(args[i])
                i += 1
            cli_opts[dest] = values[0] if len(values) == 1 else (values or True)
            continue
        if i < len(args) and not (args[i].startswith("-") and not re.match(r"^-\d", args[i])):
            cli_opts[dest] = args[i]
            i += 1
        else:
            cli_opts[dest] = True  # a flag we do not know takes no value here
    return positionals, cli_opts


def _read_config(cli_opts: dict[str, Any], cmd: ServeCommand,
                 read_text: Optional[Callable[[str], Optional[str]]]) -> tuple[dict[str, Any], dict[str, str]]:
    """(options, sources) of `--config FILE` (lower precedence than the command line, as in vLLM); `cli_opts` loses
    its `config` key when the file is read."""
    options: dict[str, Any] = {}
    sources: dict[str, str] = {}
    cfg = cli_opts.pop("config", None)
    if isinstance(cfg, str) and cmd.recognized:
        cmd.config_file = cfg
        text = read_text(cfg) if read_text else None
        if text is None:
            cmd.config_error = f"cannot read --config {cfg}"
        else:
            try:
                for k, v in load_config_yaml(text).items():
                    d = _dest(k)
                    if d in ("model", "model_tag") and v is not None:
                        d = "model"
                    options[d] = v
                    sources[d] = f"{cfg}"
            except ValueError as exc:
                cmd.config_error = f"--config {cfg}: {exc}"
    elif cfg is not None:
        cli_opts["config"] = cfg
    return options, sources


def parse_serve_command(argv: list[str], read_text: Optional[Callable[[str], Optional[str]]] = None,
                        keep_secrets: bool = False, *, syntax: OptionSyntax) -> ServeCommand:
    """Parse `argv` (the command after `--`) with the option `syntax` of the vLLM that will run it. `read_text(path)`
    returns a file's text or None (for --config).

    Values of secret options (`--api-key`, `--hf-token`) are replaced by `<redacted>` unless `keep_secrets`.
    """
    argv = list(argv)
    launch = launch_of(argv)
    rest, entry, start = launch.argv, launch.entry, launch.start
    cmd = ServeCommand(argv=redact_argv(argv), env=launch.env)
    cmd.entry = entry
    cmd.recognized = bool(entry)
    # Options are parsed even for a command that is not vLLM (e.g. a wrapper script taking --host/--port).
    args = rest[start:] if entry else rest[1:]
    positionals, cli_opts = _read_args(args, syntax, cmd)
    options, sources = _read_config(cli_opts, cmd, read_text)
    for k, v in cli_opts.items():
        options[k] = v
        sources[k] = "cli"
    model = None
    if cmd.recognized and entry != "api_server" and positionals:
        model = positionals.pop(0)
        sources["model"] = "cli"
    if model is None and isinstance(options.get("model"), str):
        model = options["model"]
    options.pop("model", None)
    if cmd.recognized:
        if model is None:
            cmd.model_defaulted = True
            cmd.notes.append(f"no model given: vLLM serves its default {DEFAULT_MODEL}")
            model = DEFAULT_MODEL
        cmd.model = model
    if not keep_secrets:
        for k in list(options):
            if is_secret_option(k) and options[k] not in (None, True, False):
                options[k] = REDACTED
    cmd.options = options
    cmd.option_sources = {k: v for k, v in sources.items() if k in options}
    # Words after `--` are positionals to argparse, `--api-key X` among them: their values are masked like the rest.
    cmd.unknown_args = positionals if keep_secrets else redact_argv(positionals)
    return cmd


def served_address(cmd: ServeCommand) -> tuple[str, int]:
    """(host, port) a client on this machine reaches the server at: --host/--port, default 127.0.0.1:8000."""
    host = str(cmd.get("host") or "127.0.0.1")
    if host in ("0.0.0.0", "::", "", "[::]"):
        host = "127.0.0.1"
    try:
        port = int(str(cmd.get("port") or 8000))
    except ValueError:
        port = 8000
    return host, port

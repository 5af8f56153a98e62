"""Facts for the `vllm serve` lint: the command line (`serve_cmd`, from `RunOptions.serve_argv`), what the installed
vLLM accepts (`vllm_files`) and the served model's files (`serve_model`). All read through the host seam (a
`--config` YAML, the vLLM sources, the model directory); nothing is imported.
"""

from __future__ import annotations

import posixpath
from typing import Any, Optional

from pydantic import Field

from ascend_doctor.core.errors import FactUnavailable
from ascend_doctor.core.model import Model
from ascend_doctor.i18n import T
from ascend_doctor.parsers.quant_description import QuantCoverage, group_size, layer_types, per_expert_layer
from ascend_doctor.parsers.serve_cmdline import Launch, ServeCommand, host_text_reader, launch_of
from ascend_doctor.parsers.vllm_source import InstalledVllm, editable_root, read_installed
from ascend_doctor.probes import probe
from ascend_doctor.probes.model_weights import description_coverage, read_index
from ascend_doctor.seam.host import REPLAY_MISS_NOTE
from ascend_doctor.seam.modelfolder import allowed_root, refusal
from ascend_doctor.text.jsonread import loads

MODEL_FILES_MAX = 4 * 1024 * 1024


def _reader(host):
    def read(path: str) -> Optional[str]:
        r = host.read_file(path)
        return r.content if r.ok else None

    def listdir(path: str) -> Optional[list]:
        r = host.list_dir(path)
        return r.entries if r.ok else None

    return read, listdir


class ServeEntry(Model):
    """How the command of `exec`/`collect --` starts (`RunOptions.serve_argv`) and the interpreter it will run in:
    `python -m …`'s argv[0], or the interpreter of the `vllm` script's `#!` line (found on the host's PATH)."""

    launch: Launch
    interpreter: Optional[str] = Field(None, description="None: the command does not say (see `why_not`)")
    how: str = Field("", description="how the interpreter was read off the command")
    why_not: str = ""


@probe("serve_entry", reads=())
def serve_entry_probe(host, ctx) -> ServeEntry:
    """The entry point and interpreter of the command line: read once, through the host (so a snapshot records the
    PATH lookup and the `#!` line), and the one road by which the command chooses the serving python."""
    argv = list(ctx.options.serve_argv or ())
    if not argv:
        raise FactUnavailable("serve_entry", T("no `vllm serve` command line was given (ascend-doctor exec -- vllm "
                                               "serve …)"))
    launch = launch_of(argv)
    if not launch.entry:
        return ServeEntry(launch=launch, why_not=T("not a vllm serve / api_server command line"))
    from ascend_doctor.probes.serving import on_path, shebang_python

    first = launch.program
    if launch.entry != "vllm serve":
        exe = first if "/" in first else on_path(host, first)
        return ServeEntry(launch=launch, interpreter=exe, how=T("the interpreter of `{program} -m`", program=first),
                          why_not="" if exe else T("{program} is not on PATH", program=first))
    script = first if "/" in first else on_path(host, first)
    if script is None:
        return ServeEntry(launch=launch, why_not=T("{program} is not on PATH", program=first))
    exe = shebang_python(host, script)
    return ServeEntry(launch=launch, interpreter=exe, how=T("the #! line of {script}", script=script),
                      why_not="" if exe else T("{script} has no #! line naming an interpreter", script=script))


@probe("serve_cmd", reads=("python",))
def serve_cmd_probe(host, ctx) -> ServeCommand:
    """The `vllm serve` command line of `exec`/`collect` (`RunOptions.serve_argv`), parsed with the option syntax of
    the serving python's vLLM; its `--config` YAML is read through the host (so a snapshot records it)."""
    argv = list(ctx.options.serve_argv or ())
    if not argv:
        raise FactUnavailable("serve_cmd", T("no `vllm serve` command line was given (ascend-doctor exec -- vllm "
                                             "serve …)"))
    from ascend_doctor.knowledge.serve_options import parse_serve

    py = ctx.try_fact("python")  # the serving python's vLLM decides which options are flags
    vllm = py.vllm_dist() if py is not None else None
    return parse_serve(argv, read_text=host_text_reader(host), vllm_version=vllm.version if vllm else None,
                       matrix=ctx.knowledge.matrix)



@probe("vllm_files", reads=("python",))
def vllm_files_probe(host, ctx) -> InstalledVllm:
    """Parser names, tokenizer modes, architectures, model types and env var names of the serving python's vLLM."""
    py = ctx.fact("python")
    vllm = py.vllm_dist()
    site = (vllm.location if vllm and vllm.location else None) or py.purelib or py.platlib
    if not site:
        raise FactUnavailable("vllm_files", T("the serving python reported no site-packages directory"))
    read, listdir = _reader(host)
    roots = {}
    for dist, pkg in (("vllm", "vllm"), ("vllm-ascend", "vllm_ascend")):
        d = py.dist(dist)
        where = (d.location if d and d.location else None) or site
        root = editable_root(where, dist, read, listdir) if d is not None else None
        if root and listdir(posixpath.join(root, pkg)) is not None:
            roots[pkg] = root
    fact = read_installed(site, read, listdir, roots=roots)
    fact.vllm_version = vllm.version if vllm else None
    va = py.dist("vllm-ascend")
    fact.vllm_ascend_version = va.version if va else None
    fact.vllm_ascend_editable = ("vllm_ascend" in roots) if va else None
    tf = py.dist("transformers")
    fact.transformers_version = tf.version if tf else None
    if tf is not None and tf.location and tf.location != site and not fact.transformers_model_types.ok:
        again = read_installed(tf.location, read, listdir).transformers_model_types
        if again.ok:
            fact.transformers_model_types = again
    return fact


class ServeModelFact(Model):
    """The served model's directory: config.json, tokenizer_config.json's chat template, template and quant files."""

    model: str
    path: Optional[str] = Field(None, description="The directory read ('' when the model is not on this machine)")
    resolved_from: str = Field("", description="local directory | Hugging Face cache")
    why_not: str = Field("", description="Why no directory was found")
    unrecorded: bool = Field(False, description="Replay: the snapshot has no entry for the path (not: recorded absent)")
    files: list[str] = Field(default_factory=list)
    config: Optional[dict[str, Any]] = None
    config_error: Optional[str] = None
    tokenizer_chat_template: Optional[str] = None
    chat_template_files: dict[str, str] = Field(default_factory=dict, description="chat_template.jinja/.json content")
    quant_description_files: list[str] = Field(default_factory=list)
    quant_type: Optional[str] = Field(None, description="`model_quant_type` of the quant description (e.g. W8A8)")
    quant_coverage: Optional[QuantCoverage] = Field(None, description="the description's entries against the "
                                                                      "checkpoint's weights (SERVE211)")
    quant_coverage_why_not: str = ""
    quant_per_expert: Optional[str] = Field(None, description="the first MoE layer the description names only by its "
                                                               "experts' shards (model.layers.3.mlp.experts)")
    quant_layers: Optional[dict[str, dict[str, str]]] = Field(
        None, description="layer kind (linear, moe) -> quant type -> the first weight described with it (SERVE322); "
                          "None when the description was not read")
    quant_group_size: Optional[int] = Field(None, description="the description's `group_size`, None when it has none")
    chat_template_arg: Optional[str] = Field(None, description="--chat-template: the file's text, or the inline text")
    chat_template_arg_error: Optional[str] = None
    checkpoint_bytes: Optional[int] = Field(None, description="model.safetensors.index.json metadata.total_size")
    checkpoint_source: str = Field("", description="where checkpoint_bytes came from, or why it is missing")
    draft_model: Optional[str] = Field(None, description="--speculative-config `model`: a separate draft checkpoint")
    draft_config: Optional[dict[str, Any]] = Field(None, description="the draft checkpoint's config.json")
    draft_why_not: str = Field("", description="why the draft's config.json was not read")
    refused: list[str] = Field(default_factory=list,
                               description="files not read: links out of the model folder (seam/modelfolder.py)")
    template_refused: Optional[str] = Field(None, description="a chat template file was such a link: why it was not "
                                                              "read (which template vLLM uses is then unknown)")


def _json(host, path: str, guard=None) -> tuple[Optional[Any], Optional[str]]:
    why = guard(path) if guard else None
    if why:
        return None, why
    r = host.read_file(path, max_bytes=MODEL_FILES_MAX)
    if not r.ok:
        return None, f"{path}: {r.error_message or r.error}"
    try:
        return loads(r.content), None
    except ValueError as exc:
        return None, f"{path}: not valid JSON ({exc})"


def _hf_cache_dir(host, env: dict, model: str) -> Optional[str]:
    """`<HF cache>/models--org--name/snapshots/<rev>` for a repo id (the ref in refs/main, else the only snapshot)."""
    hub = env.get("HF_HUB_CACHE") or posixpath.join(
        env.get("HF_HOME") or posixpath.join(env.get("HOME") or "/root", ".cache", "huggingface"), "hub")
    repo = posixpath.join(hub, "models--" + model.replace("/", "--"))
    snaps = host.list_dir(posixpath.join(repo, "snapshots"))
    if not snaps.ok or not snaps.entries:
        return None
    ref = host.read_file(posixpath.join(repo, "refs", "main"))
    rev = ref.content.strip() if ref.ok and ref.content.strip() in snaps.entries else sorted(snaps.entries)[-1]
    return posixpath.join(repo, "snapshots", rev)


def _template_text(value: Any) -> Optional[str]:
    """tokenizer_config.json `chat_template`: a string, or a list of {name, template} (all joined)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(t.get("template", "")) for t in value if isinstance(t, dict))
    return None


INDEX = "model.safetensors.index.json"


def _checkpoint_size(host, fact: ServeModelFact, guard, cache: dict) -> None:
    """The checkpoint's bytes from its index (what save_pretrained writes as metadata.total_size)."""
    if INDEX not in fact.files:
        fact.checkpoint_source = f"no {INDEX} (a single-file checkpoint is sized from config.json)"
        return
    path = posixpath.join(fact.path, INDEX)
    why = guard(path)
    if why:
        fact.checkpoint_source = why
        return
    data, why = read_index(host, path, cache)
    if data is None:
        fact.checkpoint_source = why
        return
    meta = data.get("metadata")
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, (int, float)) and total > 0:
        fact.checkpoint_bytes, fact.checkpoint_source = int(total), f"{path}: metadata.total_size"
    else:
        fact.checkpoint_source = f"{path}: no metadata.total_size"


def _guard(host, fact: ServeModelFact):
    """`guard(path)`: why a file of the model folder is not read (a link that leads out of it), else None; each
    refusal is also kept in `fact.refused`. Where the host cannot say (a replay without the link), the file is read."""
    folder = host.readlink(fact.path)
    root = allowed_root(folder.resolved if folder.resolved and not folder.error else fact.path)
    seen: dict[str, Optional[str]] = {}

    def guard(path: str) -> Optional[str]:
        if path not in seen:
            link = host.readlink(path)
            why = refusal(path, link.resolved, root) if link.target and link.resolved and not link.error else None
            seen[path] = str(why) if why else None
            if why:
                fact.refused.append(str(why))
        return seen[path]

    return guard


def _locate(host, ref: str) -> tuple[Optional[str], str, list[str], str, bool]:
    """Where a model reference is on this machine: (directory, local directory | Hugging Face cache, its files, why
    not found, whether a replay simply has no record of it)."""
    listing = host.list_dir(ref)
    if listing.ok:
        return ref, "local directory", sorted(listing.entries or []), "", False
    if not ref.startswith("/") and ref.count("/") == 1:
        cached = _hf_cache_dir(host, host.env(), ref)
        if cached:
            return cached, "Hugging Face cache", sorted(host.list_dir(cached).entries or []), "", False
        return None, "", [], (f"{ref} is not a local directory and is not in the Hugging Face cache "
                               "(vLLM would download it at start-up)"), False
    return (None, "", [], f"{ref}: {listing.error_message or listing.error or 'not a directory'}",
            REPLAY_MISS_NOTE in (listing.error_message or ""))


def _draft(host, cmd, fact: ServeModelFact) -> None:
    """A separate draft checkpoint's config.json (--speculative-config `model`): its layers are captured with the
    target's in every ACL graph (vllm-ascend update_aclgraph_sizes)."""
    spec = cmd.get("speculative_config")
    if isinstance(spec, str):
        try:
            spec = loads(spec)
        except ValueError:
            return  # the checks that read the option quote the parser's error
    ref = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(ref, str) or not ref:
        return
    fact.draft_model = ref
    path, _, files, why, _ = _locate(host, ref)
    if path is None:
        fact.draft_why_not = why
    elif "config.json" not in files:
        fact.draft_why_not = f"{posixpath.join(path, 'config.json')}: no such file"
    else:
        cfg, err = _json(host, posixpath.join(path, "config.json"))
        if isinstance(cfg, dict):
            fact.draft_config = cfg
        else:
            fact.draft_why_not = err or f"{posixpath.join(path, 'config.json')}: not a JSON object"


@probe("serve_model", reads=("serve_cmd",))
def serve_model_probe(host, ctx) -> ServeModelFact:
    """The served model's directory: config.json, tokenizer and chat template, quantisation description."""
    cmd = ctx.fact("serve_cmd")
    if not cmd.recognized or not cmd.model:
        raise FactUnavailable("serve_model", T("no vllm serve model to read"))
    fact = ServeModelFact(model=cmd.model)
    fact.path, fact.resolved_from, fact.files, fact.why_not, fact.unrecorded = _locate(host, cmd.model)
    _draft(host, cmd, fact)
    tmpl = cmd.get("chat_template")
    if isinstance(tmpl, str) and tmpl:
        if "{{" in tmpl or "{%" in tmpl:
            fact.chat_template_arg = tmpl  # vLLM accepts the template inline
        else:
            r = host.read_file(tmpl, max_bytes=MODEL_FILES_MAX)
            if r.ok:
                fact.chat_template_arg = r.content
            else:
                fact.chat_template_arg_error = f"--chat-template {tmpl}: {r.error_message or r.error}"
    if fact.path is None:
        return fact
    j = posixpath.join
    guard = _guard(host, fact)
    if "config.json" in fact.files:
        fact.config, fact.config_error = _json(host, j(fact.path, "config.json"), guard)
        if fact.config is not None and not isinstance(fact.config, dict):
            fact.config, fact.config_error = None, f"{j(fact.path, 'config.json')}: not a JSON object"
    else:
        fact.config_error = f"{j(fact.path, 'config.json')}: no such file"
    for name in ("tokenizer_config.json", "chat_template.jinja", "chat_template.json"):
        if name in fact.files and guard(j(fact.path, name)):
            fact.template_refused = guard(j(fact.path, name))
    if "tokenizer_config.json" in fact.files:
        tc, _ = _json(host, j(fact.path, "tokenizer_config.json"), guard)
        if isinstance(tc, dict):
            fact.tokenizer_chat_template = _template_text(tc.get("chat_template"))
    for name in ("chat_template.jinja", "chat_template.json"):
        if name in fact.files and not guard(j(fact.path, name)):
            r = host.read_file(j(fact.path, name), max_bytes=MODEL_FILES_MAX)
            if r.ok:
                fact.chat_template_files[name] = r.content
    indexes: dict = {}  # each *.safetensors.index.json parsed once: the size and the tensor names read it
    _checkpoint_size(host, fact, guard, indexes)
    fact.quant_description_files = [f for f in fact.files
                                    if f.startswith("quant_model_description") and f.endswith(".json")]
    if fact.quant_description_files:
        # vLLM reads the file named quant_model_description.json (AscendQuantConfig.get_config_filenames)
        name = next((f for f in fact.quant_description_files if f == "quant_model_description.json"),
                    fact.quant_description_files[0])
        desc, fact.quant_coverage, fact.quant_coverage_why_not = description_coverage(
            host, fact.path, fact.files, name, fact.config, guard, indexes)
        if isinstance(desc, dict) and desc.get("model_quant_type"):
            fact.quant_type = str(desc["model_quant_type"])
        fact.quant_per_expert = per_expert_layer(desc) if isinstance(desc, dict) else None
        if isinstance(desc, dict):
            fact.quant_layers, fact.quant_group_size = layer_types(desc), group_size(desc)
    return fact

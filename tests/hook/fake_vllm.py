"""A stand-in for the `vllm` console script in exec tests (installed as `<tmp>/bin/vllm` with our interpreter).

FAKE_VLLM_MODE=marker: touch $FAKE_VLLM_MARKER, say whether $FAKE_VLLM_REPORT exists already, exit $FAKE_VLLM_EXIT.
FAKE_VLLM_MODE=serve:  serve the scripted OpenAI-compatible server of tests/smoke/fault_server.py (fault
                       $FAKE_VLLM_FAULT, if any) on 127.0.0.1:<--port>; SIGTERM -> write "sigterm" to
                       $FAKE_VLLM_MARKER and exit $FAKE_VLLM_TERM_EXIT (default 0).
"""

import os
import signal
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _port(argv):
    for i, a in enumerate(argv):
        if a == "--port" and i + 1 < len(argv):
            return int(argv[i + 1])
        if a.startswith("--port="):
            return int(a.split("=", 1)[1])
    return 8000


def main() -> int:
    mode = os.environ.get("FAKE_VLLM_MODE", "marker")
    marker = os.environ.get("FAKE_VLLM_MARKER")
    if mode == "marker":
        report = os.environ.get("FAKE_VLLM_REPORT")
        if report:
            print("report-exists" if os.path.exists(report) else "report-missing", flush=True)
        if marker:
            Path(marker).write_text(" ".join(sys.argv))
        return int(os.environ.get("FAKE_VLLM_EXIT", "0"))
    sys.path.insert(0, str(REPO))
    from http.server import ThreadingHTTPServer

    import tests.smoke.fault_server as fs

    port = _port(sys.argv)
    fs.ThreadingHTTPServer = lambda addr, handler: ThreadingHTTPServer(("127.0.0.1", port), handler)
    done = threading.Event()

    def on_term(signum, frame):
        if marker:
            Path(marker).write_text("sigterm")
        done.set()

    signal.signal(signal.SIGTERM, on_term)
    srv = fs.ScriptedServer(os.environ.get("FAKE_VLLM_FAULT") or None)
    srv.start()
    print(f"fake vllm serving on 127.0.0.1:{port} pid {os.getpid()}", flush=True)
    while not done.is_set():
        time.sleep(0.05)
    srv.stop()
    return int(os.environ.get("FAKE_VLLM_TERM_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())

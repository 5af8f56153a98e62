"""Secret redaction for snapshots, reports and evidence. Applied before anything is written or printed."""

from __future__ import annotations

import re
from typing import Iterable

REDACTED = "<redacted>"

# Env var names whose values are secrets (issue #2: *KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *CREDENTIAL*).
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
# ...but not these, which carry no secret and which checks need to see.
_NOT_SECRET = {"KEYTIMEOUT", "HCCL_CONNECT_TIMEOUT", "SSH_AUTH_SOCK_DIR"}

_PATTERNS = [
    # Authorization / API-key headers in any text (curl -H, logged requests).
    (re.compile(r"(?i)(authorization\s*[:=]\s*)(bearer\s+|basic\s+|token\s+)?([^\s'\",]+)"), r"\1\2" + REDACTED),
    (re.compile(r"(?i)((?:x-)?api[-_]?key\s*[:=]\s*)([^\s'\",]+)"), r"\1" + REDACTED),
    # Well-known token shapes.
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\bhf_[A-Za-z0-9]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    # URL credentials: scheme://user:pass@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)"), r"\1" + REDACTED + r"\3"),
]

# Command-line options whose value is a secret (vllm serve --api-key X, --hf-token X).
_SECRET_FLAGS = re.compile(r"^--?[\w-]*(api-key|api_key|token|secret|password)[\w-]*$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for an env var (or config key) name that holds a secret."""
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask secrets that appear inline in free text."""
    if not text:
        return text
    for pat, repl in _PATTERNS:
        text = pat.sub(repl, text)
    return text


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Copy of `env` with secret-named values masked (and inline secrets in the others)."""
    return {k: (REDACTED if is_secret_name(k) and v else redact_text(v)) for k, v in env.items()}


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Mask values of secret-looking options: `--api-key X` and `--api-key=X`."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(REDACTED)
            mask_next = False
            continue
        if arg.startswith("-") and "=" in arg:
            flag, _, _ = arg.partition("=")
            if _SECRET_FLAGS.match(flag):
                out.append(f"{flag}={REDACTED}")
                continue
        elif _SECRET_FLAGS.match(arg):
            mask_next = True
        out.append(redact_text(arg))
    return out

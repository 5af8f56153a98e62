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
    # The first two are `name: value` forms, not applied to Python source (see redact_text's code=True).
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

# Command-line options whose value is a secret (`--api-key X`, `--hf-token=X`), as whole words of the option's dest:
# `--tokenizer-mode` is not one.
_SECRET_DEST = re.compile(r"(^|_)(api_key|token|secret|password|passwd|credentials?)($|_)")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def is_secret_option(flag: str) -> bool:
    """True for `--api-key`, `--hf-token`, `--openai_api_key`; False for `--tokenizer-mode`."""
    return bool(_SECRET_DEST.search(flag.lstrip("-").replace("-", "_").lower()))


def is_secret_name(name: str) -> bool:
    """True for an env var (or config key) name that holds a secret."""
    return name.upper() not in _NOT_SECRET and bool(_SECRET_NAME.search(name))


def redact_text(text: str, code: bool = False) -> str:
    """Mask secrets that appear inline in free text.

    `code=True` (Python source read from installed packages) masks only token shapes and URL credentials: the
    `api_key: …` pattern would rewrite type annotations such as `VLLM_API_KEY: str | None` and break parsing.
    """
    if not text:
        return text
    for pat, repl in (_PATTERNS[2:] if code else _PATTERNS):
        text = pat.sub(repl, text)
    return text


def redact_env(env: dict[str, str]) -> dict[str, str]:
    """Copy of `env` with secret-named values masked (and inline secrets in the others)."""
    return {k: (REDACTED if is_secret_name(k) and v else redact_text(v)) for k, v in env.items()}


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Mask values of secret options (`--api-key X Y`, `--api-key=X`) and secret `NAME=value` env prefixes.

    A secret option's values run up to the next option: vLLM's `--api-key` accepts several keys.
    """
    out: list[str] = []
    mask = False
    for arg in argv:
        if mask:
            if not arg.startswith("-"):
                out.append(REDACTED)
                continue
            mask = False
        if arg.startswith("-") and "=" in arg:
            flag = arg.split("=", 1)[0]
            out.append(f"{flag}={REDACTED}" if is_secret_option(flag) else redact_text(arg))
        elif arg.startswith("-") and is_secret_option(arg):
            out.append(arg)
            mask = True
        elif _ENV_ASSIGN.match(arg) and is_secret_name(arg.split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=" + REDACTED)
        else:
            out.append(redact_text(arg))
    return out

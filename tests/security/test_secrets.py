"""Secrets stay secret: one secret of each kind planted in every input the doctor reads (environment, argv, config,
snapshot, command output, log, paste, matrix layer, server response), then every output format of every command is
searched for them.

Each planted secret has a `needle`: the part that must never appear in anything the doctor prints or writes — nor its
first or last 8 characters, which is what a quote cut short before masking leaves behind (#23).
To cover a new kind of secret, add it to PLANTED: every scenario below plants and searches for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.smoke.fault_server import GOOD, ScriptedServer

API_KEY = "Zq9echoKey5Zq9x"  # no recognisable shape: only knowing it is the key can mask it
ARGV_KEY = "Yx8argvKey4Yx8w"
# (what is planted, the part that must not leak)
PLANTED = {
    "sk token": ("sk-plantedOpenAI0123456789abc", "plantedOpenAI0123456789abc"),
    "hf token": ("hf_PlantedHuggingFace0123456", "PlantedHuggingFace0123456"),
    "github token": ("ghp_PlantedGitHubToken0123456789ab", "PlantedGitHubToken0123456789ab"),
    "url password with / and @": ("redis://cache:Re/dis@Pass9@host:6379/0", "Re/dis@Pass9"),
    "password=": ("password=Pl4nted-Passw0rd", "Pl4nted-Passw0rd"),
    "passwd:": ("passwd: Pl4nted-Passwd9", "Pl4nted-Passwd9"),
    "secret=": ("secret=Pl4nted-Secr3t", "Pl4nted-Secr3t"),
    "bearer header": ("Authorization: Bearer Pl4ntedBearer77", "Pl4ntedBearer77"),
    "waiver password:": ("password: Pl4nted-Waiver1", "Pl4nted-Waiver1"),
    # Value shapes, whatever name (or none) holds them (#23 item 3).
    "url password, no user": ("redis://:Pl4ntedRedisNoUser@127.0.0.1:6379/0", "Pl4ntedRedisNoUser"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.Pl4ntedJwtSignature0123",
            "eyJzdWIiOiJwbGFudGVkIn0.Pl4ntedJwtSignature0123"),
    "github fine-grained pat": ("github_pat_11PLANTED0123456789_abcdefghijklmnop", "11PLANTED0123456789_abcdefghijklmnop"),
    "MY_PASS=": ("MY_PASS=Pl4ntedMyPass7", "Pl4ntedMyPass7"),
    "bare bearer": ("Bearer Pl4ntedBareBearer8", "Pl4ntedBareBearer8"),
    "json api_key in a traceback": ('ValueError: bad config {"api_key": "Pl4ntedJsonKey6"}', "Pl4ntedJsonKey6"),
    "aws access key id": ("AKIAPLANTED012345678", "PLANTED012345678"),
    "--api-key in a logged command line": ("ps: vllm serve /m --api-key Pl4ntedPsKey5", "Pl4ntedPsKey5"),
    # #40 item 12: kinds the hand rules missed — gitleaks' rule set (ascend_doctor/text/secretshapes.py) and the
    # forms fixed beside it.
    "google api key": ("AIzaSyD4kPl4nted0Yq8Vx2Lm5Nw7Rt9Bc3Fh6J", "Pl4nted0Yq8Vx2Lm5Nw7Rt9Bc3Fh6J"),
    "slack webhook": ("https://hooks.slack.com/services/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",
                      "Pl4ntedWebhookSecret0123"),
    "stripe key": ("sk_live_Pl4ntedStripeKey0123456789ab", "Pl4ntedStripeKey0123456789ab"),
    "pem private key": ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCPl4ntedPem0123"
                        "456789abcdefghij\n-----END PRIVATE KEY-----", "BAQCPl4ntedPem0123456789abcdefghij"),
    "password=a,b": ("password=Pl4nted,TailOfPw9", "TailOfPw9x"[:9]),
    "quoted --api-key": ("run: vllm serve /m --api-key 'Pl4nted QuotedKey8'", "QuotedKey8"),
}
ENV_SECRET = "hunter2-planted-db"
MYSQL_PWD = "mysql-planted-pw"  # MYSQL_PWD: a secret by its name (`_PWD`), not PWD the working directory  # the value of DB_PASSWORD: arbitrary shape, masked because of its variable's name
# Values of the secret options vLLM (or a typo of it) takes, each planted in an `exec -- vllm serve …` command line.
OPTION_SECRETS = {"--api-key": ARGV_KEY, "--apikey": "Wv7apikeyTypo3Wv", "--api-keys": "Uu6apiKeysPl4n",
                  "--hf_tokens": "Tt5hfTokensPl4n", "--hf-token": "Ss4hfTokenPl4nt"}
AFTER_DASHES = "Rr3afterDashes9Rr"  # `vllm serve /m -- --api-key X`: argparse takes it as a positional
USER_ENV_SECRET = "Qq2userEnvSecretQ"  # the value of the user's MY_SERVICE_TOKEN, quoted verbatim in a log
TEXT = " | ".join(p for p, _ in PLANTED.values())
NEEDLES = ([n for _, n in PLANTED.values()] + [ENV_SECRET, MYSQL_PWD, API_KEY, USER_ENV_SECRET, AFTER_DASHES]
           + list(OPTION_SECRETS.values()))


def leaks(text: str) -> list[str]:
    """The needles found in `text`, whole or by their first/last 8 characters."""
    return [n for n in NEEDLES if n in text or (len(n) >= 12 and (n[:8] in text or n[-8:] in text))]


def run(*args, cwd: Path, env=None, timeout=120):
    e = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO), "MY_SERVICE_TOKEN": USER_ENV_SECRET, **(env or {})}
    r = subprocess.run([sys.executable, "-m", "ascend_doctor", *args], cwd=cwd, env=e, capture_output=True,
                       timeout=timeout)
    return r.returncode, r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")


def planted_snapshot(src: Path, dest: Path, hostname: str = "node-s", variant: str = "") -> Path:
    """An example host with secrets in its environment, its command outputs and a file the checks quote (`variant`
    makes the environment's secrets differ from another planted host's, so `diff` has them to show)."""
    data = json.loads(src.read_text(encoding="utf-8"))
    data["system"]["hostname"] = hostname
    redis = PLANTED["url password with / and @"][0].replace("@host", f"{variant}@host")
    data["env"].update({"DB_PASSWORD": ENV_SECRET + variant, "MYSQL_PWD": MYSQL_PWD + variant, "HF_TOKEN": PLANTED["hf token"][0] + variant,
                        "REDIS_URL": redis, "HCCL_PLANTED_NOTE": TEXT,
                        "VLLM_PLANTED_NOTE": TEXT})
    for c in data["commands"]:
        if c["argv"][:1] in (["getenforce"], ["chronyc"], ["timedatectl"]):
            c["stdout"] = c.get("stdout", "") + f"\n{TEXT} {ENV_SECRET}\n"
            c["stderr"] = f"{TEXT} {ENV_SECRET}\n"
    data["commands"].append({"argv": ["getenforce"], "stdout": f"Enforcing {TEXT}\n", "returncode": 0})
    data["files"]["/etc/selinux/config"] = {"content": f"SELINUX=enforcing\n# {TEXT} {ENV_SECRET}\n"}
    dest.write_text(json.dumps(data), encoding="utf-8")
    return dest


@pytest.fixture()
def work(tmp_path: Path) -> Path:
    planted_snapshot(REPO / "examples" / "broken-host.snapshot.json", tmp_path / "a.snapshot.json", "node-a")
    planted_snapshot(REPO / "examples" / "healthy-a2.snapshot.json", tmp_path / "b.snapshot.json", "node-b", "Xb9")
    # A config found in the working directory: waivers whose reasons hold secrets (one live, one expired).
    (tmp_path / "ascend-doctor.toml").write_text(
        f'[[waive]]\ncode = "HOST102"\nreason = {json.dumps(TEXT)}\n\n'
        f'[[waive]]\ncode = "HOST103"\nreason = {json.dumps(TEXT)}\nexpires = 2020-01-01\n', encoding="utf-8")
    (tmp_path / "serve.log").write_text(f"INFO starting\nERROR {TEXT}\nRuntimeError: password={ENV_SECRET}\n"
                                        f"INFO connecting with {USER_ENV_SECRET}\n"
                                        "EL0004: Failed to allocate memory.\n", encoding="utf-8")
    # A bug-report paste: a serve command with secrets, a traceback that dumps its config, the user's own token.
    (tmp_path / "paste.md").write_text(
        "```\n$ vllm serve /models/x --api-key " + ARGV_KEY + " --apikey " + OPTION_SECRETS["--apikey"] +
        f"\nTraceback (most recent call last):\n  File \"x.py\", line 1\n{TEXT}\n"
        f"RuntimeError: token {USER_ENV_SECRET} rejected\n```\n", encoding="utf-8")
    # A matrix layer whose release note and source carry credentials.
    (tmp_path / "overlay.toml").write_text(
        'schema_version = 1\n[[vllm_ascend_release]]\nversion = "0.7.1rc1"\nlisted = "matrix"\nvllm = ["0.7.1"]\n'
        'python = ">=3.9,<3.12"\ncann = ["8.0.0"]\ntorch = ["2.5.1"]\ntorch_npu = ["2.5.1.dev20250218"]\n'
        f'hardware = ["A2"]\npypi = "sdist-only"\nnote = {json.dumps("mirror at " + PLANTED["url password, no user"][0] + "; " + TEXT)}\n'
        f'source = ["http://svc:{ENV_SECRET}@mirror.example/notes"]\n', encoding="utf-8")
    (tmp_path / "npu-smi.txt").write_text(f"dcmi module initialize failed. ret is -8005 {TEXT}\n", encoding="utf-8")
    return tmp_path


FORMATS = ("console", "json", "junit", "github", "prometheus")


def outputs(tmp: Path, code_and_stdout: tuple[int, str], files: list[str]) -> str:
    rc, text = code_and_stdout
    assert rc in (0, 1), text[-2000:]
    for f in files:
        text += "\n" + (tmp / f).read_text(encoding="utf-8", errors="replace")
    return text


def test_check_and_exec_every_format_redact_snapshot_config_argv_and_env(work: Path):
    seen = []
    for fmt in FORMATS:
        out = outputs(work, run("check", "--replay", "a.snapshot.json", "--format", fmt, "-v", cwd=work), [])
        seen.append(out)
        out = outputs(work, run("check", "--replay", "a.snapshot.json", "--format", fmt, "-o", f"r.{fmt}", "-v",
                                cwd=work), [f"r.{fmt}"])
        seen.append(out)
    seen.append(outputs(work, run("check", "--replay", "a.snapshot.json", "--fix-script", "fix.sh", "-q", cwd=work),
                        ["fix.sh"]))
    rc, text = run("exec", "--replay", "a.snapshot.json", "--report", "exec.json", "--format", "junit", "-o",
                   "exec.xml", "--", "env", f"HF_TOKEN={PLANTED['hf token'][0]}", "vllm", "serve", "/models/x",
                   "--api-key", ARGV_KEY, "--served-model-name", TEXT, cwd=work)
    seen.append(text + (work / "exec.json").read_text() + (work / "exec.xml").read_text())
    for flag, value in OPTION_SECRETS.items():  # each secret option (and its typos) in a live command line
        rc, text = run("exec", "--replay", "a.snapshot.json", "--report", "-", "--format", "json", "--", "vllm",
                       "serve", "/models/x", flag, value, "--", "--api-key", AFTER_DASHES, cwd=work)
        assert rc in (0, 1), text[-2000:]
        assert "SERVE105" in text
        seen.append(text)
    rep = json.loads((work / "r.json").read_text())
    assert any(f["waived"] for f in rep["findings"]), "the waiver with the planted reason applies"
    assert any("expired" in n for n in rep["notes"]), "the expired waiver's reason is in a note"
    for text in seen:
        assert leaks(text) == [], text[:3000]


def test_diff_fleet_parse_diagnose_redact(work: Path):
    seen = []
    for fmt in ("console", "json"):
        seen.append(outputs(work, run("diff", "a.snapshot.json", "b.snapshot.json", "--format", fmt, "-o",
                                      f"d.{fmt}", cwd=work), [f"d.{fmt}"]))
        seen.append(outputs(work, run("parse", "npu-smi-info", "npu-smi.txt", "--format", fmt, cwd=work), []))
        seen.append(outputs(work, run("diagnose", "serve.log", "--format", fmt, "--all", cwd=work), []))
    for fmt in FORMATS:
        seen.append(outputs(work, run("fleet", "--snapshots", "*.snapshot.json", "--format", fmt, "-o", f"f.{fmt}",
                                      "-v", cwd=work), [f"f.{fmt}"]))
    for fmt in ("console", "json", "markdown"):
        for src in ("paste.md", "serve.log"):
            seen.append(outputs(work, run("triage", src, "--format", fmt, "-o", f"t.{fmt}", "--fix-script",
                                          "t-fix.sh", cwd=work), [f"t.{fmt}", "t-fix.sh"]))
    for fmt in ("console", "json"):
        seen.append(outputs(work, run("matrix", "show", "--matrix", "overlay.toml", "--vllm-ascend", "0.7.1rc1",
                                      "--format", fmt, cwd=work), []))
    seen.append(outputs(work, run("matrix", "pins", "--matrix", "overlay.toml", "--vllm-ascend", "0.7.1rc1",
                                  cwd=work), []))
    assert "mirror at" in seen[-1], "the layer's note is shown"
    diff = json.loads((work / "d.json").read_text())
    env = {c["item"]: c for c in diff["groups"]["env"]}
    assert env["DB_PASSWORD"]["a"] == env["DB_PASSWORD"]["b"] == "<redacted>"
    assert env["DB_PASSWORD"]["change"] == env["HF_TOKEN"]["change"] == "changed"
    assert env["REDIS_URL"]["a"] == env["REDIS_URL"]["b"] == "redis://cache:<redacted>@host:6379/0"
    for text in seen:
        assert leaks(text) == [], text[:3000]


def _straddling(secret: str) -> str:
    """Text that puts `secret` across each length the smoke cuts a quote to (60, 80, 120, 200, 300 characters)."""
    out = ""
    for cut in (60, 80, 120, 200, 300):
        out += "x" * (cut - 5 - len(out)) + secret
    return out


def _echoing_server() -> ScriptedServer:
    """A server whose answers repeat the API key and every planted secret (as a misconfigured proxy might), the key
    placed where the smoke's quotes are cut short."""
    chat = json.loads((GOOD / "chat.json").read_text())
    chat["json"]["choices"][0]["message"]["content"] = _straddling(API_KEY) + f" ready; {TEXT}"
    none = json.loads((GOOD / "none.json").read_text())
    none["json"]["choices"][0]["message"]["content"] = f"It is sunny. {API_KEY} {TEXT}"
    return ScriptedServer(overrides={"chat": chat, "none": none})


def test_smoke_redacts_what_the_server_echoes(work: Path):
    env = {"PLANTED_KEY": API_KEY}
    with _echoing_server() as srv:
        seen = []
        for fmt in FORMATS:
            seen.append(outputs(work, run("smoke", "--base-url", srv.base_url, "--api-key-env", "PLANTED_KEY",
                                          "--format", fmt, "-o", f"s.{fmt}", "-v", cwd=work, env=env), [f"s.{fmt}"]))
        seen.append(outputs(work, run("check", "--replay", "a.snapshot.json", "--smoke-url", srv.base_url,
                                      "--api-key-env", "PLANTED_KEY", "--format", "json", "-o", "cs.json", "-v",
                                      cwd=work, env=env), ["cs.json"]))
        assert any(h == f"Bearer {API_KEY}" for h in srv.auth_headers), "the key was sent"
    rep = json.loads((work / "s.json").read_text())
    assert "<redacted>" in json.dumps(rep), "the echoed key reached the report, masked"
    for text in seen:
        assert leaks(text) == [], text[:3000]


@pytest.mark.localhost
def test_collect_records_no_secret_from_env_or_command_output(work: Path):
    bin_dir = work / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "npu-smi"
    (bin_dir / "planted.txt").write_text(f"{TEXT} {ENV_SECRET}\n")  # TEXT holds quotes: no shell quoting
    tool.write_text(f"#!/bin/sh\ncat '{bin_dir}/planted.txt'\necho 'password={ENV_SECRET}' >&2\nexit 3\n")
    tool.chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "DB_PASSWORD": ENV_SECRET, "HF_TOKEN": PLANTED["hf token"][0],
           "REDIS_URL": PLANTED["url password with / and @"][0], "VLLM_PLANTED_NOTE": TEXT,
           "OPENAI_API_KEY": PLANTED["sk token"][0]}
    (work / "ascend-doctor.toml").unlink()
    rc, text = run("collect", "-o", "live.snapshot.json", "--no-import-probe", "--probe-timeout", "20", cwd=work,
                   env=env, timeout=300)
    assert rc == 0, text
    snap = (work / "live.snapshot.json").read_text()
    assert '"npu-smi"' in snap, "the planted tool ran and was recorded"
    assert leaks(snap + text) == []
    for fmt in FORMATS:
        assert leaks(outputs(work, run("check", "--replay", "live.snapshot.json", "--format", fmt, "-v", cwd=work),
                             [])) == []

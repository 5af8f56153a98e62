"""#40 item 12: secret shapes come from a maintained detector (gitleaks' rule set, run with RE2), and the forms the
hand rules missed are masked: MYSQL_PWD, a quoted `--api-key '…'`, the tail of `password=a,b`, a token after an
escaped `\\n` in a recorded file, a secret in a path used as a key, PEM private keys, Google API keys, Slack webhooks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_doctor.seam.snapshot import load_snapshot
from ascend_doctor.text.redact import REDACTED, is_secret_name, redact_env, redact_text, redact_tree
from ascend_doctor.text.secretshapes import RULES_FILE, SecretShapes, shapes

REPO = Path(__file__).resolve().parents[2]

# Fake credentials in the shapes providers issue (none is live); the needle is what must not survive.
PEM_BODY = ("MIIEowIBAAKCAQEAq8Zk3LmN9pQr7sT2uVwX4yZ1aB6cD0eF5gH8iJ3kL7mN2oP9qR4sT6uV1wX8yZ3aB5cD7eF0gH2iJ\n"
            "k4Lm7Np2Qr5St8Uv1Wx4Yz7Ab0Cd3Ef6Gh9Ij2Kl5Mn8Op1Qr4St7Uv0Wx3Yz6Ab9Cd2Ef5Gh8Ij1Kl4Mn7Op0Qr3St6")
KINDS = {
    "google api key": ("maps key AIzaSyD4kPl4nted0Yq8Vx2Lm5Nw7Rt9Bc3Fh6J ok", "AIzaSyD4kPl4nted0Yq8Vx2Lm5Nw7Rt9Bc3Fh6J"),
    "slack webhook": ("hook https://hooks.slack.com/services/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 sent",
                      "Pl4ntedWebhookSecret0123"),
    "pem private key": (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", PEM_BODY[:40]),
    "stripe live key": ("STRIPE sk_live_Pl4ntedStripeKey0123456789ab", "Pl4ntedStripeKey0123456789ab"),
    "gitlab pat": ("glpat-Pl4ntedGitLab0123456789", "Pl4ntedGitLab0123456789"),
    "generic assignment": ("db_credentials = 'Xq7pL2mN9vR4tK8w'", "Xq7pL2mN9vR4tK8w"),
    "password=a,b": ("password=Pl4nted,TailPart9 next", "TailPart9"),
    "quoted --api-key": ("vllm serve /m --api-key 'Pl4nted Quoted Key7' --port 8000", "Quoted Key7"),
    "double-quoted --api-key": ('vllm serve /m --api-key "Pl4ntedDq Key8"', "Key8"),
    "token after escaped newline": ('{"chat_template": "x\\ntoken=Pl4ntedEscNl6\\ny"}', "Pl4ntedEscNl6"),
    "sk after escaped newline": ('"a\\nsk-Pl4ntedAfterNl0123"', "Pl4ntedAfterNl0123"),
}

# What the doctor prints every day must come through unchanged (a redactor that eats versions, hashes and options
# destroys the report it protects).
EVERYDAY = [
    "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 --max-num-batched-tokens 8192 --tokenizer-mode auto",
    "max_num_batched_tokens=8192 tokenizer=Qwen/Qwen3-8B key_cache torch.Size([1024, 128, 8, 128])",
    "sha256:3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a",
    "| 0     910B3               | OK            | 93.4        38                0    / 0             |",
    "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True HCCL_CONNECT_TIMEOUT=7200 VLLM_USE_V1=1",
    "torch_npu 2.8.0.post2 · CANN 8.5.0 · driver 25.5.0 · vllm-ascend 0.13.0rc1 git+https://github.com/vllm-project",
    "commit 33234aa0c5e1b2f3a4d5c6b7a8f9e0d1c2b3a4f5 reverted auto-detection",
    "api_server.py:1234] Starting vLLM API server 0 on http://0.0.0.0:8000",
]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_is_masked(kind):
    text, needle = KINDS[kind]
    out = redact_text(text)
    assert needle not in out and REDACTED in out, out


@pytest.mark.parametrize("line", EVERYDAY)
def test_everyday_text_is_kept(line):
    assert redact_text(line) == line


def test_every_gitleaks_rule_compiles_and_the_set_is_whole():
    import tomllib

    doc = tomllib.loads(RULES_FILE.read_text(encoding="utf-8"))
    rules = shapes().rules
    assert len(rules) >= 200  # 222 in the file; file-name and path-bound rules do not apply to text
    with_regex = [r for r in doc["rules"] if "regex" in r and "path" not in r]
    assert len(rules) == len(with_regex)
    assert (RULES_FILE.parent / "gitleaks.LICENSE").read_text().count("MIT License") == 1


def test_rules_apply_as_gitleaks_does():
    """Keywords gate a rule, the entropy floor and the digit rule hold for generic secrets, allowlists drop."""
    doc = {"rules": [
        {"id": "generic-x", "regex": r"(?i)pw\s*=\s*([\w]{6,})", "keywords": ["pw"], "entropy": 2.5},
        {"id": "acme", "regex": r"acme_[a-z0-9]{8}", "keywords": ["acme_"],
         "allowlists": [{"stopwords": ["example"]}, {"regexTarget": "line", "regexes": ["^#"]}]},
    ], "allowlist": {"regexes": [r"^\$\{[A-Z_]+\}$"]}}
    s = SecretShapes(doc)
    assert s.spans("pw = Ab3dEf9h") and not s.spans("pw = aaaaaa1")  # entropy
    assert not s.spans("pw = AbcdEfGhIj")  # a generic secret holds a digit
    assert s.spans("token acme_a1b2c3d4") and not s.spans("ACME_A1B2C3D4")  # case of the regex, keyword lower-cased
    assert not s.spans("# acme_a1b2c3d4 in a comment") and not s.spans("see acme_examplex")
    assert not SecretShapes({**doc, "rules": [{**doc["rules"][0], "regex": r"pw=(\S+)"}]}).spans("pw=${PASSWORD}")


def test_code_mode_keeps_assignments_but_masks_provider_keys():
    src = "API_KEY = 'Xq7pL2mN9vR4tK8w'\nGOOGLE = 'AIzaSyD4kPl4nted0Yq8Vx2Lm5Nw7Rt9Bc3Fh6J'\n"
    out = redact_text(src, code=True)
    assert "Xq7pL2mN9vR4tK8w" in out and "AIzaSyD4kPl4nted" not in out


def test_secret_names_and_tree_keys():
    assert is_secret_name("MYSQL_PWD") and is_secret_name("DB_PWD_2")
    assert not is_secret_name("PWD") and not is_secret_name("OLDPWD")
    assert redact_env({"MYSQL_PWD": "hunter2-db"})["MYSQL_PWD"] == REDACTED
    tree = redact_tree({"/models/hf_Pl4ntedInAPath0123456/config.json": {"size": 1}})
    assert not any("Pl4ntedInAPath" in k for k in tree)


def test_a_snapshot_is_redacted_whole_as_it_is_written(tmp_path):
    """The recorder masks each answer; what it did not look at (a path, a listing, package metadata) is masked when
    the snapshot is written."""
    data = json.loads((REPO / "examples" / "healthy-a2.snapshot.json").read_text())
    google = KINDS["google api key"][1]
    data["files"]["/models/hf_Pl4ntedInAPath0123456/config.json"] = {"content": "{}"}
    data["dirs"]["/models"] = {"entries": [google, "Qwen3-8B"]}
    data["files"]["/opt/x/envs.py"] = {"content": "VLLM_API_KEY: str | None = None\nK = 'sk-Pl4ntedInSource01'\n"}
    p = tmp_path / "s.json"
    p.write_text(json.dumps(data))
    dumped = load_snapshot(p).dump()
    assert google not in dumped and "Pl4ntedInSource01" not in dumped and "Pl4ntedInAPath" not in dumped
    assert "VLLM_API_KEY: str | None = None" in dumped  # source keeps its annotations


def test_examples_lose_nothing_to_the_rules():
    for path in sorted((REPO / "examples").glob("*.snapshot.json")):
        before = path.read_text(encoding="utf-8").count(REDACTED)
        assert load_snapshot(path).dump().count(REDACTED) == before, path.name

import pytest

from ascend_doctor.text.redact import REDACTED, is_secret_name, redact_argv, redact_env, redact_text


def test_secret_env_names():
    for name in ("OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GOOGLE_CREDENTIALS"):
        assert is_secret_name(name), name
    for name in ("PATH", "HCCL_CONNECT_TIMEOUT", "ASCEND_RT_VISIBLE_DEVICES", "VLLM_USE_V1"):
        assert not is_secret_name(name), name


def test_redact_env_masks_values_only_for_secret_names():
    env = redact_env({"HF_TOKEN": "hf_abcdefghijklmnopqrstu", "PATH": "/usr/bin", "EMPTY_KEY": ""})
    assert env == {"HF_TOKEN": REDACTED, "PATH": "/usr/bin", "EMPTY_KEY": ""}


def test_redact_text_headers_and_token_shapes():
    t = redact_text("curl -H 'Authorization: Bearer sk-live-1234567890abcdef' http://u:pw@h/x api_key=abc123")
    assert "sk-live" not in t and "pw@" not in t and "abc123" not in t
    assert "Authorization: Bearer " + REDACTED in t


def test_redact_argv():
    argv = ["vllm", "serve", "m", "--api-key", "s3cr3t", "--hf-token=hf_xyz", "--port", "8000"]
    assert redact_argv(argv) == ["vllm", "serve", "m", "--api-key", REDACTED, f"--hf-token={REDACTED}",
                                 "--port", "8000"]


def test_tokenizer_mode_is_not_a_secret_option_and_env_prefixes_are():
    argv = ["env", "HF_TOKEN=hf_abc", "vllm", "serve", "m", "--tokenizer-mode", "deepseek_v4", "--api-key", "k1", "k2",
            "--port", "8000"]
    assert redact_argv(argv) == ["env", f"HF_TOKEN={REDACTED}", "vllm", "serve", "m", "--tokenizer-mode",
                                 "deepseek_v4", "--api-key", REDACTED, REDACTED, "--port", "8000"]


def test_python_source_keeps_its_annotations():
    src = "VLLM_API_KEY: str | None = None\napi_key: Optional[str] = None\nT = 'sk-abcdefghijklmnop'\n"
    out = redact_text(src, code=True)
    assert "VLLM_API_KEY: str | None" in out and "api_key: Optional[str]" in out and "sk-abcdefghijklmnop" not in out


@pytest.mark.parametrize("line", [
    "a-" * 50_000 + " pass",                 # the name pattern's repeated prefix group (5.3 s at 10 KB before)
    "ab://c:" * 15_000 + " x",               # the URL pattern, every `x://u:` a start
    "client_secret" * 8_000 + " ://",
    "x-" * 50_000 + "token=abc123456",
    "http://u:" + "p" * 100_000 + "@h",
])
def test_redaction_is_linear_in_the_line_length(line):
    """#23 item 4: a 100 KB hostile line is masked in well under a second (a quadratic pattern takes minutes). The
    bound is generous on purpose: it catches the complexity class, not a slow machine."""
    import time

    t0 = time.monotonic()
    redact_text(line)
    assert time.monotonic() - t0 < 2.0


def test_url_password_without_a_user_is_masked():
    """#23 item 2: `redis://:PW@host` (no user part) was written verbatim."""
    out = redact_text("REDIS_URL='redis://:PW123456@127.0.0.1:6379/0'")
    assert "PW123456" not in out and "redis://:<redacted>@127.0.0.1:6379/0" in out


@pytest.mark.parametrize("text, secret", [
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlMDEy ok", "c2lnbmF0dXJlMDEy"),
    ("GH=github_pat_11ABCDEFG0123456789_abcdefghijklmno", "11ABCDEFG0123456789"),
    ("MY_PASS=Zz9myPass", "Zz9myPass"),
    ("curl -H 'Bearer Zz9bareBearerToken' http://h", "Zz9bareBearerToken"),
    ('ValueError: {"api_key": "Zz9jsonKey"}', "Zz9jsonKey"),
    (r'msg="{\"api_key\": \"Zz9escaped\"}"', "Zz9escaped"),
    ("id AKIAZZ9ABCDEFGHIJKLM used", "ZZ9ABCDEFGHIJKLM"),
    ("xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
    ("Authorization header was Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
])
def test_value_shapes_are_masked_whatever_holds_them(text, secret):
    assert secret not in redact_text(text)


def test_secret_options_inside_free_text_are_masked_by_the_argv_rule():
    line = "4242 /opt/venv/bin/python3 /opt/venv/bin/vllm serve /m --api-key Zz9key --max-tokens 512 --hf-token=hf_x"
    assert redact_text(line) == ("4242 /opt/venv/bin/python3 /opt/venv/bin/vllm serve /m --api-key <redacted> "
                                 "--max-tokens 512 --hf-token=<redacted>")
    assert redact_text("pass --api-key --port 8000") == "pass --api-key --port 8000"
    assert redact_text("--api-key-env MY_KEY_VAR is not set") == "--api-key-env MY_KEY_VAR is not set"


def test_secret_option_spellings_and_counts_that_are_not_secrets():
    argv = ["vllm", "serve", "m", "--apikey", "k1", "--api-keys", "k2", "--hf_tokens", "k3", "--max-tokens", "512",
            "--max-num-batched-tokens", "8192", "--return-tokens-as-token-ids", "--port", "8000"]
    assert redact_argv(argv) == ["vllm", "serve", "m", "--apikey", REDACTED, "--api-keys", REDACTED, "--hf_tokens",
                                 REDACTED, "--max-tokens", "512", "--max-num-batched-tokens", "8192",
                                 "--return-tokens-as-token-ids", "--port", "8000"]


def test_pass_is_a_secret_name_only_as_a_whole_word():
    for name in ("MY_PASS", "DB_PASS_2", "PASS", "SMTP_PASSPHRASE"):
        assert is_secret_name(name), name
    for name in ("PWD", "OLDPWD", "PASSTHROUGH_MODE", "BYPASS_PROXY"):
        assert not is_secret_name(name), name
    assert redact_text("bypass=1 passed=3 compass=n") == "bypass=1 passed=3 compass=n"


def test_a_path_component_named_like_a_secret_keeps_the_words_after_it():
    """#22 item 11: `--python /etc/passwd` became "<redacted> executable"."""
    assert redact_text("--python: '/etc/passwd': not executable") == "--python: '/etc/passwd': not executable"
    assert redact_text("/run/secrets/token: missing") == "/run/secrets/token: missing"
    assert redact_text("passwd: hunter22") == "passwd: <redacted>"

from ascend_doctor.redact import REDACTED, is_secret_name, redact_argv, redact_env, redact_text


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

"""Cell-width wrapping: ASCII exactly as textwrap, CJK by terminal cells with break rules for punctuation."""

from __future__ import annotations

import textwrap

from rich.cells import cell_len

from ascend_doctor.render.wrap import wrap

ZH = ("立即执行 `setenforce 0`，并在 /etc/selinux/config 中设置 `SELINUX=permissive`（或 `disabled`）使其重启后仍生效；"
      "如果必须保持 enforcing，请编写允许访问昇腾设备的策略模块（然后在 ascend-doctor.toml 中写明原因豁免本检查）。")


def test_ascii_is_textwrap():
    text = "the quick brown fox jumps over the lazy dog " * 5
    assert wrap(text, 30, "  ", "    ") == textwrap.wrap(text, 30, initial_indent="  ", subsequent_indent="    ",
                                                         break_on_hyphens=False, break_long_words=False)


def test_cjk_lines_fit_their_cells_and_keep_every_character():
    for width in (40, 60, 80, 100):
        lines = wrap(ZH, width, "修复：  ", "        ")
        assert all(cell_len(ln) <= width for ln in lines), (width, lines)
        joined = "".join(ln.strip() for ln in lines).replace("修复：", "", 1)
        assert joined.replace(" ", "") == ZH.replace(" ", "")


def test_no_line_starts_with_closing_or_ends_with_opening_punctuation():
    for width in range(20, 90):
        for ln in wrap(ZH, width):
            assert ln.strip()[:1] not in "，。、；：！？）」』】》", (width, ln)
            assert ln.strip()[-1:] not in "（「『【《", (width, ln)


# #40 item 13: a copied fix must run — the wrap breaks between words only, never inside a path, option or URL.
COMMAND = ("docker run --device /dev/davinci0 -v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
           "-v /usr/local/dcmi:/usr/local/dcmi image vllm serve /m --tool-call-parser hermes "
           "https://github.com/vllm-project/vllm-ascend/issues/12345")


def test_no_token_is_ever_broken():
    for width in range(20, 100, 7):
        for text, first, rest in ((COMMAND, "fix:  ", "      "), ("修复：执行 " + COMMAND + " 然后重启。", "", "  ")):
            lines = wrap(text, width, first, rest)
            words = [w for ln in lines for w in ln.split()]
            for token in COMMAND.split():
                assert token in words, (width, token, lines)


def test_the_console_keeps_every_token_of_a_fix_whole(tmp_path):
    """Example hosts whose fixes hold long mounts, paths and URLs, rendered at 40 columns (the narrowest the console
    lays out): each long word of each problem's fix is a word of the output."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers import REPO

    env = {**os.environ, "COLUMNS": "40", "NO_COLOR": "1", "ASCEND_DOCTOR_LANG": "en"}
    checked = 0
    for example in ("container-missing-devices", "cann85-not-sourced", "vllm-ascend-0.14-on-vllm-0.13"):
        r = subprocess.run([sys.executable, "-m", "ascend_doctor", "check", "--replay",
                            str(REPO / "examples" / f"{example}.snapshot.json"), "--json", str(tmp_path / "r.json")],
                           env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 1, r.stderr
        words = set(r.stdout.split())
        for f in json.loads((tmp_path / "r.json").read_text())["findings"]:
            if f["status"] in ("fail", "warn") and f.get("remediation") and not f.get("waived"):
                for token in f["remediation"].split():
                    if len(token) > 12:  # the long ones: paths, options, URLs
                        assert token in words, (example, f["code"], token)
                        checked += 1
    assert checked > 10

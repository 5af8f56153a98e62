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

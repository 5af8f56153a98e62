"""`matrix sync` for the `serve/images` table: what each official image holds, read from the release's own recipe
(ascend_doctor.knowledge.images says what a row claims).

The recipe is read, not run: the Dockerfile's `ARG` defaults are put in place of `$X`/`${X}`, its `RUN` lines are
split into commands at `&&`, `;` and `;;`, and only what decides the packages is kept —

* `FROM …cann:8.2.rc1-910b-ubuntu22.04-py3.11`: the CANN (`9.1.0-beta.1` as it is; `9.2.0_20260930220649`, a dated
  build, is read as 9.2.0)
  and the Python of the base image; `ARG VLLM_TAG=v0.10.2`: the vLLM it clones;
* `pip install NAME 'NAME>=X' …`: those packages; `pip install …/torch_npu-2.9.0…whl`: the wheel's distribution,
  also through a variable the RUN line sets (`PTA_WHEEL="torch_npu-2.9.0.post1%2Bgit…-${PYTHON_TAG}…whl"`; its
  version differs per machine, so it is no pin);
  `pip install -e /vllm-workspace/vllm-ascend/`: the release's requirements.txt;
* `pip uninstall -y NAME …`: removed, on every machine — or on x86_64 only inside
  `if [ "$(uname -i)" = "x86_64" ]; then …; fi`; a later install of the name puts it back;
* `bash SCRIPT` / `sh SCRIPT` / `./SCRIPT.sh`: a script the table does not read — the row is `opaque` (it may
  install more).

Anything else (apt, git, wget, echo) does not change the Python packages and is skipped.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

from packaging.requirements import InvalidRequirement, Requirement

from ascend_doctor.knowledge.images import VARIANTS, image_id
from ascend_doctor.seam.host import normalize_name

_DOCKERFILE = re.compile(r"^Dockerfile(?:\.(a3|310p|a5))?(\.openEuler)?$")
_ARG = re.compile(r"^ARG\s+([A-Za-z_]\w*)=(\"[^\"]*\"|'[^']*'|\S*)", re.M)
_VAR = re.compile(r"\$\{([A-Za-z_]\w*)(?::-[^}]*)?\}|\$([A-Za-z_]\w*)")
_FROM = re.compile(r"^FROM\s+(\S+)", re.M)
# A pre-release stays part of the version (`9.1.0-beta.1`: the 310P images of 0.18.0-0.22.x are built on it, and the
# release rows pin it), a dated build does not (`9.2.0_20260930220649` is 9.2.0).
_CANN_TAG = re.compile(r"cann:(\d+\.\d+\.(?:\d+|rc\d+)(?:-(?:alpha|beta)\.\d+)?)(?:[._-]\w+)*?-(?:910b|a3|310p|a5|950)",
                       re.I)
_PY_TAG = re.compile(r"-py(3\.\d+)\b")
_SPLIT = re.compile(r"&&|;;?|\|\|")
_PIP = re.compile(r"(?:python3?(?:\.\d+)?\s+-m\s+)?pip3?\s+(install|uninstall)\s+(.*)")
_X86_ONLY = re.compile(r"""if\s+\[\s+"?\$\(uname\s+-[im]\)"?\s*==?\s*"?x86_64"?\s*\]""")
_SHELL_SET = re.compile(r"""(?:^|\s)([A-Z_][A-Z0-9_]*)=("[^"]*"|'[^']*'|[^\s;]+)""")
_SCRIPT = re.compile(r"(?:^|\s)(?:bash\s+|sh\s+|\./)\S*\.sh\b")  # run, not `source …/set_env.sh`


def _requirement(text: str) -> Optional[Tuple[str, str]]:
    """(normalised name, specifier) of one requirement (`ray>=2.47.1,<=2.48.0`, `numpy<2.0.0`), read by
    `packaging` as pip reads it; None for what is no requirement (an option, a URL, a path)."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return None
    return normalize_name(req.name), str(req.specifier)


def requirements(text: Optional[str]) -> Dict[str, str]:
    """name -> requirement of a requirements.txt ('' when it pins nothing); comments, options and URLs skipped."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-") or "://" in line:
            continue
        got = _requirement(line)
        if got:
            out[got[0]] = got[1]
    return out


def _logical_lines(text: str) -> List[str]:
    """The Dockerfile's instructions, each on one line (continuations joined, comment lines dropped)."""
    out, cur = [], ""
    for raw in text.splitlines():
        s = raw.strip()
        if s.startswith("#") and not cur:
            continue
        if s.startswith("#"):
            continue  # a comment inside a continued RUN
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        out.append(cur + s)
        cur = ""
    if cur:
        out.append(cur)
    return [x for x in out if x.strip()]


def _substitute(line: str, args: Dict[str, str]) -> str:
    return _VAR.sub(lambda m: args.get(m.group(1) or m.group(2), m.group(0)), line)


def _words(rest: str) -> List[str]:
    return [w.strip("'\"") for w in rest.split()]


def read_recipe(text: str, reqs: Dict[str, str]) -> dict:
    """cann, python, vllm, installs, removes, removes_x86_64 and opaque of one Dockerfile (see the module docstring);
    `reqs` the release's requirements.txt as `requirements` reads it."""
    args: Dict[str, str] = {}
    row: dict = {"cann": None, "python": None, "vllm": None, "installs": {}, "removes": [], "removes_x86_64": [],
                 "opaque": False}
    installs: Dict[str, str] = row["installs"]
    removed: Dict[str, str] = {}  # name -> "all" | "x86_64"
    for line in _logical_lines(text):
        for m in _ARG.finditer(line):
            args[m.group(1)] = m.group(2).strip("\"'")
        line = _substitute(line, args)
        if line.startswith("FROM"):
            image = _FROM.match(line).group(1)
            cann, py = _CANN_TAG.search(image), _PY_TAG.search(image)
            row["cann"] = re.sub("rc", "RC", cann.group(1), flags=re.I) if cann else row["cann"]
            row["python"] = py.group(1) if py else row["python"]
            continue
        if not line.startswith("RUN"):
            continue
        x86 = False
        local: Dict[str, str] = {}  # shell variables the RUN line sets (`PTA_WHEEL="torch_npu-…whl"`): the first
        for part in _SPLIT.split(line[3:]):
            part = _substitute(part.strip(), local)
            for m in _SHELL_SET.finditer(part):
                local.setdefault(m.group(1), m.group(2).strip("\"'"))
            if _X86_ONLY.search(part):
                x86 = True
                part = part[part.find("then") + 4:].strip() if "then" in part else ""
            if part.startswith("fi") or part.startswith("else"):
                x86 = False
                continue
            if _SCRIPT.search(part):
                row["opaque"] = True
                continue
            m = _PIP.search(part)
            if not m:
                continue
            if m.group(1) == "uninstall":
                for w in _words(m.group(2)):
                    if not w.startswith("-"):
                        removed[normalize_name(w)] = "x86_64" if x86 else "all"
                continue
            for name, req in _installed(_words(m.group(2)), reqs).items():
                installs[name] = req
                removed.pop(name, None)
    for name, where in removed.items():
        (row["removes"] if where == "all" else row["removes_x86_64"]).append(name)
        if where == "all":
            installs.pop(name, None)
    row["vllm"] = args.get("VLLM_TAG", "").lstrip("v") or None
    row["removes"].sort()
    row["removes_x86_64"].sort()
    return row


def _installed(words: List[str], reqs: Dict[str, str]) -> Dict[str, str]:
    """name -> requirement of what one `pip install` names."""
    out: Dict[str, str] = {}
    editable = False
    skip_next = False
    for w in words:
        if skip_next:
            skip_next = False
            continue
        if w in ("-e", "--editable"):
            editable = True
            continue
        if w in ("--extra-index", "--extra-index-url", "--index-url", "-i", "-c", "-r", "--constraint"):
            skip_next = True
            continue
        if w.startswith("-"):
            continue
        if editable or w.startswith("/"):
            editable = False
            if "vllm-ascend" in w:
                out.update(reqs)
                out["vllm-ascend"] = ""
            elif "/vllm" in w:
                out["vllm"] = ""
            continue
        wheel = _wheel_name(w)
        if wheel:
            out[wheel] = "wheel"
            continue
        if "://" in w or "$" in w:
            continue
        got = _requirement(w)
        if got:
            out[got[0]] = got[1]
    return out


def _wheel_name(word: str) -> Optional[str]:
    """The distribution a wheel file or URL installs (`…/torch_npu-2.9.0.post1%2Bgit4c901a4-${PYTHON_TAG}-….whl`:
    torch-npu), read from the file name's first dash-separated field; None for any other word. No regex: a URL
    word may be long. Not packaging.utils.parse_wheel_filename: it rejects the recipes' `${PYTHON_TAG}` tags, and
    only the name is needed."""
    if not word.endswith(".whl"):
        return None
    base = word.rsplit("/", 1)[-1]
    name, _, rest = base.partition("-")
    return normalize_name(name) if name and rest[:1].isdigit() and name.replace("_", "a").isalnum() else None


def read_images(read: Callable[[str], Optional[str]], listdir: Callable[[str], Optional[List[str]]], release: str,
                source: str) -> List[dict]:
    """One row per image recipe at the release's root."""
    reqs = requirements(read("requirements.txt"))
    rows = []
    for name in sorted(listdir(".") or []):
        m = _DOCKERFILE.match(name)
        text = read(name) if m else None
        if not text:
            continue
        if not _FROM.search(text):
            continue  # no base image: not a recipe of an image
        variant, os_ = (m.group(1) or "").lower(), "openeuler" if m.group(2) else "ubuntu"
        rows.append({"id": image_id(release, variant, os_), "release": release, "dockerfile": name,
                     "family": VARIANTS[variant][1], "os": os_, **read_recipe(text, reqs),
                     "source": f"{source}:{name} + requirements.txt"})
    return rows


def image_proposals(table, extracted: Dict[str, dict]) -> List:
    """A proposal for each image the table does not record, and for a recorded one read differently."""
    from ascend_doctor.sync.diff import Proposal

    have = {r.id: r.model_dump(exclude_defaults=True) for r in (table.image if table is not None else [])}
    out = []
    for rid, row in extracted.items():
        row = {k: v for k, v in row.items() if v not in (None, [], {}, False, "")}
        old = have.get(rid)
        if old == row:
            continue
        diffs = [] if old is None else [f"{k}: {old.get(k)!r} -> {row.get(k)!r}" for k in row.keys() | old.keys()
                                        if old.get(k) != row.get(k)]
        out.append(Proposal(table="images", id=rid, change="new" if old is None else "changed",
                            differences=sorted(diffs) or [f"{row['dockerfile']} of vllm-ascend {row['release']}"],
                            row=row))
    return out


def merge_images(per_release: Dict[str, Tuple[List[dict], str]]) -> Dict[str, dict]:
    return {row["id"]: row for rows, _ in per_release.values() for row in rows}

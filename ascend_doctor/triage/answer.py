"""The answer a maintainer would write: the most likely root cause first, then the other problems, then what to
paste next.

In order: a finding that declares itself the cause (TRIAGE105: not an Ascend environment); the check a matched error
signature names (its `check`: "Parse dynamic kernel config fail" -> CANN108) when that check fails on the paste; a
failing finding whose component the first error line names (EXPLAINS: an ImportError from vllm/vllm_ascend is
explained by a vLLM/vllm-ascend mismatch, VLLM101/VLLM103; a torch_npu import error by the torch/torch_npu/CANN
pairs); else the first error-level signature (the stack may simply be fine) — and when the check it names could not
run on the paste, `to_confirm` says which `ascend-doctor check --select CODE` to run on the machine; without an error
in the paste, the most severe failing finding, else the only known warning (a harmless line logged as ERROR).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ascend_doctor.i18n import T, join, known

# The checks that judge the installed stack's versions: "the stack checks passing" means one of them passed.
STACK_FAMILIES = ("VLLM", "TORCH", "CANN", "DRV")

# Check code -> what in an error line it explains.
EXPLAINS = {
    "VLLM101": re.compile(r"cannot import name .* from 'vllm|No module named 'vllm|vllm_ascend|Invalid vllm version",
                          re.I),
    "VLLM103": re.compile(r"cannot import name|No module named|Stream resources are insufficient|207008", re.I),
    "VLLM102": re.compile(r"torch|triton|transformers", re.I),
    "TORCH101": re.compile(r"torch_npu|undefined symbol|_C\b", re.I),
    "TORCH102": re.compile(r"torch_npu|libhccl|libascend|aclInit|50000\d", re.I),
    "TORCH103": re.compile(r"python|cp3\d\d|wheel", re.I),
    "CANN106": re.compile(r"507033|drvError|aclInit|dcmi|version mismatch|segmentation fault", re.I),
    "NPU101": re.compile(r"health|Warning|Alarm|Critical|ECC|heartbeat", re.I),
    "NPU103": re.compile(r"out of memory|207018|HBM", re.I),
    "SERVE304": re.compile(r"out of memory|207018|Free memory on device .* is less than desired", re.I),
    "SERVE101": re.compile(r"tool.call.parser|invalid tool", re.I),
    "SERVE102": re.compile(r"reasoning.parser", re.I),
    "SERVE105": re.compile(r"unrecognized arguments", re.I),
}


def unexplained(tb: Any, releases: Optional[tuple[str, str]] = None, stack_passed: bool = True):
    """Why an error no signature and no check explains is still the answer: where it was raised. Raised inside
    vllm_ascend (or vllm) with a stack the checks pass, it is most often a bug of that release fixed in a later one
    (most of the real threads measured in docs/research/triage-2026-12/ were). `releases`: (the paste's vllm-ascend,
    the newest the matrix knows) when the first is older — the release to try, named."""
    frame = tb.frame or ""
    label = repr(tb.label[:160]) if tb.label else T("the traceback's end (the paste stops before its exception line)")
    owner = ("vllm-ascend" if "vllm_ascend/" in frame else "vLLM" if "/vllm/" in frame
             else "torch_npu" if "torch_npu/" in frame else "")
    if not owner:
        return T("no known signature or check explains {label} (lines {lines}{where})", label=label,
                 lines=tb.lines, where=T(", raised in {frame}", frame=frame) if frame else "")
    if stack_passed:
        why = T("no known signature or check explains {label} (lines {lines}); it was raised inside {owner} "
                "({frame}): with the stack checks passing, most such errors are a bug of the installed {owner} "
                "release — search its tracker for the exception line, and try the newest release",
                label=label, lines=tb.lines, owner=owner, frame=frame)
    else:  # no version the stack checks could pass: nothing says the versions fit each other
        why = T("no known signature or check explains {label} (lines {lines}); it was raised inside {owner} "
                "({frame}), and the paste shows no versions the stack checks could judge: paste the environment "
                "(`python collect_env.py`) so a mismatch can be ruled out, then search {owner}'s tracker for the "
                "exception line", label=label, lines=tb.lines, owner=owner, frame=frame)
    if releases and owner in ("vllm-ascend", "vLLM"):
        why = join("", [why, T(" (the paste runs vllm-ascend {installed}; the newest release known here is "
                               "{newest}: `ascend-doctor matrix pins --vllm-ascend {newest}` prints its stack)",
                               installed=releases[0], newest=releases[1])])
    return why


def to_confirm(root: Optional[str], findings: list, matches: list[dict]) -> list[str]:
    """When the cause is a known error line whose signature names a check the paste could not feed (CANN108 reads
    the installed kernels), the command that confirms it on the machine, and what that check lacked here."""
    if root != "TRIAGE102":
        return []
    by_code = {f.code: f for f in findings}
    out = []
    for m in matches:
        f = by_code.get(m["check"] or "")
        if m["kind"] != "error" or m["also_seen"] or f is None or f.status.value != "skip":
            continue
        lacked = "; ".join(f.details.get("lacked") or f.details.get("not_in_paste", [])) or "-"
        out.append(T("to confirm {id} (line {line}): run `ascend-doctor check --select {code}` on the machine and "
                     "paste its output ({code} reads what this paste lacks: {lacked})", id=m["id"], line=m["line"],
                     code=f.code, lacked=lacked))
    return list(dict.fromkeys(out))


def missing_pieces(paste: Any) -> list[str]:
    """What to ask for, in the order a maintainer would."""
    out = []
    if not paste.packages and not paste.versions.get("vllm") and not paste.versions.get("torch"):
        out.append(T("the environment: `python collect_env.py` (vLLM's, run with the interpreter that runs "
                     "`vllm serve`) or `python -m pip list`"))
    else:
        for comp, how in (("vllm", "`pip show vllm`"), ("vllm_ascend", "`pip show vllm-ascend`"),
                          ("torch_npu", "`pip show torch-npu`")):
            if paste.versions.get(comp) or comp in paste.absent:
                continue
            commit = paste.commits.get(comp)
            if commit is not None:  # a source build: which release it builds on is what its version says
                out.append(T("the version {how} reports for the {component} built from commit {commit} (line {line}): "
                             "the release it builds on decides which rules apply", how=how,
                             component=comp.replace("_", "-"), commit=commit.value, line=commit.lines))
            else:
                out.append(T("the {component} version ({how})", component=comp.replace("_", "-"), how=how))
    if paste.npu_smi_text is None:
        out.append(T("`npu-smi info` (the NPUs, their health and the driver version)"))
    if not paste.versions.get("cann") and paste.cann_path is None:
        out.append(T("the CANN version: `cat /usr/local/Ascend/ascend-toolkit/latest/*/ascend_toolkit_install.info`"))
    if paste.serve_argv is None:
        out.append(T("the exact `vllm serve` command line (or the `non-default args:` line of its log)"))
    if not paste.tracebacks and paste.bare_exceptions:
        e = paste.bare_exceptions[0]
        out.append(T("the whole traceback, not only its last line ({value}, line {lines}): from `Traceback (most "
                     "recent call last)` to the exception, the first one of the log", value=repr(e.value[:80]),
                     lines=e.lines))
    elif not paste.tracebacks:
        out.append(T("the error itself: the first traceback of the log, from `Traceback (most recent call last)` "
                     "to the exception line"))
    elif paste.tracebacks[0].cut:
        out.append(T("the rest of the traceback at lines {lines}: the paste stops before its exception line (the last "
                     "line of the traceback, `SomeError: …`, says what failed)", lines=paste.tracebacks[0].lines))
    elif len(paste.tracebacks) > 1 and any("During handling" in (t.label or "") for t in paste.tracebacks):
        out.append(T("the first traceback, not the last (the last one is raised while handling the first)"))
    return out


def _error_lines(paste: Any, matches: list[dict]) -> list[tuple[str, str]]:
    """(text, where) of the errors in the paste: error-level signatures, then each traceback's exception line."""
    out = [(m["excerpt"], T("line {line}", line=m["line"])) for m in matches
           if m["kind"] == "error" and not m["also_seen"]]
    out += [(t.label, T("lines {lines}", lines=t.lines)) for t in paste.tracebacks if t.label]
    return out


# An error's name, as a known issue gives it right before the word "error" ("a **GatherV3** error", "`EZ9999`
# error"): an identifier with a digit, an inner capital or an underscore. Matched on one word at a time (bounded), so
# the text's length never multiplies the work.
_ERROR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,63}")


def named_errors(text: str) -> set:
    """The error names a text gives ("GatherV3" in "may crash with a GatherV3 error")."""
    out, words = set(), text.split()
    for word, after in zip(words, words[1:]):
        name = word.strip("*`'\"()[],.:;")
        if after.lower().startswith("error") and _ERROR_NAME.fullmatch(name) and (
                any(c.isdigit() for c in name) or "_" in name or any(c.isupper() for c in name[1:])):
            out.add(name)
    return out

# Findings about the moment a paste's output was taken, not about the deployment: npu-smi's memory in use (NPU103) and
# the free memory --gpu-memory-utilization asks for (SERVE304) are most often the failing server's own, pasted while
# it ran (held-out vllm-ascend#3548, #4930). Such a finding is the root cause only when it explains an error line
# (EXPLAINS: out of memory), never as the fallback.
SNAPSHOT_OF_A_MOMENT = frozenset({"NPU103", "SERVE304"})


def rank(findings: list, paste: Any, matches: list[dict],
         releases: Optional[tuple[str, str]] = None) -> tuple[Optional[str], str, list[str]]:
    """(root-cause code, why it was chosen, the other problem codes in order); `releases` as for `unexplained`."""
    bad = [f for f in findings if f.status.value == "fail"]
    sev = {"critical": 0, "error": 1, "warning": 2, "info": 3}
    bad.sort(key=lambda f: sev.get(f.severity.value, 4))
    stack_bad = [f for f in bad if not f.code.startswith("TRIAGE")]
    stack_passed = any(f.status.value == "pass" and f.code.startswith(STACK_FAMILIES) for f in findings)
    errors = _error_lines(paste, matches)
    root, why = None, ""
    declared = [f for f in bad if f.root_cause]  # a check that knows it explains the rest (TRIAGE105: not Ascend)
    if declared:
        root, why = declared[0].code, T("the cause the other findings follow from")
    # A signature that names the check judging its cause (CANN108 for "Parse dynamic kernel config fail"): that
    # check failing on the paste is the cause, in the order the errors appear.
    for m in ([] if root else [m for m in matches if m["kind"] == "error" and not m["also_seen"] and m["check"]]):
        f = next((f for f in bad if f.code == m["check"]), None)
        if f is not None:
            root, why = f.code, T("explains the error at line {line}: {text} (signature {id})", line=m["line"],
                                  text=m["excerpt"][:160], id=m["id"])
            break
    for text, where in ([] if root else errors):
        for f in stack_bad:
            pat = EXPLAINS.get(f.code)
            if pat is not None and pat.search(text):
                root, why = f.code, T("explains the error at {where}: {text}", where=where, text=text[:160])
                break
        if root:
            break
    # The release's own refusal of the configuration (TRIAGE106): the check that quotes the same words explains it
    # with the command's values (SERVE318 quotes its assert); else the refusal itself is the answer, not a bug.
    refusal = next((f for f in bad if f.code == "TRIAGE106"), None)
    if root is None and refusal is not None:
        words = str(refusal.details.get("refusal_text") or "")
        f = next((f for f in stack_bad if words and words in f.message), None)
        root, why = (f.code, T("explains the release's refusal: {text}", text=words[:160])) if f is not None else (
            refusal.code, T("the release refuses the configuration in its own words: change what it names"))
    # A known issue the release's own notes list, whose conditions the paste shows (SERVE315 warns): the release
    # explains the failure it reports better than a generic signature or "raised in" does. Not when the notes are
    # another release's (a build no notes cover: vllm-ascend#1563's dev build got 0.9.1rc1's GatherV3 crash for a
    # slow 310P), nor when the paste reports no failure.
    issue = next((f for f in findings if f.code == "SERVE315" and f.status.value == "warn"), None)
    if issue is not None and (issue.details.get("notes_of") != issue.details.get("installed")
                              or not (errors or paste.tracebacks)):
        issue = None
    # Nor when the issue names its error and the paste's errors are another: "may crash with a GatherV3 error" is
    # not the answer to vllm-ascend#1369's UnboundLocalError on 0.9.1rc1. An issue worded without an error's name
    # ("OOMs if the input is too long") is kept.
    named = named_errors(issue.message) if issue is not None else set()
    if named and errors and not any(n.lower() in text.lower() for n in named for text, _ in errors):
        issue = None
    if root is None and issue is not None:
        root, why = issue.code, (T("a known issue of the installed release's notes matches this deployment")
                                 if issue.details.get("known_issues") or not issue.details.get("open_bugs") else
                                 T("a bug the installed release's checklist tracked open matches this deployment"))
    errors_known = [m for m in matches if m["kind"] == "error"]
    if root is None and errors_known and all(m.get("wrapper") for m in errors_known) and paste.tracebacks:
        # ERR99999 says nothing the traceback does not
        root, why = "TRIAGE102", unexplained(paste.tracebacks[0], releases, stack_passed)
    tb = paste.tracebacks[0] if paste.tracebacks else None
    inside = [m for m in errors_known if tb is not None and tb.first <= m["line"] <= tb.last and not m.get("wrapper")]
    if root is None and inside:
        root, why = "TRIAGE102", T("the known error of the traceback at lines {lines} ({id}); nothing in the stack "
                                   "explains it", lines=tb.lines, id=inside[0]["id"])
    if root is None and errors_known:
        root, why = "TRIAGE102", T("the first known error signature in the paste; nothing in the stack explains it")
    timeless = [f for f in bad if f.code not in SNAPSHOT_OF_A_MOMENT]
    if root is None and timeless:
        root, why = timeless[0].code, T("the most severe failing finding (the paste has no error to explain)")
    if root is None and paste.tracebacks:  # an error nothing here knows: say where it was raised and what to do
        tb = paste.tracebacks[0]
        root, why = "TRIAGE102", unexplained(tb, releases, stack_passed)
    warned = [m for m in matches if m["kind"] == "warning" and not m["also_seen"]]
    if root is None and warned:  # e.g. "Failed to import vllm_ascend_C" logged at ERROR level: known, and harmless
        root, why = "TRIAGE102", T("the paste's only known signal is a warning (line {line}): {meaning}",
                                   line=warned[0]["line"], meaning=known(warned[0]["meaning"]))
    # The error signatures are the symptom the root cause explains: not "another problem".
    others = [f.code for f in bad if f.code != root and not (root != "TRIAGE102" and f.code == "TRIAGE102" and why)]
    return root, why, others

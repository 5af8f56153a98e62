"""SERVE209: a local `vllm` (or `vllm_ascend`) directory or file that Python imports instead of the installed one."""

from __future__ import annotations

import posixpath

from ascend_doctor.i18n import T
from ascend_doctor.plugin import check, ev

from ._serve import cmd_or_skip


@check("SERVE209", "serve-vllm-shadowed", severity="error", stage="serve",
       needs=["serve_cmd", "vllm_shadow", "python"])
def vllm_shadowed(ctx):
    """No local `vllm` directory or file comes before the installed vLLM on the server's sys.path

    What it checks: the working directory (for `python -m vllm.entrypoints…`, which puts it first on sys.path) and
    each PYTHONPATH entry, for a `vllm`/`vllm_ascend` directory or `.py` file that is not the installed package.

    Why it matters: Python imports that one instead: `ImportError: cannot import name 'PoolingParams' from 'vllm'
    (unknown location)` from a `vllm` folder in the working directory (vllm-ascend#527: "that was it"; #1747, a vLLM
    checkout copied under benchmarks/), `cannot import name 'LLM' from 'vllm'` for a script under `…/vllm/`
    (#5497), a file named `vllm.py` (vllm#475). The `vllm` console script is not affected by its working directory
    (its own directory comes first), PYTHONPATH always is.

    How to fix: start the server from another directory, or rename the local folder/file; remove the entry from
    PYTHONPATH.
    """
    cmd, skip = cmd_or_skip(ctx)
    if skip:
        return skip
    fact = ctx.fact("vllm_shadow")
    py = ctx.fact("python")
    installed = {posixpath.normpath(d.location) for d in py.distributions if d.location}
    from_cwd = cmd.entry != "vllm serve"  # `python -m …` puts the working directory first; the console script not
    hits = [h for h in fact.hits if posixpath.normpath(h.directory) not in installed
            and (h.where == "PYTHONPATH" or from_cwd)]
    evidence = [ev("sys.path before site-packages", "\n".join(
        [f"{d}: listed" for d in fact.looked] + fact.unreadable) or "(nothing to list)")]
    if hits:
        h = hits[0]
        shown = "; ".join(f"{posixpath.join(x.directory, x.name)} ({x.where})" for x in hits)
        return ctx.fail(T("{shown} comes before the installed package on sys.path: Python imports it instead "
                          "(`cannot import name … from 'vllm' (unknown location)`)", shown=shown), evidence,
                        remediation=T("Start the server from another directory or rename {path}; remove {where} "
                                      "entries that hold a copy of vllm.", path=posixpath.join(h.directory, h.name),
                                      where="PYTHONPATH"))
    if from_cwd and fact.cwd is None:
        return ctx.unknown(T("`python -m` imports from the working directory first, and which directory that is is "
                             "not known (no PWD in the environment)"), evidence)
    return ctx.ok(T("no local vllm or vllm_ascend before the installed packages"), evidence)

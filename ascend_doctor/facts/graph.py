"""The fact graph, declared and checked when the registry loads: which fact each check and probe reads.

A check declares `needs`, a probe `reads` (`ascend_doctor.probes.probe`). When the registry loads, every declared
name must be a fact some probe provides or one a command hands in (`GIVEN`), the probes must not read each other in a
circle, and a check whose own code asks for a fact by name (`ctx.fact("x")`, `ctx.try_fact("x")`) must have declared
it. Each of these is a bug of the check or probe, reported as an InputError naming it — at load, not as a timeout or
an `error` finding halfway through a run. At run time the store and the check context refuse an undeclared read too
(a read through a helper function is only seen then).

Reading a check's code costs ~0.5 ms a check, a fifth of a bare-host `check` for the ~150 built-in ones: so the
registry reads the code of the checks it loads from elsewhere (--checks-dir, plugins) every time, and the built-in
ones are held to the same rule by the test suite (tests/facts/test_graph.py), which is where their code changes.
"""

from __future__ import annotations

import dis
from types import CodeType
from typing import Any, Callable, Iterable, Mapping, Optional

from ascend_doctor.core.errors import InputError
from ascend_doctor.i18n import T

# Facts no probe computes: a command hands them to the store (FactStore.given / preset).
GIVEN = {
    "paste": "triage: what the pasted report says (ascend_doctor.triage.paste)",
    "smoke": "smoke: the live server's answers (ascend_doctor.smoke.stage)",
    "smoke_direct": "smoke --direct-url: the same questions asked past the gateway",
    "fleet_node": "fleet: one node's summary (ascend_doctor.fleet)",
    "fleet_nodes": "fleet: every node's summary, for the checks across nodes",
}

_READERS = frozenset({"fact", "try_fact"})


def literal_reads(func: Callable) -> set[str]:
    """Fact names `func`'s own code asks for with a literal (`ctx.fact("x")`, `ctx.try_fact("x")`), nested
    functions and comprehensions included; read from its bytecode, nothing is run."""
    out: set[str] = set()
    code = getattr(func, "__code__", None)
    todo: list[CodeType] = [code] if code is not None else []
    while todo:
        co = todo.pop()
        pending = False
        for ins in dis.get_instructions(co):
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in _READERS:
                pending = True
                continue
            if pending and ins.opname == "LOAD_CONST" and isinstance(ins.argval, str):
                out.add(ins.argval)
            pending = False
        todo.extend(c for c in co.co_consts if isinstance(c, CodeType))
    return out


def cycle(reads: Mapping[str, Iterable[str]]) -> Optional[list[str]]:
    """A circle of reads (`['a', 'b', 'a']`), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> Optional[list[str]]:
        state[node] = 1
        for nxt in reads.get(node, ()):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for start in sorted(reads):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def check_graph(checks: Iterable[Any], probes: Mapping[str, Callable],
                read_code: Callable[[Any], bool] = lambda c: True) -> None:
    """InputError for the first problem of the declared graph (see the module docstring); the code of the checks
    `read_code` selects is read for undeclared literal reads."""
    known = set(probes) | set(GIVEN)
    for name, func in sorted(probes.items()):
        unknown = [r for r in getattr(func, "reads", ()) if r not in known]
        if unknown:
            raise InputError(T("probe {name} reads {facts}, which no probe provides", name=name,
                               facts=", ".join(unknown)))
    loop = cycle({name: getattr(func, "reads", ()) for name, func in probes.items()})
    if loop:
        raise InputError(T("the probes read each other in a circle: {loop}", loop=" -> ".join(loop)))
    for c in checks:
        unknown = [n for n in c.needs if n not in known]
        if unknown:
            raise InputError(T("check {code} ({where}) needs {facts}, which no probe provides", code=c.code,
                               where=c.source, facts=", ".join(unknown)))
        undeclared = sorted(literal_reads(c.func) - set(c.needs)) if read_code(c) else []
        if undeclared:
            raise InputError(T("check {code} ({where}) reads {facts} without declaring it in needs={needs}",
                               code=c.code, where=c.source, facts=", ".join(undeclared), needs=list(c.needs)))


def summary(func: Callable) -> str:
    """The first sentence of a probe's docstring, re-flowed (what `explain` says the probe does)."""
    para = " ".join((func.__doc__ or "").strip().split("\n\n")[0].split())
    for i, ch in enumerate(para):
        ends = i + 1 == len(para) or para[i + 1] == " "
        if ch == "." and ends and not para[max(0, i - 3):i].endswith(("e.g", "i.e")):
            return para[:i]
    return para.rstrip(".")


def chain(name: str, probes: Mapping[str, Callable], depth: int = 0, seen: Optional[set] = None,
          say: Callable[..., str] = T) -> list[str]:
    """`explain`: the fact, what computes it, and the facts that reads, down to those read off the host (`say`: the
    translating function of the caller, `tr` in the CLI)."""
    seen = set() if seen is None else seen
    pad = "  " * depth
    if name in GIVEN:
        return [f"{pad}{name}: {say('given')} — {GIVEN[name]}"]
    func = probes.get(name)
    if func is None:
        return [f"{pad}{name}: {say('no probe provides it')}"]
    what = say(summary(func)) if func.__doc__ else func.__name__
    reads = tuple(getattr(func, "reads", ()))
    if getattr(func, "derived", False):
        kind = say("derived")
    elif reads:
        kind = say("read off the host, with {facts}", facts=", ".join(reads))
    else:
        kind = say("read off the host")
    lines = [f"{pad}{name} ({func.__module__.rsplit('.', 1)[-1]}.py, {kind}): {what}"]
    if name in seen:
        return lines
    seen.add(name)
    for r in reads:
        lines.extend(chain(r, probes, depth + 1, seen, say))
    return lines

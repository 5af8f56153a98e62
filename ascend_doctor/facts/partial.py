"""Facts that a source shows only in part (a paste): reading a part it does not show is `FactUnavailable`.

A paste that says "CANN 8.2.RC1" gives the `cann` fact a version, but says nothing of NNAL, the toolkit's arch or
whether set_env.sh was sourced; a `pip list` names distributions and versions, never their requirements. Built as
ordinary fact objects, those unseen parts read as *absent* (no NNAL, no requirement broken) and a check would pass or
fail on nothing. So the store hands such a fact to checks wrapped in a `PartialView`: the attributes the source shows
read through, any other raises FactUnavailable("cann.nnal", "the paste does not show NNAL…"), which the evaluator
turns into `unknown` (and triage into "not in the paste"). No check has to know where its facts came from, and a new
check is as safe on a paste as the old ones.

`Shown` is the list of dotted attribute paths the source shows: "version" (and all below it), "active.root" (only
that attribute of `active`), "distributions.name" (that attribute of each item of a list). Methods of the fact's
class run against the view (their reads are guarded too); a property is an attribute like any other.
"""

from __future__ import annotations

import inspect
import types
from typing import Any, Iterable, Optional

from ascend_doctor.core.errors import FactUnavailable

# A tree of shown attributes: name -> None (shown whole) or the tree of what is shown below it.
Tree = dict[str, Optional[dict]]


class Shown:
    """What one partial source shows of one fact, and why the rest is not known."""

    def __init__(self, paths: Iterable[str], reason: str):
        self.tree: Tree = {}
        self.reason = reason
        for path in paths:
            node: Tree = self.tree
            parts = path.split(".")
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                if last:
                    node[part] = None
                    break
                below = node.get(part, {})
                if below is None:  # already shown whole
                    break
                node[part] = below
                node = below

    def view(self, fact: str, value: Any) -> Any:
        """`value` as checks may read it: wrapped when it is an object the tree restricts."""
        return _wrap(value, self.tree, fact, self.reason)


def _wrap(value: Any, tree: Optional[Tree], path: str, reason: str) -> Any:
    if tree is None or value is None or isinstance(value, (str, bytes, int, float, bool, dict)):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v, tree, path, reason) for v in value) if isinstance(value, list) \
            else tuple(_wrap(v, tree, path, reason) for v in value)
    return PartialView(value, tree, path, reason)


# (class, attribute) -> "method" | "class" | "data": what an attribute is, looked up once per class (getattr_static
# is slow, and a check may read a 20,000-item list's `name`s several times).
_KINDS: dict[tuple[type, str], str] = {}


def _kind(cls: type, name: str) -> str:
    kind = _KINDS.get((cls, name))
    if kind is None:
        static = inspect.getattr_static(cls, name, None)
        kind = ("method" if isinstance(static, types.FunctionType)
                else "class" if isinstance(static, (staticmethod, classmethod)) else "data")
        _KINDS[(cls, name)] = kind
    return kind


class PartialView:
    """A fact object seen through what its source shows (see the module docstring). Read-only; what it hands out is
    wrapped once and kept."""

    __slots__ = ("_pv_obj", "_pv_tree", "_pv_path", "_pv_reason", "_pv_seen")

    def __init__(self, obj: Any, tree: Tree, path: str, reason: str):
        object.__setattr__(self, "_pv_obj", obj)
        object.__setattr__(self, "_pv_tree", tree)
        object.__setattr__(self, "_pv_path", path)
        object.__setattr__(self, "_pv_reason", reason)
        object.__setattr__(self, "_pv_seen", {})

    def __getattr__(self, name: str) -> Any:
        obj = object.__getattribute__(self, "_pv_obj")
        if name.startswith("_"):
            return getattr(obj, name)
        kind = _kind(type(obj), name)
        if kind == "method":  # its own reads go through this view
            return types.MethodType(inspect.getattr_static(type(obj), name), self)
        if kind == "class":
            return getattr(obj, name)
        seen = object.__getattribute__(self, "_pv_seen")
        if name in seen:
            return seen[name]
        tree = object.__getattribute__(self, "_pv_tree")
        path = f"{object.__getattribute__(self, '_pv_path')}.{name}"
        reason = object.__getattribute__(self, "_pv_reason")
        if name not in tree:
            raise FactUnavailable(path, reason)
        value = seen[name] = _wrap(getattr(obj, name), tree[name], path, reason)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{object.__getattribute__(self, '_pv_path')} is a fact: read-only")

    @property  # isinstance(view, CannFact) holds, as for the fact itself
    def __class__(self):  # type: ignore[override]
        return type(object.__getattribute__(self, "_pv_obj"))

    def __repr__(self) -> str:
        return f"PartialView({object.__getattribute__(self, '_pv_path')})"

    def __bool__(self) -> bool:
        return True


def if_shown(read, default: Any = None) -> Any:
    """`read()`, or `default` when it reads a part of a fact its source does not show: for a summary (the report
    header's stack) that lists what is known, never for a verdict."""
    try:
        return read()
    except FactUnavailable as exc:
        if "." not in exc.fact:
            raise
        return default

"""Typed records: the data classes every fact, report, snapshot and matrix row is made of.

Why not pydantic models: a static `check` creates about a hundred data types, and `check` must start fast (at most
2.5x the import of click, rich and pydantic; see bench/check_speed.py). Importing `pydantic.BaseModel` costs ~0.16 s
and each model class ~1.7 ms to build, about 0.35 s in all; a `dataclass` still costs ~1 ms per class. A Record class
costs a few microseconds: `__init_subclass__` only records the field names and defaults, and the annotations are
resolved the first time something is validated.

What a Record gives:
  - keyword construction with defaults (mutable defaults are copied per instance) and no checks: the doctor's own
    code builds its facts, and the test suite runs with ASCEND_DOCTOR_STRICT_RECORDS=1, which type-checks every
    construction (no coercion) so a wrong type is caught in a test, not shipped;
  - `model_validate(data)` for what comes from outside (matrix TOML, snapshots, config, reports read back): types
    checked against the annotations, unknown keys refused, Enum/date/datetime read from their JSON forms, per-field
    checks (`Annotated[str, Check(fn)]`, `Field(min_length=..., pattern=...)`) and a record-wide `after_validate`.
    Errors are `ValidationError` with a location (`findings.3.status`) and a message;
  - `model_dump(mode="json")`, `model_dump_json`, `model_copy(update=...)`: the method names are pydantic's, so
    callers read the same as they would with pydantic;
  - `model_json_schema()`: built by pydantic from the record's annotations (`ascend-doctor schema`), off the hot path.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
import types
import typing
from datetime import date, datetime
from enum import Enum
from pathlib import PurePath
from typing import Any, Callable, ClassVar, Dict, Optional, Tuple

_INF = float("inf")
_UnionType = getattr(types, "UnionType", typing.Union)  # `X | Y` annotations (3.10+)
_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<required>"})()


def strict_mode() -> bool:
    """Type-check every construction (the test suite turns it on; production builds records unchecked)."""
    return os.environ.get("ASCEND_DOCTOR_STRICT_RECORDS") == "1"


class Field:
    """A field's default and constraints; the signature follows pydantic's `Field` for the parts used here."""

    __slots__ = ("default", "default_factory", "alias", "description", "min_length", "pattern", "gt", "ge", "name")

    def __init__(self, default: Any = _MISSING, *, default_factory: Optional[Callable[[], Any]] = None,
                 alias: Optional[str] = None, description: str = "", min_length: Optional[int] = None,
                 pattern: Optional[str] = None, gt: Optional[float] = None, ge: Optional[float] = None):
        self.default = default
        self.default_factory = default_factory
        self.alias = alias
        self.description = description
        self.min_length = min_length
        self.pattern = pattern
        self.gt = gt
        self.ge = ge
        self.name = ""

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def make_default(self) -> Any:
        if self.default_factory is not None:
            return self.default_factory()
        d = self.default
        # A mutable default (list, dict, set, record) is copied per instance, deeply, as pydantic does.
        return copy.deepcopy(d) if isinstance(d, (list, dict, set, Record)) else d


class Check:
    """`Annotated[T, Check(fn)]`: `fn(value)` returns the (possibly normalised) value or raises ValueError."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn


class ValidationError(ValueError):
    """Data that does not fit a record. `loc` is the path to the bad value, `kind` a stable short tag."""

    def __init__(self, loc: Tuple[Any, ...], msg: str, kind: str = "value_error", model: str = ""):
        self.loc = tuple(loc)
        self.msg = msg
        self.kind = kind
        self.model = model
        where = ".".join(str(p) for p in self.loc) or "(top level)"
        super().__init__(f"{model + ': ' if model else ''}{where}: {msg}")

    def errors(self) -> list[dict[str, Any]]:
        """Pydantic-shaped error list (one entry: validation stops at the first error)."""
        return [{"loc": self.loc, "msg": self.msg, "type": self.kind}]


def _is_classvar(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


class Record:
    """Base class of the doctor's data types. Subclass keywords: `extra` (unknown keys in validated data: "ignore",
    the default as in pydantic, or "forbid"), `frozen` (assignment raises), `computed` (names of properties that
    `model_dump` includes)."""

    model_fields: ClassVar[Dict[str, Field]] = {}
    __record_extra__: ClassVar[str] = "ignore"
    __record_frozen__: ClassVar[bool] = False
    __record_computed__: ClassVar[Tuple[str, ...]] = ()
    __record_hints__: ClassVar[Optional[Dict[str, Any]]] = None

    def __init_subclass__(cls, extra: Optional[str] = None, frozen: Optional[bool] = None,
                          computed: Optional[Tuple[str, ...]] = None, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        fields: Dict[str, Field] = {}
        for base in reversed(cls.__mro__[1:]):
            fields.update(getattr(base, "model_fields", {}))
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if _is_classvar(annotation) or name.startswith("_"):
                continue
            value = cls.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, Field) else Field(value)
            spec.name = name
            fields[name] = spec
            if name in cls.__dict__:
                delattr(cls, name)  # the instance attribute is always set; a class default would only mislead
        cls.model_fields = fields
        if extra is not None:
            cls.__record_extra__ = extra
        if frozen is not None:
            cls.__record_frozen__ = frozen
        if computed is not None:
            cls.__record_computed__ = tuple(computed)
        cls.__record_hints__ = None

    def __init__(self, **values: Any):
        fields = self.model_fields
        for name, spec in fields.items():
            if name in values:
                value = values.pop(name)
            elif spec.alias is not None and spec.alias in values:
                value = values.pop(spec.alias)
            elif spec.required:
                raise TypeError(f"{type(self).__name__}: missing required field {name!r}")
            else:
                value = spec.make_default()
            object.__setattr__(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__}: unknown field(s) {', '.join(sorted(values))}")
        if strict_mode():
            _check_instance(self)

    # -- behaviour of a value object ----------------------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        if self.__record_frozen__:
            raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.model_fields)

    def __hash__(self) -> int:
        if not self.__record_frozen__:
            raise TypeError(f"unhashable type: {type(self).__name__!r} (not frozen)")
        return hash((type(self),) + tuple(_hashable(getattr(self, n)) for n in self.model_fields))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.model_fields)
        return f"{type(self).__name__}({inner})"

    # -- pydantic-named API -------------------------------------------------------------------------------------------
    def model_dump(self, *, mode: str = "python", by_alias: bool = False, exclude_none: bool = False) -> dict:
        """The record as a dict, nested records included; mode="json" gives only JSON types."""
        return _dump(self, mode == "json", by_alias, exclude_none)

    def model_dump_json(self, *, indent: Optional[int] = None, by_alias: bool = False,
                        exclude_none: bool = False) -> str:
        data = self.model_dump(mode="json", by_alias=by_alias, exclude_none=exclude_none)
        if indent is None:
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return json.dumps(data, ensure_ascii=False, indent=indent)

    def model_copy(self, *, update: Optional[dict] = None, deep: bool = False):
        """A copy with `update` applied (not validated, as in pydantic)."""
        new = copy.deepcopy(self) if deep else copy.copy(self)
        for name, value in (update or {}).items():
            if name not in self.model_fields:
                raise TypeError(f"{type(self).__name__}: unknown field {name!r}")
            object.__setattr__(new, name, value)
        return new

    @classmethod
    def model_validate(cls, data: Any):
        """A record from untrusted data (a dict from JSON/TOML, or an instance), checked against the annotations."""
        return _validate_record(cls, data, ())

    @classmethod
    def model_validate_json(cls, text: str | bytes):
        from ascend_doctor.jsonread import loads

        try:
            data = loads(text)
        except ValueError as exc:
            raise ValidationError((), f"invalid JSON: {exc}", "json_invalid", cls.__name__) from None
        return cls.model_validate(data)

    @classmethod
    def model_json_schema(cls, *, by_alias: bool = True) -> dict:
        """JSON Schema (draft 2020-12) of the record, generated by pydantic from the same annotations."""
        from ascend_doctor.records_schema import json_schema

        return json_schema(cls, by_alias=by_alias)

    def after_validate(self) -> None:
        """Record-wide rules checked after the fields (override; raise ValueError)."""


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


# -- dumping --------------------------------------------------------------------------------------------------------
def _dump_value(value: Any, json_mode: bool, by_alias: bool, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return _dump(value, json_mode, by_alias, exclude_none)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_dump_value(v, json_mode, by_alias, exclude_none) for v in value]
        return items if json_mode or not isinstance(value, tuple) else tuple(items)
    if isinstance(value, dict):
        return {(_json_key(k) if json_mode else k): _dump_value(v, json_mode, by_alias, exclude_none)
                for k, v in value.items()}
    if not json_mode:
        return value
    if isinstance(value, float) and (value != value or value in (_INF, -_INF)):
        return None  # JSON has no NaN/Infinity (pydantic writes null too)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _json_key(key: Any) -> str:
    """JSON object keys are strings: 1 -> "1", an Enum -> its value (validation reads them back)."""
    if isinstance(key, Enum):
        key = key.value
    return key if isinstance(key, str) else json.dumps(key)


def _dump(rec: Record, json_mode: bool, by_alias: bool, exclude_none: bool) -> dict:
    out = {}
    for name, spec in rec.model_fields.items():
        value = getattr(rec, name)
        if exclude_none and value is None:
            continue
        out[spec.alias if by_alias and spec.alias else name] = _dump_value(value, json_mode, by_alias, exclude_none)
    for name in rec.__record_computed__:
        value = getattr(rec, name)
        if not (exclude_none and value is None):
            out[name] = _dump_value(value, json_mode, by_alias, exclude_none)
    return out


# -- validation -----------------------------------------------------------------------------------------------------
def type_hints(cls: type) -> Dict[str, Any]:
    """The record's resolved annotations (with Annotated extras), computed once per class."""
    hints = cls.__dict__.get("__record_hints__")
    if hints is None:
        hints = {}
        for klass in reversed(cls.__mro__):
            module = sys.modules.get(klass.__module__)
            for name, annotation in klass.__dict__.get("__annotations__", {}).items():
                if name not in cls.model_fields:
                    continue
                if isinstance(annotation, str):  # `from __future__ import annotations`: evaluate in its module
                    annotation = eval(annotation, vars(module) if module else {}, dict(vars(klass)))  # noqa: S307
                hints[name] = annotation
        cls.__record_hints__ = hints
    return hints


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def _validate_record(cls: type, data: Any, loc: Tuple[Any, ...], coerce: bool = True) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise ValidationError(loc, f"expected a table/object for {cls.__name__}, got {_describe(data)}", "model_type")
    hints = type_hints(cls)
    values: Dict[str, Any] = {}
    remaining = dict(data)
    for name, spec in cls.model_fields.items():
        if spec.alias is not None and spec.alias in remaining:
            raw = remaining.pop(spec.alias)
        elif name in remaining:
            raw = remaining.pop(name)
        elif spec.required:
            raise ValidationError(loc + (spec.alias or name,), "required key missing", "missing")
        else:
            continue
        values[name] = _validate_field(spec, hints[name], raw, loc + (spec.alias or name,), coerce)
    if remaining and cls.__record_extra__ == "forbid":
        key = sorted(remaining, key=str)[0]
        raise ValidationError(loc + (key,), "unknown key", "extra_forbidden")
    rec = cls.__new__(cls)
    for name, spec in cls.model_fields.items():
        object.__setattr__(rec, name, values[name] if name in values else spec.make_default())
    try:
        rec.after_validate()
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            raise ValidationError(loc + exc.loc, exc.msg, exc.kind) from None
        raise ValidationError(loc, str(exc)) from None
    return rec


def _validate_field(spec: Field, tp: Any, value: Any, loc: Tuple[Any, ...], coerce: bool) -> Any:
    value = _validate(tp, value, loc, coerce)
    if spec.min_length is not None and value is not None and len(value) < spec.min_length:
        raise ValidationError(loc, f"needs at least {spec.min_length} item(s)", "too_short")
    if spec.pattern is not None and isinstance(value, str) and not re.search(spec.pattern, value):
        raise ValidationError(loc, f"{value!r} does not match {spec.pattern!r}", "string_pattern_mismatch")
    if spec.gt is not None and value is not None and not value > spec.gt:
        raise ValidationError(loc, f"must be greater than {spec.gt}", "greater_than")
    if spec.ge is not None and value is not None and not value >= spec.ge:
        raise ValidationError(loc, f"must be at least {spec.ge}", "greater_than_equal")
    return value


def _validate(tp: Any, value: Any, loc: Tuple[Any, ...], coerce: bool) -> Any:  # noqa: C901 - one switch on kinds
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        base, *extras = typing.get_args(tp)
        value = _validate(base, value, loc, coerce)
        for extra in extras:
            if isinstance(extra, Check):
                try:
                    value = extra.fn(value)
                except ValueError as exc:
                    raise ValidationError(loc, str(exc)) from None
        return value
    if origin is typing.Union or origin is _UnionType:
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _validate(arg, value, loc, coerce)
            except ValidationError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise ValidationError(loc, f"expected {_type_name(tp)}, got {_describe(value)}", "union")
    if origin is typing.Literal:
        allowed = typing.get_args(tp)
        if any(value == a and type(value) is type(a) for a in allowed):
            return value
        raise ValidationError(loc, f"expected one of {', '.join(repr(a) for a in allowed)}, got {value!r}",
                              "literal_error")
    if origin in (list, typing.List, set, frozenset, tuple):
        accepted = (list, tuple, set, frozenset) if origin in (set, frozenset) else (list, tuple)
        if not isinstance(value, accepted) or (not coerce and not isinstance(value, origin)):
            raise ValidationError(loc, f"expected a list, got {_describe(value)}", "list_type")
        args = typing.get_args(tp)
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(_validate(args[0], v, loc + (i,), coerce) for i, v in enumerate(value))
            if args and len(args) != len(value):
                raise ValidationError(loc, f"expected {len(args)} items, got {len(value)}", "tuple_length")
            return tuple(_validate(a, v, loc + (i,), coerce) for i, (a, v) in enumerate(zip(args, value))) \
                if args else tuple(value)
        item = args[0] if args else Any
        items = [_validate(item, v, loc + (i,), coerce) for i, v in enumerate(value)]
        return items if origin in (list, typing.List) else origin(items)
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            raise ValidationError(loc, f"expected a table/object, got {_describe(value)}", "dict_type")
        kt, vt = typing.get_args(tp) or (Any, Any)
        out = {}
        for k, v in value.items():
            if coerce and kt is int and isinstance(k, str) and re.fullmatch(r"-?\d+", k):
                k = int(k)  # an int-keyed table written as JSON
            out[_validate(kt, k, loc + (k,), coerce)] = _validate(vt, v, loc + (k,), coerce)
        return out
    if origin is not None:
        raise TypeError(f"records: unsupported annotation {tp!r}")
    if isinstance(tp, type):
        if issubclass(tp, Record):
            if isinstance(value, tp):
                if not coerce:
                    _check_instance(value)
                return value
            if not coerce:
                raise ValidationError(loc, f"expected {tp.__name__}, got {_describe(value)}", "model_type")
            return _validate_record(tp, value, loc, coerce)
        if issubclass(tp, Enum):
            if isinstance(value, tp):
                return value
            if coerce:
                try:
                    return tp(value)
                except ValueError:
                    pass
            allowed = ", ".join(repr(m.value) for m in tp)
            raise ValidationError(loc, f"expected one of {allowed}, got {value!r}", "enum")
        if tp is bool:
            if isinstance(value, bool):
                return value
            raise ValidationError(loc, f"expected true/false, got {_describe(value)}", "bool_type")
        if tp is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            raise ValidationError(loc, f"expected an integer, got {_describe(value)}", "int_type")
        if tp is float:
            if isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
                return float(value) if coerce else value
            raise ValidationError(loc, f"expected a number, got {_describe(value)}", "float_type")
        if tp is datetime:
            if isinstance(value, datetime):
                return value
            if coerce and isinstance(value, str):
                try:
                    return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
                except ValueError:
                    pass
            raise ValidationError(loc, f"expected an ISO 8601 date-time, got {_describe(value)}", "datetime_type")
        if tp is date:
            if isinstance(value, date) and not isinstance(value, datetime):
                return value
            if coerce and isinstance(value, str):
                try:
                    return date.fromisoformat(value)
                except ValueError:
                    pass
            raise ValidationError(loc, f"expected a date (YYYY-MM-DD), got {_describe(value)}", "date_type")
        if tp is type(None):
            if value is None:
                return None
            raise ValidationError(loc, f"expected null, got {_describe(value)}", "none_required")
        if isinstance(value, tp):
            return value
        raise ValidationError(loc, f"expected {_type_name(tp)}, got {_describe(value)}", f"{tp.__name__}_type")
    raise TypeError(f"records: unsupported annotation {tp!r}")


def _check_instance(rec: Record) -> None:
    """Strict mode: every field of a constructed record has its annotated type (no coercion)."""
    cls = type(rec)
    hints = type_hints(cls)
    for name, spec in cls.model_fields.items():
        value = getattr(rec, name)
        try:
            checked = _validate_field(spec, hints[name], value, (name,), coerce=False)
        except ValidationError as exc:
            raise TypeError(f"{cls.__name__}: {exc}") from None
        if checked is not value and checked != value:
            raise TypeError(f"{cls.__name__}.{name}: {value!r} would need conversion to {checked!r}")
    try:
        rec.after_validate()
    except ValueError as exc:
        raise TypeError(f"{cls.__name__}: {exc}") from None

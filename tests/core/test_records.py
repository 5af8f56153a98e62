"""Record: construction, strict mode, model_validate (types, constraints, errors), dumping, copying, schema."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone
from enum import Enum
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

import pytest

from ascend_doctor.records import Check, Field, Record, ValidationError, strict_mode


class Color(str, Enum):
    RED = "red"
    BLUE = "blue"


class Level(int, Enum):
    LOW = 1
    HIGH = 2


class Inner(Record):
    n: int
    label: str = "x"


class Outer(Record):
    name: str
    inner: Inner
    items: List[Inner] = Field(default_factory=list)
    maybe: Optional[Inner] = None


class Defaults(Record):
    tags: list[str] = []
    meta: dict[str, int] = {}
    made: list[int] = Field(default_factory=lambda: [1, 2])
    count: int = 0


class Kinds(Record):
    by_id: Dict[int, str] = Field(default_factory=dict)
    opt: Optional[int] = None
    either: Union[int, str] = 0
    mode: Literal["a", "b"] = "a"
    color: Color = Color.RED
    level: Level = Level.LOW
    day: Optional[date] = None
    when: Optional[datetime] = None
    ratio: float = 0.0
    flag: bool = False
    pair: Tuple[int, str] = (0, "")
    many: Tuple[int, ...] = ()
    anything: Any = None


class Forbid(Record, extra="forbid"):
    a: int = 0


class Aliased(Record, extra="forbid"):
    pass_: int = Field(0, alias="pass")
    note: Optional[str] = None


def _lower(value: str) -> str:
    return value.lower()


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class Constrained(Record):
    names: list[str] = Field(default_factory=lambda: ["x"], min_length=1)
    code: str = Field("AB1", pattern=r"^[A-Z]+\d$")
    size: float = Field(1.0, gt=0)
    count: int = Field(0, ge=0)
    slug: Annotated[str, Check(_lower)] = "s"
    reason: Annotated[str, Check(_not_blank)] = "r"


class Window(Record):
    lo: int = 0
    hi: int = 0

    def after_validate(self) -> None:
        if self.lo > self.hi:
            raise ValueError(f"lo {self.lo} is above hi {self.hi}")


class Windows(Record):
    windows: list[Window] = Field(default_factory=list)


class Point(Record, frozen=True):
    x: int
    y: int = 0
    tags: list[str] = Field(default_factory=list)


class WithComputed(Record, computed=("total", "missing")):
    a: int = 0
    b: int = 0

    @property
    def total(self) -> int:
        return self.a + self.b

    @property
    def missing(self) -> Optional[int]:
        return None


class Stamped(Record):
    when: datetime
    day: date
    color: Color
    by_id: Dict[int, Color] = Field(default_factory=dict)
    note: Optional[str] = None
    nested: Optional[Inner] = None


class SetHolder(Record):
    names: set[str] = Field(default_factory=set)


class HoldsRecordDefault(Record):
    inner: Inner = Inner(n=0)


class Base(Record):
    a: int = 1
    tags: list[str] = Field(default_factory=list, description="base tags")


class Derived(Base, extra="forbid"):
    b: Optional[Inner] = None


# -- construction ----------------------------------------------------------------------------------------------------
def test_conftest_turns_strict_mode_on():
    assert strict_mode()


def test_defaults_are_applied_and_mutable_defaults_copied_per_instance():
    a, b = Defaults(), Defaults()
    assert a.tags == [] and a.meta == {} and a.made == [1, 2] and a.count == 0
    a.tags.append("t")
    a.meta["k"] = 1
    a.made.append(3)
    assert b.tags == [] and b.meta == {} and b.made == [1, 2]
    assert Defaults().tags == []
    assert Defaults.model_fields["tags"].default == []  # the class default itself was not mutated


def test_missing_required_field_is_a_type_error():
    with pytest.raises(TypeError, match="missing required field 'n'"):
        Inner()


def test_unknown_field_is_a_type_error():
    with pytest.raises(TypeError, match="unknown field.*bogus"):
        Inner(n=1, bogus=2)


def test_record_instance_default_is_not_shared():
    a, b = HoldsRecordDefault(), HoldsRecordDefault()
    a.inner.n = 5
    assert b.inner.n == 0


def test_subclass_inherits_fields_and_adds_its_own():
    assert list(Derived.model_fields) == ["a", "tags", "b"]
    d = Derived.model_validate({"a": 2, "b": {"n": 3}})
    assert d.a == 2 and d.tags == [] and d.b == Inner(n=3)
    with pytest.raises(ValidationError, match="unknown key"):
        Derived.model_validate({"zzz": 1})
    assert Base.model_validate({"zzz": 1}) == Base()  # the base class keeps its own extra policy
    assert Derived.model_fields["tags"].description == "base tags"
    assert "a" not in Derived.__dict__ and "a" not in Base.__dict__  # no misleading class attribute left


def test_constructor_accepts_field_name_and_alias():
    assert Aliased(pass_=3).pass_ == 3
    assert Aliased(**{"pass": 4}).pass_ == 4


# -- strict mode -----------------------------------------------------------------------------------------------------
def test_strict_mode_rejects_wrong_scalar_type(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    with pytest.raises(TypeError, match="Inner.*n.*expected an integer"):
        Inner(n="1")
    with pytest.raises(TypeError, match="bool_type|true/false"):
        Kinds(flag=1)
    with pytest.raises(TypeError):
        Kinds(color="red")  # no coercion from the value in strict mode


def test_strict_mode_rejects_dict_where_record_expected(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    with pytest.raises(TypeError, match="expected Inner"):
        Outer(name="o", inner={"n": 1})
    with pytest.raises(TypeError, match="expected Inner"):
        Outer(name="o", inner=Inner(n=1), items=[{"n": 2}])
    with pytest.raises(TypeError, match="expected Inner"):
        Outer(name="o", inner=Inner(n=1), maybe={"n": 2})


def test_strict_mode_rejects_values_that_would_need_conversion(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    with pytest.raises(TypeError):
        Kinds(by_id={"1": "a"})  # JSON-style key: only model_validate converts it
    with pytest.raises(TypeError):
        Kinds(when="2024-01-02T03:04:05Z")
    with pytest.raises(TypeError, match="would need conversion"):
        Constrained(slug="UPPER")  # the Check normalises; a constructed record must already be normal
    with pytest.raises(TypeError, match="list"):
        Kinds(many=[1, 2])  # tuple field, list value


def test_strict_mode_checks_constraints_and_after_validate(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    with pytest.raises(TypeError, match="at least 1"):
        Constrained(names=[])
    with pytest.raises(TypeError, match="lo 5 is above hi 1"):
        Window(lo=5, hi=1)


def test_strict_mode_accepts_correct_values(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    o = Outer(name="o", inner=Inner(n=1), items=[Inner(n=2, label="y")], maybe=None)
    assert o.items[0].label == "y"
    k = Kinds(by_id={1: "a"}, opt=3, either="s", mode="b", color=Color.BLUE, level=Level.HIGH,
              day=date(2024, 1, 2), when=datetime(2024, 1, 2, tzinfo=timezone.utc), ratio=2, flag=True,
              pair=(1, "a"), many=(1, 2, 3), anything=object)
    assert k.ratio == 2 and k.many == (1, 2, 3)
    assert Constrained(slug="lower", names=["a"]).slug == "lower"


def test_without_strict_mode_construction_is_unchecked(monkeypatch):
    monkeypatch.delenv("ASCEND_DOCTOR_STRICT_RECORDS", raising=False)
    assert not strict_mode()
    assert Inner(n="not an int").n == "not an int"
    assert Outer(name="o", inner={"n": 1}).inner == {"n": 1}


def test_set_field_accepts_a_set(monkeypatch):
    monkeypatch.setenv("ASCEND_DOCTOR_STRICT_RECORDS", "1")
    assert SetHolder(names={"a"}).names == {"a"}
    assert SetHolder.model_validate({"names": {"a", "b"}}).names == {"a", "b"}


def test_set_field_reads_a_json_list():
    assert SetHolder.model_validate({"names": ["a", "b", "a"]}).names == {"a", "b"}


# -- model_validate ------------------------------------------------------------------------------------------------
def test_validate_nested_records_and_lists():
    o = Outer.model_validate({"name": "o", "inner": {"n": 1}, "items": [{"n": 2}, {"n": 3, "label": "z"}],
                              "maybe": {"n": 4}})
    assert isinstance(o.inner, Inner) and o.inner == Inner(n=1)
    assert [i.n for i in o.items] == [2, 3] and o.items[1].label == "z"
    assert isinstance(o.maybe, Inner) and o.maybe.n == 4


def test_validate_returns_instance_unchanged():
    i = Inner(n=1)
    assert Inner.model_validate(i) is i
    assert Outer.model_validate({"name": "o", "inner": i}).inner is i


def test_validate_rejects_non_mapping():
    with pytest.raises(ValidationError, match="expected a table/object for Inner") as ei:
        Inner.model_validate([1])
    assert ei.value.kind == "model_type" and ei.value.loc == ()


def test_validate_fills_defaults_with_fresh_copies():
    a = Defaults.model_validate({})
    b = Defaults.model_validate({})
    a.tags.append("t")
    assert b.tags == [] and a.made == [1, 2]


def test_validate_dict_with_int_keys_written_as_json_strings():
    k = Kinds.model_validate({"by_id": {"1": "one", "-2": "minus two", 3: "three"}})
    assert k.by_id == {1: "one", -2: "minus two", 3: "three"}
    with pytest.raises(ValidationError) as ei:
        Kinds.model_validate({"by_id": {"one": "x"}})
    assert ei.value.loc == ("by_id", "one") and ei.value.kind == "int_type"


def test_validate_optional_and_union():
    assert Kinds.model_validate({"opt": None}).opt is None
    assert Kinds.model_validate({"opt": 5}).opt == 5
    with pytest.raises(ValidationError, match="expected an integer"):
        Kinds.model_validate({"opt": "5"})
    assert Kinds.model_validate({"either": 3}).either == 3
    assert Kinds.model_validate({"either": "s"}).either == "s"
    with pytest.raises(ValidationError) as ei:
        Kinds.model_validate({"either": 1.5})
    assert ei.value.kind == "union" and ei.value.loc == ("either",)


def test_validate_literal():
    assert Kinds.model_validate({"mode": "b"}).mode == "b"
    with pytest.raises(ValidationError, match="expected one of 'a', 'b', got 'c'") as ei:
        Kinds.model_validate({"mode": "c"})
    assert ei.value.kind == "literal_error"


def test_validate_enum_from_value():
    k = Kinds.model_validate({"color": "blue", "level": 2})
    assert k.color is Color.BLUE and k.level is Level.HIGH
    assert Kinds.model_validate({"color": Color.RED}).color is Color.RED
    with pytest.raises(ValidationError, match="expected one of 'red', 'blue', got 'green'") as ei:
        Kinds.model_validate({"color": "green"})
    assert ei.value.kind == "enum"


def test_validate_date_and_datetime_from_iso_strings():
    k = Kinds.model_validate({"day": "2024-02-29", "when": "2024-01-02T03:04:05Z"})
    assert k.day == date(2024, 2, 29) and type(k.day) is date
    assert k.when == datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert k.when.utcoffset() == timedelta(0)
    k2 = Kinds.model_validate({"when": "2024-01-02T03:04:05.250000+08:00"})
    assert k2.when.utcoffset() == timedelta(hours=8) and k2.when.microsecond == 250000
    assert Kinds.model_validate({"when": "2024-01-02T03:04:05"}).when.tzinfo is None
    with pytest.raises(ValidationError, match="ISO 8601"):
        Kinds.model_validate({"when": "yesterday"})
    with pytest.raises(ValidationError, match="YYYY-MM-DD"):
        Kinds.model_validate({"day": "2024-02-30"})
    with pytest.raises(ValidationError, match="YYYY-MM-DD"):
        Kinds.model_validate({"day": datetime(2024, 1, 1)})  # a datetime is not a date here


def test_int_accepted_for_float_but_bool_rejected_for_int():
    k = Kinds.model_validate({"ratio": 2})
    assert k.ratio == 2.0 and type(k.ratio) is float
    with pytest.raises(ValidationError, match="expected an integer") as ei:
        Kinds.model_validate({"opt": True})
    assert ei.value.loc == ("opt",)
    with pytest.raises(ValidationError, match="expected a number"):
        Kinds.model_validate({"ratio": True})
    with pytest.raises(ValidationError, match="expected true/false"):
        Kinds.model_validate({"flag": 1})
    with pytest.raises(ValidationError, match="expected a number"):
        Kinds.model_validate({"ratio": "1.5"})


def test_validate_tuples():
    k = Kinds.model_validate({"pair": [1, "a"], "many": [1, 2, 3]})
    assert k.pair == (1, "a") and k.many == (1, 2, 3)
    with pytest.raises(ValidationError, match="expected 2 items, got 3"):
        Kinds.model_validate({"pair": [1, "a", 2]})
    with pytest.raises(ValidationError) as ei:
        Kinds.model_validate({"many": [1, "x"]})
    assert ei.value.loc == ("many", 1)


def test_extra_keys_ignored_by_default_and_refused_with_forbid():
    assert Inner.model_validate({"n": 1, "zzz": 2}) == Inner(n=1)
    assert Forbid.model_validate({"a": 1}).a == 1
    with pytest.raises(ValidationError, match="unknown key") as ei:
        Forbid.model_validate({"a": 1, "zzz": 2})
    assert ei.value.loc == ("zzz",) and ei.value.kind == "extra_forbidden"


def test_alias_read_and_dumped_by_alias():
    a = Aliased.model_validate({"pass": 3})
    assert a.pass_ == 3
    assert Aliased.model_validate({"pass_": 4}).pass_ == 4  # populate by name too
    assert a.model_dump() == {"pass_": 3, "note": None}
    assert a.model_dump(by_alias=True) == {"pass": 3, "note": None}
    assert json.loads(a.model_dump_json(by_alias=True)) == {"pass": 3, "note": None}
    assert Aliased.model_validate_json(a.model_dump_json(by_alias=True)) == a
    with pytest.raises(ValidationError) as ei:
        Aliased.model_validate({"pass": "x"})
    assert ei.value.loc == ("pass",)


def test_missing_required_key_location_and_kind():
    with pytest.raises(ValidationError, match="required key missing") as ei:
        Outer.model_validate({"name": "o", "inner": {}})
    assert ei.value.loc == ("inner", "n") and ei.value.kind == "missing"


def test_field_min_length_pattern_gt_ge():
    assert Constrained.model_validate({}).names == ["x"]
    cases = [({"names": []}, "too_short"), ({"code": "ab1"}, "string_pattern_mismatch"),
             ({"size": 0}, "greater_than"), ({"size": -1.5}, "greater_than"), ({"count": -1}, "greater_than_equal")]
    for data, kind in cases:
        with pytest.raises(ValidationError) as ei:
            Constrained.model_validate(data)
        assert ei.value.kind == kind and ei.value.loc == (next(iter(data)),), data
    ok = Constrained.model_validate({"names": ["a"], "code": "XY9", "size": 0.1, "count": 0})
    assert ok.code == "XY9" and ok.size == 0.1 and ok.count == 0


def test_check_functions_normalise_and_reject():
    assert Constrained.model_validate({"slug": "MiXeD"}).slug == "mixed"
    with pytest.raises(ValidationError, match="reason: must not be blank") as ei:
        Constrained.model_validate({"reason": "   "})
    assert ei.value.loc == ("reason",) and ei.value.kind == "value_error"
    with pytest.raises(ValidationError, match="expected str"):
        Constrained.model_validate({"slug": 5})  # the base type is checked before the Check runs


def test_after_validate_error_is_located_at_the_record():
    assert Window.model_validate({"lo": 1, "hi": 2}) == Window(lo=1, hi=2)
    with pytest.raises(ValidationError, match=r"windows\.1: lo 3 is above hi 2") as ei:
        Windows.model_validate({"windows": [{"lo": 0, "hi": 1}, {"lo": 3, "hi": 2}]})
    assert ei.value.loc == ("windows", 1)


def test_validation_error_shape_and_message():
    with pytest.raises(ValidationError) as ei:
        Outer.model_validate({"name": "o", "inner": {"n": 1}, "items": [{"n": 1}, {"n": 2}, {"n": "three"}]})
    err = ei.value
    assert isinstance(err, ValueError)
    assert err.loc == ("items", 2, "n")
    assert err.errors() == [{"loc": ("items", 2, "n"), "msg": err.msg, "type": "int_type"}]
    assert str(err).startswith("items.2.n: expected an integer, got str 'three'")
    assert str(ValidationError((), "bad", model="M")) == "M: (top level): bad"


# -- dumping ---------------------------------------------------------------------------------------------------------
def _stamped() -> Stamped:
    return Stamped(when=datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=timezone.utc), day=date(2024, 5, 6),
                   color=Color.BLUE, by_id={1: Color.RED, 20: Color.BLUE}, nested=Inner(n=1))


def test_model_dump_json_mode():
    d = _stamped().model_dump(mode="json")
    assert d == {"when": "2024-05-06T07:08:09.123000Z", "day": "2024-05-06", "color": "blue",
                 "by_id": {"1": "red", "20": "blue"}, "note": None, "nested": {"n": 1, "label": "x"}}
    json.dumps(d)  # only JSON types


def test_model_dump_json_mode_keeps_non_utc_offsets():
    s = Stamped(when=datetime(2024, 1, 1, 8, tzinfo=timezone(timedelta(hours=8))), day=date(2024, 1, 1),
                color=Color.RED)
    assert s.model_dump(mode="json")["when"] == "2024-01-01T08:00:00+08:00"


def test_model_dump_python_mode_keeps_objects():
    s = _stamped()
    d = s.model_dump()
    assert d["color"] is Color.BLUE and d["by_id"] == {1: Color.RED, 20: Color.BLUE}
    assert d["when"] == s.when and d["nested"] == {"n": 1, "label": "x"}
    d["by_id"][3] = Color.RED
    assert 3 not in s.by_id  # the dump does not alias the record's containers


def test_model_dump_exclude_none_nested():
    o = Outer(name="o", inner=Inner(n=1), items=[], maybe=None)
    assert o.model_dump(exclude_none=True) == {"name": "o", "inner": {"n": 1, "label": "x"}, "items": []}
    assert "maybe" in o.model_dump()
    assert "note" not in _stamped().model_dump(mode="json", exclude_none=True)


def test_computed_properties_are_dumped():
    w = WithComputed(a=2, b=3)
    assert w.model_dump() == {"a": 2, "b": 3, "total": 5, "missing": None}
    assert w.model_dump(exclude_none=True) == {"a": 2, "b": 3, "total": 5}
    assert json.loads(w.model_dump_json()) == {"a": 2, "b": 3, "total": 5, "missing": None}
    assert "total" not in WithComputed.model_fields


def test_model_dump_json_round_trip():
    s = _stamped()
    text = s.model_dump_json()
    assert "\n" not in text and json.loads(text)["color"] == "blue"
    back = Stamped.model_validate_json(text)
    assert back == s and back.by_id == {1: Color.RED, 20: Color.BLUE} and back.when.tzinfo is not None
    assert Stamped.model_validate_json(text.encode()) == s
    assert json.loads(s.model_dump_json(indent=2)) == json.loads(text) and "\n" in s.model_dump_json(indent=2)


def test_model_dump_json_keeps_non_ascii():
    assert Inner(n=1, label="昇腾").model_dump_json() == '{"n":1,"label":"昇腾"}'


def test_model_validate_json_invalid_json_is_a_validation_error():
    with pytest.raises(ValidationError, match="invalid JSON") as ei:
        Inner.model_validate_json("{not json")
    assert ei.value.kind == "json_invalid" and ei.value.model == "Inner" and ei.value.loc == ()
    with pytest.raises(ValidationError, match="expected a table/object"):
        Inner.model_validate_json("[1, 2]")


# -- copying, equality, frozen ----------------------------------------------------------------------------------------
def test_model_copy_update_and_shallow_vs_deep():
    o = Outer(name="o", inner=Inner(n=1), items=[Inner(n=2)])
    c = o.model_copy(update={"name": "c"})
    assert c.name == "c" and o.name == "o" and c.inner is o.inner and c.items is o.items
    d = o.model_copy(deep=True)
    assert d == o and d.inner is not o.inner and d.items is not o.items
    d.items.append(Inner(n=3))
    d.inner.n = 9
    assert len(o.items) == 1 and o.inner.n == 1
    with pytest.raises(TypeError, match="unknown field 'nope'"):
        o.model_copy(update={"nope": 1})


def test_frozen_record_refuses_assignment_and_is_hashable():
    p = Point(x=1, tags=["a"])
    with pytest.raises(AttributeError, match="frozen"):
        p.x = 2
    assert p.x == 1
    assert hash(p) == hash(Point(x=1, tags=["a"]))
    assert len({p, Point(x=1, tags=["a"]), Point(x=2)}) == 2
    q = p.model_copy(update={"x": 5})  # copies may still differ
    assert q.x == 5 and p.x == 1
    assert Point.model_validate({"x": 3}).y == 0


def test_non_frozen_record_is_mutable_and_unhashable():
    i = Inner(n=1)
    i.n = 2
    assert i.n == 2
    with pytest.raises(TypeError, match="unhashable"):
        hash(i)


def test_equality_and_repr():
    assert Inner(n=1) == Inner(n=1)
    assert Inner(n=1) != Inner(n=2)
    assert Inner(n=1, label="a") != Inner(n=1, label="b")
    assert Inner(n=1) != {"n": 1, "label": "x"}
    assert Window(lo=0, hi=0) != Forbid(a=0)
    assert repr(Inner(n=1)) == "Inner(n=1, label='x')"
    assert repr(Aliased(pass_=2)) == "Aliased(pass_=2, note=None)"


# -- schema ----------------------------------------------------------------------------------------------------------
def test_report_json_schema():
    from ascend_doctor.report import Report

    schema = Report.model_json_schema()
    props = schema["properties"]
    assert {"tool_version", "findings", "counts", "exit_code", "notes"} <= set(props)
    assert props["command"]["description"].startswith("Which subcommand produced it")
    assert "fail_on" in props["exit_code"]["description"]
    assert schema["additionalProperties"] is False
    assert "tool_version" in schema["required"] and "command" not in schema["required"]
    counts = schema["$defs"]["Counts"]["properties"]
    assert "pass" in counts and "pass_" not in counts
    json.dumps(schema)


def test_json_dump_writes_null_for_nan_and_infinity():
    class Metrics(Record):
        p50: float = 0.0
        extra: dict = {}

    m = Metrics(p50=float("nan"), extra={"p95": float("inf"), "ok": 1.5})
    assert json.loads(m.model_dump_json()) == {"p50": None, "extra": {"p95": None, "ok": 1.5}}
    assert m.model_dump()["extra"]["p95"] == float("inf")  # python mode keeps the value

"""Request bodies, declared once (docs/reference/conventions.md, Request bodies).

A body is a `Body`: its fields (`Field`: the wire name, a kind, its limits) and its checks
(rules over several fields). The one declaration gives three things:
- `parse(body, data)`: the values (keyed by each field's `attr`), or VALIDATION_ERROR listing
  every field problem as {field, message} (docs/reference/errors.md, The problem document);
- the refusals of a field with its own error code (`refusal`: that field is checked in its
  declared place and answered alone, as the fairness integration's source and metric are);
- `serializer(body)`: the DRF Serializer class drf-spectacular documents in /v1/schema. It is
  never used to validate.

Why not DRF serializers for validation: one decision through a DRF serializer took 376 us
against 5.9 us for the declared validator (timeit, same decision), and POST /log/batch
validates a thousand of them per request. The strings, the nesting and the numbers of every
body were checked once by the JSON parser (config.inputs.check_document) before any of this
runs; the time bounds by config.inputs.

Kinds: "text" (a string: `max_length`, `allow_blank`, `trim`, `pattern`), "choice" (one of
`choices`), "number" (a finite JSON number, `minimum`/`maximum`, a float unless `keep`),
"integer", "bool", "timestamp" (ISO 8601 -> an aware datetime), "bound" (a `from`/`to`: a date
or a timestamp, kept as sent), "object" (a JSON object: the fields of `body`, or any object of at
most `max_length` bytes as JSON), "list" (of `item`, `min_length`..`max_length` items), "map"
(an object of `item` values under keys of at most `key_max` characters) and "any" (any JSON value,
null included, judged by the service; `schema` documents it).
"""

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import require_object
from config.exceptions import DomainError, ValidationFailed
from config.timeutils import parse_bound, parse_timestamp

MAX_BIGINT = 2**63 - 1
BOUND_HELP = "a date (YYYY-MM-DD, the whole UTC day) or an ISO 8601 timestamp"


class Problem(Exception):
    """One field's problem: its message."""


@dataclass(frozen=True)
class Field:
    """One field of a body. `attr` is its key among the parsed values (the wire name when
    empty); `default` (or `default()` when callable) is its value when absent or null; `alias`
    is a second wire name for the same value (both given must agree)."""

    name: str
    kind: str = "text"
    required: bool = False
    attr: str = ""
    max_length: int = 0
    min_length: int = 0
    allow_blank: bool = False
    trim: bool = False
    pattern: str = ""
    pattern_help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    keep: bool = False
    key_max: int = 0
    default: Any = None
    body: "Body | None" = None
    item: "Field | None" = None
    alias: str | None = None
    refusal: type[DomainError] | None = None
    help: str = ""
    schema: dict[str, Any] | None = None
    # Derived once (the decision path validates a thousand items per batch request).
    key: str = field(init=False, repr=False, compare=False)
    run: "Callable[[Field, Any, str, list], Any]" = field(init=False, repr=False, compare=False)
    regex: "re.Pattern[str] | None" = field(init=False, repr=False, compare=False)
    special: bool = field(init=False, repr=False, compare=False)
    nested: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", self.attr or self.name)
        # Whether a missing value needs more than None, and whether the kind reads the path.
        special = self.required or self.default is not None or self.refusal is not None
        object.__setattr__(self, "special", special)
        object.__setattr__(self, "nested", self.kind in ("object", "list", "map"))
        object.__setattr__(self, "run", KINDS[self.kind])
        object.__setattr__(self, "regex", re.compile(self.pattern) if self.pattern else None)


class Problems:
    """The problems found so far, for a body's checks: `add` one at a path inside the body,
    `has` whether a field already failed (a check skips what it cannot judge)."""

    __slots__ = ("errors", "where")

    def __init__(self, errors: list[dict[str, str]], where: str) -> None:
        self.errors = errors
        self.where = where

    def path(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where and name else (name or self.where or "body")

    def add(self, name: str, message: str) -> None:
        self.errors.append({"field": self.path(name), "message": message})

    def has(self, name: str) -> bool:
        path = self.path(name)
        return any(e["field"] == path or e["field"].startswith((path + ".", path + "[")) for e in self.errors)


# A rule over several fields: reads (and may complete) the parsed values, adds problems.
Check = Callable[[dict[str, Any], Problems], None]


@dataclass(frozen=True)
class Body:
    """A request body (or a nested object): `name` is its OpenAPI component, `unknown=False`
    refuses keys it does not declare (a misspelt filter must not be silently ignored);
    `sparse=True` leaves out of the values a field that is absent, null or empty."""

    name: str
    fields: tuple[Field, ...]
    checks: tuple[Check, ...] = ()
    unknown: bool = True
    sparse: bool = False
    doc: str = ""
    names: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {f.name for f in self.fields} | {f.alias for f in self.fields if f.alias}
        object.__setattr__(self, "names", frozenset(names))


# --- parsing -------------------------------------------------------------------------------------


def failure(errors: list[dict[str, str]]) -> ValidationFailed:
    """VALIDATION_ERROR listing every problem; the detail shows the first five."""
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    return ValidationFailed(detail, errors=errors)


def parse(body: Body, data: Any, *, partial: bool = False) -> dict[str, Any]:
    """A request body's values by the declaration, or VALIDATION_ERROR with every problem (a
    field with a `refusal` raises that error alone, in its declared place). `partial` (a PATCH):
    only the fields the body holds, a null one as None, and none is required."""
    errors: list[dict[str, str]] = []
    values = _object(body, require_object(data), "", errors, partial=partial)
    if errors:
        raise failure(errors)
    return values


def _object(
    body: Body, data: dict[str, Any], where: str, errors: list[dict[str, str]], *, partial: bool = False
) -> dict[str, Any]:
    if not body.unknown and not body.names.issuperset(data):
        known = ", ".join(f.name for f in body.fields)
        for key in data:
            if key not in body.names:
                field = f"{where}.{key}" if where else str(key)
                errors.append({"field": field, "message": f"unknown field (known: {known})"})
    values: dict[str, Any] = {}
    sparse = body.sparse
    counted = len(errors)  # problems so far; a field that fails always leaves None
    for spec in body.fields:
        name = spec.name
        raw = data.get(name)
        if partial and raw is None and name not in data and (spec.alias is None or spec.alias not in data):
            continue
        value = None
        if raw is not None:
            try:
                value = spec.run(
                    spec, raw, (f"{where}.{name}" if where else name) if spec.nested else "", errors
                )
            except Problem as exc:
                errors.append({"field": f"{where}.{name}" if where else name, "message": str(exc)})
        if spec.alias is not None:
            value = _alias(spec, data.get(spec.alias), value, where, errors)
            counted = len(errors) if value is not None else counted
        if value is None and spec.special:
            if len(errors) == counted and not partial:
                if spec.required:
                    # A present null of kind "any" is a value: the service judges it.
                    if spec.kind != "any" or name not in data:
                        errors.append(
                            {"field": f"{where}.{name}" if where else name, "message": "is required"}
                        )
                elif spec.default is not None:
                    value = spec.default() if callable(spec.default) else spec.default
            if spec.refusal is not None and len(errors) > counted:
                shown = "missing" if raw is None else repr(raw) if isinstance(raw, str) else "not a string"
                raise spec.refusal(f"{name} {shown}: {errors[counted]['message']}", errors=errors[counted:])
        if value is None:
            counted = len(errors)
            if sparse:
                continue
        elif sparse and not value:  # an empty string, object or array
            continue
        values[spec.key] = value
    if body.checks:
        problems = Problems(errors, where)
        for check in body.checks:
            check(values, problems)
    return values


def _alias(spec: Field, raw: Any, value: Any, where: str, errors: list[dict[str, str]]) -> Any:
    if raw is None:
        return value
    path = f"{where}.{spec.alias}" if where else str(spec.alias)
    other = _value(spec, raw, path, errors)
    if value is not None and other is not None and value != other:
        errors.append({"field": path, "message": f"differs from {spec.name}; send one of them"})
    return value if value is not None else other


def _value(spec: Field, raw: Any, path: str, errors: list[dict[str, str]]) -> Any:
    """The parsed value of one present, non-null field, or None with its problems added."""
    try:
        return KINDS[spec.kind](spec, raw, path, errors)
    except Problem as exc:
        errors.append({"field": path, "message": str(exc)})
        return None


def _text(spec: Field, raw: Any, path: str, errors: list) -> str:
    if not isinstance(raw, str):
        raise Problem("must be a string")
    value = raw.strip() if spec.trim else raw
    if not spec.allow_blank and not (value if spec.trim else value.strip()):
        raise Problem("must not be blank")
    if spec.max_length and len(value) > spec.max_length:
        raise Problem(f"must be at most {spec.max_length} characters")
    if spec.regex is not None and not spec.regex.fullmatch(value):
        raise Problem(f"must be {spec.pattern_help or 'of the form ' + spec.pattern}")
    return value


def _choice(spec: Field, raw: Any, path: str, errors: list) -> str:
    if not isinstance(raw, str) or raw not in spec.choices:
        raise Problem(f"must be one of: {', '.join(spec.choices)}")
    return raw


def _range_text(spec: Field) -> str:
    if spec.minimum is not None and spec.maximum is not None:
        return f"between {spec.minimum:g} and {spec.maximum:,g}"
    if spec.minimum is not None:
        return f"at least {spec.minimum:g}"
    return f"at most {spec.maximum:,g}"


def _number(spec: Field, raw: Any, path: str, errors: list) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise Problem("must be a number")
    try:
        number = float(raw) + 0.0  # -0.0 is 0.0: a number is stored as the value it denotes
    except OverflowError:  # an integer beyond the range of a double
        number = math.inf
    if not math.isfinite(number):
        raise Problem("must be a number that fits a finite double")
    if (spec.minimum is not None and number < spec.minimum) or (
        spec.maximum is not None and number > spec.maximum
    ):
        raise Problem(f"must be {_range_text(spec)}")
    return raw if spec.keep else number


def _integer(spec: Field, raw: Any, path: str, errors: list) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise Problem("must be an integer")
    high = spec.maximum if spec.maximum is not None else MAX_BIGINT
    if (spec.minimum is not None and raw < spec.minimum) or raw > high:
        raise Problem(f"must be an integer {_range_text(Field('', minimum=spec.minimum, maximum=high))}")
    return raw


def _bool(spec: Field, raw: Any, path: str, errors: list) -> bool:
    if not isinstance(raw, bool):
        raise Problem("must be true or false")
    return raw


def _timestamp(spec: Field, raw: Any, path: str, errors: list) -> Any:
    try:
        value = parse_timestamp(raw) if isinstance(raw, str) else None
    except (OverflowError, ValueError):
        value = None
    if value is None:
        raise Problem("must be an ISO 8601 timestamp in years 1..9999")
    return value


def _bound(spec: Field, raw: Any, path: str, errors: list) -> str:
    if not isinstance(raw, str) or parse_bound(raw, end=False) is None or parse_bound(raw, end=True) is None:
        raise Problem(f"must be {BOUND_HELP} in years 1..9999")
    return raw


def _object_kind(spec: Field, raw: Any, path: str, errors: list) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        raise Problem("must be an object")
    if spec.body is not None:
        before = len(errors)
        values = _object(spec.body, raw, path, errors)
        return values if len(errors) == before else None
    if spec.max_length:
        size = len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if size > spec.max_length:
            raise Problem(f"must be at most {spec.max_length} bytes as JSON ({size} given)")
    return raw


def _list(spec: Field, raw: Any, path: str, errors: list) -> list[Any] | None:
    if not isinstance(raw, list):
        raise Problem("must be an array")
    if len(raw) < spec.min_length or (spec.max_length and len(raw) > spec.max_length):
        raise Problem(f"must hold {spec.min_length} to {spec.max_length} items")
    if spec.item is None:
        return raw
    before = len(errors)
    out = []
    for index, item in enumerate(raw):
        if item is None:
            errors.append({"field": f"{path}[{index}]", "message": "must not be null"})
        else:
            out.append(_value(spec.item, item, f"{path}[{index}]", errors))
    return out if len(errors) == before else None


def _map(spec: Field, raw: Any, path: str, errors: list) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        raise Problem("must be an object")
    if spec.max_length and len(raw) > spec.max_length:
        raise Problem(f"must hold at most {spec.max_length} entries")
    assert spec.item is not None
    before = len(errors)
    out: dict[str, Any] = {}
    for key, item in raw.items():
        name = key.strip() if spec.trim else key
        if not name.strip() or (spec.key_max and len(name) > spec.key_max):
            errors.append({"field": f"{path}.{key}", "message": f"keys are 1 to {spec.key_max} characters"})
            continue
        if item is None:
            continue
        value = _value(spec.item, item, f"{path}.{name}", errors)
        if value is not None:
            out[name] = value
    return out if len(errors) == before else None


def _any(spec: Field, raw: Any, path: str, errors: list) -> Any:
    return raw


KINDS: dict[str, Callable[[Field, Any, str, list], Any]] = {
    "text": _text,
    "choice": _choice,
    "number": _number,
    "integer": _integer,
    "bool": _bool,
    "timestamp": _timestamp,
    "bound": _bound,
    "object": _object_kind,
    "list": _list,
    "map": _map,
    "any": _any,
}


# --- the OpenAPI schema of the same declaration ------------------------------------------------------

_SERIALIZERS: dict[str, tuple[Body, type[serializers.Serializer]]] = {}


def serializer(body: Body) -> type[serializers.Serializer]:
    """The DRF Serializer class that documents `body` in /v1/schema (component `body.name`).
    It exists for the schema only: `parse` is what validates."""
    known = _SERIALIZERS.get(body.name)
    if known is not None:
        if known[0] is not body:
            raise ValueError(f"two request bodies are named {body.name}")
        return known[1]
    attrs: dict[str, Any] = {"__doc__": body.doc or None, "__module__": __name__}
    for spec in body.fields:
        attrs[spec.name] = _schema_field(spec, spec.help)
        if spec.alias:
            attrs[spec.alias] = _schema_field(spec, f"Alias of {spec.name}")
    built = type(body.name, (serializers.Serializer,), attrs)
    _SERIALIZERS[body.name] = (body, built)
    return built


def _schema_field(spec: Field, help_text: str = "", *, item: bool = False) -> serializers.Field:
    options: dict[str, Any] = (
        {} if item else {"required": spec.required, "allow_null": not spec.required or spec.kind == "any"}
    )
    if help_text:
        options["help_text"] = help_text
    if not item and not spec.required and spec.default is not None and not callable(spec.default):
        options["default"] = spec.default
    kind = spec.kind
    if spec.schema is not None:
        return extend_schema_field(spec.schema)(type("Documented", (serializers.JSONField,), {}))(**options)
    if kind == "text":
        text: dict[str, Any] = {"max_length": spec.max_length or None, "allow_blank": spec.allow_blank}
        if spec.pattern:
            return serializers.RegexField(spec.pattern, **text, **options)
        return serializers.CharField(**text, **options)
    if kind == "choice":
        return serializers.ChoiceField(choices=list(spec.choices), **options)
    if kind == "number":
        return serializers.FloatField(min_value=spec.minimum, max_value=spec.maximum, **options)
    if kind == "integer":
        high = spec.maximum if spec.maximum is not None else MAX_BIGINT
        low = int(spec.minimum) if spec.minimum is not None else None
        return serializers.IntegerField(min_value=low, max_value=int(high), **options)
    if kind == "bool":
        return serializers.BooleanField(**options)
    if kind == "timestamp":
        return serializers.DateTimeField(**options)
    if kind == "bound":
        options.setdefault("help_text", BOUND_HELP)
        return serializers.CharField(**options)
    if kind == "object" and spec.body is not None:
        return serializer(spec.body)(**options)
    if kind == "list":
        child = _schema_field(spec.item, item=True) if spec.item is not None else serializers.JSONField()
        return serializers.ListField(
            child=child, min_length=spec.min_length or None, max_length=spec.max_length or None, **options
        )
    if kind == "map" and spec.item is not None:
        return serializers.DictField(child=_schema_field(spec.item, item=True), **options)
    if kind == "object":
        return serializers.DictField(**options)
    return serializers.JSONField(**options)

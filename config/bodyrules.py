"""The field rules of request body models (config.bodymodels): each is an annotation on a
model's field (`Annotated[str, Text(256)]`) that judges the JSON value with the message the
problem document gives, and documents itself in the OpenAPI schema."""

import json
import math
import re
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from config.timeutils import parse_bound, parse_timestamp

# A rule's own message travels as a custom error of this type (its text is the message).
RULE = "rule"


def problem(message: str, *, at: str = "") -> PydanticCustomError:
    """The error a field rule raises: `message` is what the problem document says; `at` a path
    inside the value judged (a key of a map, a field of the model a model rule judges)."""
    return problems([(at, message)])


def problems(found: list[tuple[str, str]]) -> PydanticCustomError:
    """Several problems found by one rule (a map's keys, a rule over several fields), each
    (path inside the value judged, message), listed in that order."""
    return PydanticCustomError(RULE, "{message}", {"message": found[0][1], "at": tuple(found)})


# Python's whitespace (str.isspace, what str.strip removes) as a class of pydantic's Rust regex
# engine: Unicode White_Space plus \x1c-\x1f, the same set for every code point (checked).
_SOLID = r"[^\s\x1c-\x1f]"
# The two ways a Text value is checked (union tags): kept as sent, or judged by Text.judge.
KEPT, JUDGED = "text-kept", "text-judged"


@dataclass(frozen=True)
class Text:
    """A string: at most `max_length` characters (after trimming when `trim`), not blank unless
    `allow_blank`, matching `pattern` (said as `pattern_help`) when given."""

    max_length: int
    allow_blank: bool = False
    trim: bool = False
    pattern: str = ""
    pattern_help: str = ""

    def judge(self, value: str) -> str:
        """The string as kept, or the rule's problem."""
        if self.trim:
            value = value.strip()
        if not self.allow_blank and not value.strip():
            raise problem("must not be blank")
        if len(value) > self.max_length:
            raise problem(f"must be at most {self.max_length} characters")
        if self.pattern and not re.fullmatch(self.pattern, value):
            raise problem(f"must be {self.pattern_help or 'of the form ' + self.pattern}")
        return value

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        judged = core_schema.no_info_after_validator_function(self.judge, core_schema.str_schema(strict=True))
        text = core_schema.union_schema(
            [(self._kept_as_sent(), KEPT), (judged, JUDGED)], mode="left_to_right"
        )
        return core_schema.nullable_schema(text) if type(None) in get_args(source) else text

    def _kept_as_sent(self) -> CoreSchema:
        """pydantic's own check, in Rust, of the strings the rule keeps as they were sent (nearly
        all of them): those cost no Python call. Any other string goes on to `judge` for its
        verdict and its message (body_errors reports the judge's problems only)."""
        if self.trim:
            bare = rf"{_SOLID}(?:[\s\S]*{_SOLID})?"  # nothing to trim
            shape: str | None = rf"^(?:{bare})?$" if self.allow_blank else rf"^{bare}$"
        else:
            shape = None if self.allow_blank else _SOLID  # a search: not blank
        kept = core_schema.str_schema(strict=True, max_length=self.max_length, pattern=shape)
        if not self.pattern:
            return kept
        # the pattern by Python's own engine, as judge reads it (re.fullmatch)
        own = core_schema.str_schema(pattern=rf"^(?:{self.pattern})\Z", regex_engine="python-re")
        return core_schema.chain_schema([kept, own])

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out: JsonSchemaValue = {"type": "string", "maxLength": self.max_length}
        if self.pattern:
            out["pattern"] = self.pattern
        return {"anyOf": [out, {"type": "null"}]} if schema["type"] == "nullable" else out


@dataclass(frozen=True)
class Choice:
    """One of `choices` (a string)."""

    choices: tuple[str, ...]

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        def check(value: object) -> object:
            if value is not None and (not isinstance(value, str) or value not in self.choices):
                raise problem(f"must be one of: {', '.join(self.choices)}")
            return value

        return core_schema.no_info_before_validator_function(check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        handler.resolve_ref_schema(out)["enum"] = list(self.choices)
        return out


@dataclass(frozen=True)
class Judged:
    """Any JSON value, null included, passed to the service, whose own rule judges it (with an
    error code of its own); `schema` is what /v1/schema shows for it."""

    schema: dict[str, Any]

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return dict(self.schema)


MAX_BIGINT = 2**63 - 1
BOUND_HELP = "a date (YYYY-MM-DD, the whole UTC day) or an ISO 8601 timestamp"


class PlainRule:
    """A rule that judges the raw JSON value itself (`check`) and documents itself (`schema`);
    None (a PATCH's null, a default) passes unjudged."""

    def check(self, raw: object) -> object:
        """The value as kept (None passes), or the rule's problem."""
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:  # Any: a JSON schema fragment
        raise NotImplementedError

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(self.check)

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return self.schema()


def _range_text(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"between {minimum:g} and {maximum:,g}"
    if minimum is not None:
        return f"at least {minimum:g}"
    return f"at most {maximum:,g}"


@dataclass(frozen=True)
class Number(PlainRule):
    """A finite JSON number (not true or false) within `minimum`..`maximum`, as a float (-0.0 as
    0.0: a number is kept as the value it denotes), or as sent when `keep`."""

    minimum: float | None = None
    maximum: float | None = None
    keep: bool = False

    def check(self, raw: object) -> object:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise problem("must be a number")
        try:
            number = float(raw) + 0.0
        except OverflowError:  # an integer beyond the range of a double
            number = math.inf
        if not math.isfinite(number):
            raise problem("must be a number that fits a finite double")
        if (self.minimum is not None and number < self.minimum) or (
            self.maximum is not None and number > self.maximum
        ):
            raise problem(f"must be {_range_text(self.minimum, self.maximum)}")
        return raw if self.keep else number

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "number"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out


@dataclass(frozen=True)
class Integer(PlainRule):
    """A JSON integer (not true or false) within `minimum`..`maximum` (a 64-bit column's at most)."""

    minimum: int | None = None
    maximum: int = MAX_BIGINT

    def check(self, raw: object) -> object:
        if raw is None:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise problem("must be an integer")
        if (self.minimum is not None and raw < self.minimum) or raw > self.maximum:
            raise problem(f"must be an integer {_range_text(self.minimum, self.maximum)}")
        return raw

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer", "maximum": self.maximum}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


@dataclass(frozen=True)
class Timestamp(PlainRule):
    """An ISO 8601 timestamp (a naive one is UTC) -> an aware datetime in UTC."""

    def check(self, raw: object) -> object:
        if raw is None:
            return None
        try:
            value = parse_timestamp(raw) if isinstance(raw, str) else None
        except (OverflowError, ValueError):
            value = None
        if value is None:
            raise problem("must be an ISO 8601 timestamp in years 1..9999")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "date-time"}


@dataclass(frozen=True)
class Bound(PlainRule):
    """A `from`/`to` bound (docs/reference/conventions.md, Time bounds), kept as sent."""

    def check(self, raw: object) -> object:
        if raw is None:
            return None
        if (
            not isinstance(raw, str)
            or parse_bound(raw, end=False) is None
            or parse_bound(raw, end=True) is None
        ):
            raise problem(f"must be {BOUND_HELP} in years 1..9999")
        return raw

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "description": BOUND_HELP}


@dataclass(frozen=True)
class JsonObject(PlainRule):
    """Any JSON object of at most `max_bytes` bytes as compact UTF-8 JSON (0: no limit), kept as sent."""

    max_bytes: int = 0

    def check(self, raw: object) -> object:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise problem("must be an object")
        if self.max_bytes:
            size = len(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
            if size > self.max_bytes:
                raise problem(f"must be at most {self.max_bytes} bytes as JSON ({size} given)")
        return raw

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": True}


@dataclass(frozen=True)
class Items:
    """An array of `min_length`..`max_length` items, none null; each judged by the item's own
    annotation (`list[Annotated[str, Text(256)]]`)."""

    min_length: int
    max_length: int

    def _item_problem(self, item: object) -> str | None:
        return "must not be null" if item is None else None

    def _check(self, raw: object) -> object:
        if raw is None:
            return None
        if not isinstance(raw, list):
            raise problem("must be an array")
        if not self.min_length <= len(raw) <= self.max_length:
            raise problem(f"must hold {self.min_length} to {self.max_length} items")
        found = [(f"[{i}]", said) for i, item in enumerate(raw) if (said := self._item_problem(item))]
        if found:
            raise problems(found)
        return raw

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        out = handler(schema)
        target = handler.resolve_ref_schema(out)
        target["minItems"], target["maxItems"] = self.min_length, self.max_length
        return out


@dataclass(frozen=True)
class Objects(Items):
    """An array of `min_length`..`max_length` JSON objects, kept as sent: each is judged later,
    on its own (a batch's items)."""

    def _item_problem(self, item: object) -> str | None:
        if isinstance(item, dict):
            return None
        return "must not be null" if item is None else "must be an object"

    def __get_pydantic_core_schema__(self, source: type[Any], handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(self._check)

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "array",
            "minItems": self.min_length,
            "maxItems": self.max_length,
            "items": {"type": "object", "additionalProperties": True},
        }


__all__ = [
    "BOUND_HELP",
    "JUDGED",
    "KEPT",
    "RULE",
    "Bound",
    "Choice",
    "Integer",
    "Items",
    "JsonObject",
    "Judged",
    "Number",
    "Objects",
    "PlainRule",
    "Text",
    "Timestamp",
    "problem",
    "problems",
]
